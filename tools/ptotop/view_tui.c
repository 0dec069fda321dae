// SPDX-License-Identifier: MIT
/*
 * ptotop's interactive screen (ncurses): a title line, a block per device
 * with a utilisation bar and history graph per core type, the process
 * table and a key hint line.  Designed for 80x24 first; wider or taller
 * terminals get longer graphs and more rows.
 */
#include <curses.h>
#include <assert.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <sys/ioctl.h>

#include "view.h"

#define BAR_WIDTH	20
#define MIN_GRAPH	8

/* The device lines are written out for these four types and rings. */
static_assert(PTO_UAPI_NUM_WORKER_TYPES == 4, "C V A X: one per type");
static_assert(PTO_NUM_RINGS == 4, "a column per ring");

struct ui {
	struct pt_state *st;
	bool paused;
	bool help;
	uint64_t next_ns;	/* CLOCK_MONOTONIC of the next refresh */
	/* the selected row, by key so that it follows its process */
	char sel[sizeof(((struct pt_proc *)0)->key)];
	int sel_pid;
	bool rings;		/* the selected row's task rings are shown */
	int scroll;		/* first line of the task ring view shown */
};

/* The lines of the task ring view, made before it is drawn to scroll. */
#define VIEW_LINES	96
#define VIEW_WIDTH	256

struct view_line {
	char text[VIEW_WIDTH];
	int color;		/* a C_* pair, or 0 */
	bool bold;
};

struct view {
	struct view_line line[VIEW_LINES];
	int n;
};

enum { C_LOW = 1, C_MID, C_HIGH, C_TITLE };

#define KEY_ESC		27

/* Short names for the compact device lines. */
static const char *const type_short[PTO_UAPI_NUM_WORKER_TYPES] = {
	[PTO_UAPI_WORKER_CUBE] = "CUBE",
	[PTO_UAPI_WORKER_VECTOR] = "VEC",
	[PTO_UAPI_WORKER_AICPU] = "AICPU",
	[PTO_UAPI_WORKER_ACCEL] = "ACCEL",
};

/* History graph levels, from idle to full. */
static const char spark[] = "_.:-=+*#";

/* Print at most the rest of the line, never wrapping. */
/*
 * How many bytes of s fill at most cols columns, never half a character.
 * In a UTF-8 locale (ui_init()) a character takes the columns wcwidth()
 * says (two for CJK); elsewhere curses shows each byte, one column.
 */
static int fitting_bytes(const char *s, int cols)
{
	mbstate_t st;
	int used = 0, w = 0, cw;
	size_t n;
	wchar_t wc;

	if (MB_CUR_MAX == 1)
		return (int)strnlen(s, (size_t)cols);
	memset(&st, 0, sizeof(st));
	while (s[used]) {
		n = mbrtowc(&wc, s + used, MB_CUR_MAX, &st);
		if (n == (size_t)-1 || n == (size_t)-2) {
			memset(&st, 0, sizeof(st));
			n = 1;		/* curses shows the byte escaped */
			cw = 1;
		} else {
			cw = wcwidth(wc) < 0 ? 1 : wcwidth(wc);
		}
		if (w + cw > cols)
			break;
		w += cw;
		used += (int)n;
	}
	return used;
}

static void put(int y, int x, const char *s)
{
	if (y < 0 || y >= LINES || x >= COLS)
		return;
	mvaddnstr(y, x, s, fitting_bytes(s, COLS - x));
}

static void put_bold(int y, int x, const char *s)
{
	attron(A_BOLD);
	put(y, x, s);
	attroff(A_BOLD);
}

/* snprintf() at the end of the text buf already holds. */
static void appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static int level_color(double v)
{
	return v >= 0.85 ? C_HIGH : v >= 0.5 ? C_MID : C_LOW;
}

/* ---- devices ------------------------------------------------------------- */

static void draw_title(struct ui *ui)
{
	const struct pt_state *st = ui->st;
	char buf[256], when[16], every[24];

	pt_fmt_clock(when, sizeof(when), st->cur.real_ns);
	/* 0.01s .. 86400s, never 3.6e+03s */
	if (st->delay_s < 10)
		snprintf(every, sizeof(every), "%.2g", st->delay_s);
	else
		snprintf(every, sizeof(every), "%.0f", st->delay_s);
	snprintf(buf, sizeof(buf),
		 "ptotop %s  every %ss  sort:%s%s  dev:%s%s", when,
		 every, pt_sort_keys[st->sort].title,
		 st->reverse ? "(rev)" : "",
		 st->device_filter[0] ? st->device_filter : "all",
		 ui->paused ? "  [PAUSED]" : "");
	put_bold(0, 0, buf);
}

static void draw_bar(int y, int x, double v)
{
	int i, n = isnan(v) ? 0 : (int)lround(v * BAR_WIDTH);

	put(y, x, "[");
	if (!isnan(v))
		attron(COLOR_PAIR(level_color(v)));
	for (i = 0; i < BAR_WIDTH; i++)
		put(y, x + 1 + i, i < n ? "|" : " ");
	if (!isnan(v))
		attroff(COLOR_PAIR(level_color(v)));
	put(y, x + 1 + BAR_WIDTH, "]");
}

/* The newest samples that fit in width columns, oldest on the left. */
static void draw_graph(int y, int x, int width, const struct pt_device *d,
		       int t)
{
	int i, n = d->hist_len < width ? d->hist_len : width;
	char c[2] = { 0 };

	for (i = 0; i < n; i++) {
		float v = d->hist[t][d->hist_len - n + i];
		int lvl = (int)lroundf(v * (sizeof(spark) - 2));

		c[0] = spark[lvl < 0 ? 0 : lvl > 7 ? 7 : lvl];
		attron(COLOR_PAIR(level_color(v)));
		put(y, x + i, c);
		attroff(COLOR_PAIR(level_color(v)));
	}
}

static void device_summary(const struct pt_device *d, char *buf, size_t len)
{
	char used[16], total[16] = "-";

	pt_fmt_bytes(used, sizeof(used), d->mem_used);
	if (d->mem_total)
		pt_fmt_bytes(total, sizeof(total), d->mem_total);
	snprintf(buf, len, "%-5s cores %uC %uV %uA %uX  procs %d",
		 d->name, d->cores[0], d->cores[1], d->cores[2], d->cores[3],
		 d->nprocs);
	appendf(buf, len, "  mem %s/%s  done %llu  fail %llu", used, total,
		(unsigned long long)d->tasks_done,
		(unsigned long long)d->tasks_failed);
}

/* The core types a device has, each taking a line in the full block. */
static int device_types(const struct pt_device *d)
{
	int t, n = 0;

	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		n += d->cores[t] > 0;
	return n;
}

/* "  cube   [|||||     ]  25.0% _.:-=" */
static void draw_type_line(int y, const struct pt_device *d, int t)
{
	int gx = 9 + BAR_WIDTH + 2 + 8;
	char buf[64];

	snprintf(buf, sizeof(buf), "  %-6s", pt_type_name(t));
	put(y, 0, buf);
	draw_bar(y, 9, d->util[t]);
	if (isnan(d->util[t]))
		snprintf(buf, sizeof(buf), "    -  ");
	else
		snprintf(buf, sizeof(buf), " %5.1f%% ", 100 * d->util[t]);
	put(y, 9 + BAR_WIDTH + 2, buf);
	if (COLS - gx >= MIN_GRAPH)
		draw_graph(y, gx, COLS - gx, d, t);
}

/* Full block: summary, then bar and history per core type present. */
static int draw_device_full(int y, const struct pt_device *d)
{
	char buf[256];
	int t;

	device_summary(d, buf, sizeof(buf));
	put_bold(y++, 0, buf);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		if (d->cores[t])
			draw_type_line(y++, d, t);
	return y;
}

/* Compact: one line per device when the screen is short. */
static int draw_device_compact(int y, const struct pt_device *d)
{
	char buf[256];
	int t;

	snprintf(buf, sizeof(buf), "%-5s", d->name);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		if (!d->cores[t])
			continue;
		if (isnan(d->util[t]))
			appendf(buf, sizeof(buf), " %s:%u -", type_short[t],
				d->cores[t]);
		else
			appendf(buf, sizeof(buf), " %s:%u %.0f%%",
				type_short[t], d->cores[t], 100 * d->util[t]);
	}
	appendf(buf, sizeof(buf), "  procs %d", d->nprocs);
	put(y, 0, buf);
	return y + 1;
}

/* Full blocks if they all fit in budget lines, else compact lines. */
static int draw_devices(struct ui *ui, int y, int budget)
{
	const struct pt_state *st = ui->st;
	int i, need = 0;
	bool full;

	for (i = 0; i < st->cur.ndevs; i++)
		if (pt_device_visible(st, &st->cur.devs[i]))
			need += 1 + device_types(&st->cur.devs[i]);
	full = need <= budget;
	for (i = 0; i < st->cur.ndevs && y < LINES - 3; i++) {
		const struct pt_device *d = &st->cur.devs[i];

		if (!pt_device_visible(st, d))
			continue;
		y = full ? draw_device_full(y, d) : draw_device_compact(y, d);
	}
	return y;
}

/* ---- processes ----------------------------------------------------------- */

static void draw_table_header(struct ui *ui, int y)
{
	static const struct { int sort; int x; const char *title; } cols[] = {
		{ PT_SORT_PID, 0, "    PID" },
		{ PT_SORT_USER, 8, "USER" },
		{ PT_SORT_DEVICE, 16, "DEV" },
		{ PT_SORT_TASKS, 22, "TASKS/S" },
		{ PT_SORT_INFLIGHT, 31, "INFLT" },
		{ -1, 37, "TSK% HEP% DEP% TMP%" },
		{ PT_SORT_STALLS, 57, "STALLS" },
		{ PT_SORT_FAILED, 64, "FAIL" },
		{ PT_SORT_COMMAND, 69, "COMMAND" },
	};
	size_t i;

	attron(A_REVERSE);
	move(y, 0);
	clrtoeol();
	for (i = 0; i < (size_t)COLS; i++)
		put(y, i, " ");
	for (i = 0; i < ARRAY_SIZE(cols); i++) {
		bool sorted = cols[i].sort == (int)ui->st->sort;

		if (sorted)
			attron(A_BOLD | A_UNDERLINE);
		put(y, cols[i].x, cols[i].title);
		if (sorted)
			attroff(A_BOLD | A_UNDERLINE);
	}
	attroff(A_REVERSE);
}

/* The program's name without its directory, then its arguments. */
static const char *short_command(const char *cmd)
{
	size_t argv0 = strcspn(cmd, " ");
	const char *slash = memrchr(cmd, '/', argv0);

	return slash ? slash + 1 : cmd;
}

/* Tasks per second in 8 columns; thousands beyond 10 million. */
static void fmt_rate(char *buf, size_t len, double rate)
{
	if (isnan(rate))
		snprintf(buf, len, "%8s", "-");
	else if (rate < 1e7)
		snprintf(buf, len, "%8.1f", rate);
	else
		snprintf(buf, len, "%7.0fk", rate / 1e3);
}

/* A ring's occupancy in percent, 4 columns. */
static void fmt_ring(char *buf, size_t len, const struct pt_proc *p, int r)
{
	double v = pt_ring_occupancy(p, r);

	if (isnan(v))
		snprintf(buf, len, "%4s", "-");
	else
		snprintf(buf, len, "%4.0f", 100 * v);
}

static void draw_proc(int y, const struct pt_proc *p, bool selected)
{
	bool failed = p->failed || !strcmp(p->state, "failed");
	char buf[512], rate[16], ring[PTO_NUM_RINGS][8];
	int r, attr = (failed ? COLOR_PAIR(C_HIGH) : 0) |
		      (selected ? A_REVERSE : 0);

	fmt_rate(rate, sizeof(rate), p->tasks_per_s);
	for (r = 0; r < PTO_NUM_RINGS; r++)
		fmt_ring(ring[r], sizeof(ring[r]), p, r);
	snprintf(buf, sizeof(buf),
		 "%7d %-7.7s %-5.5s %s %5llu %s %s %s %s %6llu %4llu %s",
		 p->pid, p->user, p->device, rate,
		 (unsigned long long)p->in_flight, ring[0], ring[1], ring[2],
		 ring[3], (unsigned long long)p->stalls,
		 (unsigned long long)p->failed, short_command(p->command));
	attron(attr);
	put(y, 0, buf);
	attroff(attr);
}

/* ---- selection ----------------------------------------------------------- */

/*
 * The selected row is the one whose key is ui->sel, or the first visible
 * row when that one is not in the sample (none chosen yet, or it exited).
 */
static int selected_pos(const struct ui *ui)
{
	const struct pt_state *st = ui->st;
	int i, pos = 0;

	for (i = 0; i < st->cur.nprocs; i++) {
		const struct pt_proc *p = &st->cur.procs[i];

		if (!pt_proc_visible(st, p))
			continue;
		if (!strcmp(p->key, ui->sel))
			return pos;
		pos++;
	}
	return 0;
}

/* The visible row at pos, or the last one before it; NULL if none. */
static const struct pt_proc *visible_at(const struct pt_state *st, int pos)
{
	const struct pt_proc *last = NULL;
	int i;

	for (i = 0; i < st->cur.nprocs; i++) {
		if (!pt_proc_visible(st, &st->cur.procs[i]))
			continue;
		last = &st->cur.procs[i];
		if (pos-- <= 0)
			break;
	}
	return last;
}

static void select_row(struct ui *ui, const struct pt_proc *p)
{
	if (!p)
		return;
	snprintf(ui->sel, sizeof(ui->sel), "%s", p->key);
	ui->sel_pid = p->pid;
}

/* Move the selection by delta visible rows, stopping at either end. */
static void move_selection(struct ui *ui, int delta)
{
	int pos = selected_pos(ui) + delta;

	select_row(ui, visible_at(ui->st, pos < 0 ? 0 : pos));
}

/* The selected row for the task ring view: that process or nothing. */
static const struct pt_proc *find_selected(const struct ui *ui)
{
	const struct pt_state *st = ui->st;
	int i;

	for (i = 0; i < st->cur.nprocs; i++)
		if (pt_proc_visible(st, &st->cur.procs[i]) &&
		    !strcmp(st->cur.procs[i].key, ui->sel))
			return &st->cur.procs[i];
	return NULL;
}

/* ---- the process table --------------------------------------------------- */

static int visible_skipped(const struct pt_state *st)
{
	int i, n = 0;

	for (i = 0; i < st->cur.nskipped; i++)
		n += pt_skipped_visible(st, &st->cur.skipped[i]);
	return n;
}

/* Runtimes whose pages ptotop cannot read: say so, or they just vanish. */
static void draw_skipped(int y, const struct pt_state *st, int n)
{
	const struct pt_skipped_page *sp = NULL;
	char buf[160];
	int i;

	for (i = 0; i < st->cur.nskipped && !sp; i++)
		if (pt_skipped_visible(st, &st->cur.skipped[i]))
			sp = &st->cur.skipped[i];
	if (n == 1)
		snprintf(buf, sizeof(buf),
			 "pid %d not shown: stats page version %u, ptotop reads %d",
			 sp->pid, sp->version,
			 PTO_STATSPAGE_VERSION);
	else
		snprintf(buf, sizeof(buf),
			 "%d runtimes not shown: stats pages of other versions (ptotop -b lists them)",
			 n);
	attron(COLOR_PAIR(C_MID));
	put(y, 0, buf);
	attroff(COLOR_PAIR(C_MID));
}

/* The rows that fit, scrolled so that the selected one is among them. */
static void draw_procs(struct ui *ui, int y)
{
	const struct pt_state *st = ui->st;
	int i, pos = 0, first, sel = selected_pos(ui);
	int notes = visible_skipped(st), bottom = LINES - 1 - !!notes;

	draw_table_header(ui, y++);
	first = sel >= bottom - y ? sel - (bottom - y) + 1 : 0;
	for (i = 0; i < st->cur.nprocs && y < bottom; i++) {
		if (!pt_proc_visible(st, &st->cur.procs[i]))
			continue;
		if (pos++ >= first)
			draw_proc(y++, &st->cur.procs[i], pos - 1 == sel);
	}
	if (!pos)
		put(y++, 2, st->device_filter[0] ?
		    "No processes on this device (f: change filter)." :
		    "No processes are using PTO right now.");
	if (notes)
		draw_skipped(y, st, notes);
}

/* ---- the task ring view -------------------------------------------------- */

static struct view_line *view_add(struct view *v, int color, bool bold,
				  const char *fmt, ...)
{
	struct view_line *l;
	va_list ap;

	if (v->n == VIEW_LINES)
		return NULL;
	l = &v->line[v->n++];
	l->color = color;
	l->bold = bold;
	va_start(ap, fmt);
	vsnprintf(l->text, sizeof(l->text), fmt, ap);
	va_end(ap);
	return l;
}

/* text in lines of at most width columns, broken at spaces. */
static void view_add_wrapped(struct view *v, int color, const char *text,
			     int width)
{
	const char *indent = "";
	int len;

	if (width < 20)
		width = 20;
	while (*text) {
		int room = width - (int)strlen(indent);

		len = strlen(text);
		if (len > room) {
			len = room;
			while (len > 0 && text[len] != ' ')
				len--;
			if (!len)
				len = room;	/* one word wider than the line */
		}
		view_add(v, color, false, "%s%.*s", indent, len, text);
		text += len;
		text += strspn(text, " ");
		indent = "    ";
	}
}

/* A count in 8 columns: thousands or millions past that. */
static void fmt_count(char *buf, size_t len, uint64_t v)
{
	if (v < 100000000ull)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else if (v < 100000000000ull)
		snprintf(buf, len, "%lluk", (unsigned long long)(v / 1000));
	else
		snprintf(buf, len, "%lluM", (unsigned long long)(v / 1000000));
}

/* Sizes of the heap ring are bytes; of the others, slots or entries. */
static void fmt_size(char *buf, size_t len, enum pto_ring res, uint64_t v)
{
	if (res == PTO_RING_HEAP)
		pt_fmt_bytes(buf, len, v);
	else
		fmt_count(buf, len, v);
}

static void fmt_stall_ms(char *buf, size_t len, uint64_t ns)
{
	double ms = ns / 1e6;

	snprintf(buf, len, ms < 1e4 ? "%.3f" : ms < 1e6 ? "%.1f" : "%.0f",
		 ms);
}

#define RING_COLUMNS	"%-4s %-15s %8s %8s %10s %7s %8s  %s"

/* One resource of a task ring, with the short form of its advice. */
static void view_resource(struct view *v, const struct pt_proc *p, int r,
			  enum pto_ring k)
{
	const struct pt_ring *g = &p->depth[r][k];
	char ring[16] = "", size[16], used[16], high[16], stalls[16], ms[16];
	char advice[32] = "";
	struct pt_advice adv;
	bool grow = false;

	if (k == 0)
		snprintf(ring, sizeof(ring), "%d", r);
	fmt_size(size, sizeof(size), k, g->size);
	fmt_size(used, sizeof(used), k, g->in_use);
	fmt_size(high, sizeof(high), k, g->high_water);
	fmt_count(stalls, sizeof(stalls), g->stalls);
	fmt_stall_ms(ms, sizeof(ms), g->stall_ns);
	if (pt_ring_advice(p, r, k, &adv)) {
		char to[16];

		grow = adv.kind == PT_ADVICE_GROW;
		fmt_size(to, sizeof(to), k, adv.size);
		snprintf(advice, sizeof(advice), "%s %s",
			 grow ? "grow" : "shrink", to);
	}
	view_add(v, grow ? C_HIGH : 0, false, RING_COLUMNS, ring,
		 pt_resource_name(k), size, used, high, stalls, ms, advice);
}

/* libpto's advice in full, what stalled first: it is what matters now. */
static void view_advice(struct view *v, const struct pt_proc *p)
{
	static const enum pt_advice_kind order[] = {
		PT_ADVICE_GROW, PT_ADVICE_SHRINK
	};
	struct pt_advice adv;
	char text[512];
	size_t i;
	int r, k, n = 0;

	view_add(v, 0, false, "%s", "");
	view_add(v, 0, true, "%s",
		 "Sizing advice, as pto_print_stats() gives it:");
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		for (r = 0; r < p->nrings; r++) {
			for (k = 0; k < PTO_NUM_RINGS; k++) {
				if (!pt_ring_advice(p, r, k, &adv) ||
				    adv.kind != order[i])
					continue;
				pt_fmt_advice(text, sizeof(text), p, r, k,
					      &adv);
				view_add_wrapped(v, order[i] ==
						 PT_ADVICE_GROW ? C_HIGH : 0,
						 text, COLS);
				n++;
			}
		}
	}
	if (!n) {
		view_add(v, 0, false, "%s", "none: every ring fits its use.");
	} else if (pt_all_advice(p, text, sizeof(text)) &&
		   strlen(text) + 20 < sizeof(text)) {
		char all[sizeof(text)];

		snprintf(all, sizeof(all), "all of it at once: %s", text);
		view_add_wrapped(v, 0, all, COLS);
	}
}

/* What the view says for a row without task ring figures. */
static void view_no_rings(struct view *v, const struct pt_proc *p)
{
	const struct pt_ring *task = &p->ring[PTO_RING_TASK];

	if (p->src & PT_SRC_PAGE) {
		view_add(v, 0, false, "%s",
			 "The runtime has not published its task rings yet.");
		return;
	}
	view_add(v, 0, false, "%s",
		 "No task ring figures: the driver's fdinfo is all ptotop sees of it,");
	if (task->valid)
		view_add(v, 0, false,
			 "and it gives the task window only: %llu slots, %llu tasks in flight.",
			 (unsigned long long)task->size,
			 (unsigned long long)task->in_use);
	else
		view_add(v, 0, false, "%s", "and it gives no task window.");
}

static void build_ring_view(struct view *v, const struct pt_proc *p)
{
	int r, k;

	if (!p->nrings) {
		view_no_rings(v, p);
		return;
	}
	for (r = 0; r < p->nrings; r++) {
		if (!pt_task_ring_used(p, r)) {
			view_add(v, 0, false,
				 "%-4d (scope depth %d%s: no tasks)", r, r, r + 1 == p->nrings ?
				 " and deeper" : "");
			continue;
		}
		for (k = 0; k < PTO_NUM_RINGS; k++)
			view_resource(v, p, r, k);
	}
	view_advice(v, p);
}

/* Lines y0 to the key hints show the view from ui->scroll on. */
static void draw_view_lines(const struct ui *ui, const struct view *v,
			    int y0)
{
	int rows = LINES - 1 - y0, i;

	for (i = 0; i < rows && ui->scroll + i < v->n; i++) {
		const struct view_line *l = &v->line[ui->scroll + i];
		int attr = (l->color ? COLOR_PAIR(l->color) : 0) |
			   (l->bold ? A_BOLD : 0);

		attron(attr);
		put(y0 + i, 0, l->text);
		attroff(attr);
	}
}

static void draw_ring_view(struct ui *ui)
{
	const struct pt_proc *p = find_selected(ui);
	static struct view v;	/* 24 KiB: not on the stack */
	char buf[256], head[128];
	const char *cmd;
	int rows, i;

	v.n = 0;
	if (!p) {
		snprintf(buf, sizeof(buf),
			 "pid %d is not shown any more (it exited, or a filter hides it).",
			 ui->sel_pid);
		put(2, 2, buf);
		return;
	}
	build_ring_view(&v, p);
	/* the rows under the title and header: scroll no further than the end */
	rows = LINES - 4;
	if (ui->scroll > v.n - rows)
		ui->scroll = v.n - rows;
	if (ui->scroll < 0)
		ui->scroll = 0;
	cmd = short_command(p->command);
	snprintf(buf, sizeof(buf), "Task rings of pid %d, %.*s on %s",
		 p->pid, (int)strcspn(cmd, " "), cmd, p->device);
	put_bold(1, 0, buf);
	if (v.n > rows) {
		snprintf(buf, sizeof(buf), "[%d-%d of %d, j/k]",
			 ui->scroll + 1, ui->scroll + rows, v.n);
		put(1, COLS - (int)strlen(buf) > 0 ? COLS - strlen(buf) : 0,
		    buf);
	}
	snprintf(head, sizeof(head), RING_COLUMNS, "RING", "RESOURCE", "SIZE",
		 "IN USE", "HIGH WATER", "STALLS", "STALL MS", "ADVICE");
	attron(A_REVERSE);
	for (i = 0; i < COLS; i++)
		put(2, i, " ");
	put(2, 0, head);
	attroff(A_REVERSE);
	draw_view_lines(ui, &v, 3);
}

/* ---- whole screens ------------------------------------------------------- */

static void draw_help(void)
{
	static const char *const lines[] = {
		"ptotop help",
		"",
		"  q          quit",
		"  h          show/close this help",
		"  space      pause/resume refreshing",
		"  P T I      sort by pid, tasks/s, tasks in flight",
		"  S F        sort by stalls, failures",
		"  D C U      sort by device, command, user",
		"  r          reverse the sort order",
		"  f          cycle the device filter (all, each device)",
		"  + -        longer/shorter refresh interval",
		"  up down    select a process (also j k, PgUp PgDn)",
		"  Enter      show/close its task rings (one per scope depth):",
		"             sizes, use, stalls and libpto's sizing advice",
		"",
		"Columns: TSK% HEP% DEP% TMP% are task-window, heap-ring,",
		"dep-pool and TensorMap occupancy of the fullest task ring;",
		"STALLS counts times the orchestrator waited for a full ring.",
		"Utilisation is busy time over wall time times cores, per",
		"refresh interval.",
		"",
		"Press any key to return, q to quit.",
	};
	size_t i;

	put_bold(2, 2, lines[0]);
	for (i = 1; i < ARRAY_SIZE(lines); i++)
		put(2 + i, 2, lines[i]);
}

static void draw_empty(const struct pt_state *st)
{
	char where[512];
	const char *const lines[] = {
		"No PTO devices or runtimes found.",
		"",
		where,
		"and clients of /dev/ptoN once pto.ko is loaded.",
	};
	size_t i;
	int y = LINES / 2 - 2;

	/* where the pages are looked for: PTO_STATS_DIR moves them */
	snprintf(where, sizeof(where),
		 "ptotop shows libpto programs (their stats pages in %s)",
		 pto_statspage_dir());

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		int x = (COLS - (int)strlen(lines[i])) / 2;

		put(y + i, x < 0 ? 0 : x, lines[i]);
	}
	if (visible_skipped(st))
		draw_skipped(y + i + 1, st, visible_skipped(st));
}

static void draw_key_hints(const struct ui *ui)
{
	attron(A_REVERSE);
	if (ui->rings && !ui->help)
		put(LINES - 1, 0,
		    " Enter/Esc back  j/k up/down scroll  q quit  h help  space pause  +/- ");
	else
		put(LINES - 1, 0,
		    " q quit  h help  spc pause  PTISFDCU sort  r rev  f dev  +/-  Enter rings ");
	attroff(A_REVERSE);
}

static void draw(struct ui *ui)
{
	const struct pt_state *st = ui->st;
	int y, budget;

	erase();
	draw_title(ui);
	if (ui->help) {
		draw_help();
	} else if (ui->rings) {
		draw_ring_view(ui);
	} else if (!st->cur.ndevs && !st->cur.nprocs) {
		draw_empty(st);
	} else {
		/* keep the title, key hints, table header and three rows */
		budget = LINES - 1 - 1 - 1 - 3 - 1;
		y = draw_devices(ui, 1, budget);
		draw_procs(ui, y);
	}
	draw_key_hints(ui);
	refresh();
}

/* ---- keys and the loop --------------------------------------------------- */

static bool is_enter(int ch)
{
	return ch == '\n' || ch == '\r' || ch == KEY_ENTER;
}

/* The keys that move: the selection in the table, the ring view's lines. */
static bool move_key(struct ui *ui, int ch)
{
	int page = LINES > 8 ? LINES - 6 : 1, delta;

	switch (ch) {
	case KEY_UP:
	case 'k':
		delta = -1;
		break;
	case KEY_DOWN:
	case 'j':
		delta = 1;
		break;
	case KEY_PPAGE:
		delta = -page;
		break;
	case KEY_NPAGE:
		delta = page;
		break;
	default:
		return false;
	}
	if (ui->rings)
		ui->scroll += delta;	/* draw_ring_view() clamps it */
	else
		move_selection(ui, delta);
	return true;
}

/* Enter opens the selected row's task rings, Enter or Esc closes them. */
static bool ring_view_key(struct ui *ui, int ch)
{
	if (!is_enter(ch) && !(ui->rings && ch == KEY_ESC))
		return false;
	if (!ui->rings) {
		const struct pt_proc *p = visible_at(ui->st,
						     selected_pos(ui));

		if (!p)
			return true;	/* nothing to show */
		select_row(ui, p);	/* pinned, even if it moves */
		ui->scroll = 0;
	}
	ui->rings = !ui->rings;
	return true;
}

/* false to quit */
static bool handle_key(struct ui *ui, int ch)
{
	struct pt_state *st = ui->st;
	int i;

	if (ui->help && ch != KEY_RESIZE && ch != 'q' && ch != 'Q') {
		ui->help = false;
		return true;
	}
	if (move_key(ui, ch) || ring_view_key(ui, ch))
		return true;
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case 'h':
	case '?':
		ui->help = true;
		return true;
	case ' ':
		ui->paused = !ui->paused;
		return true;
	case 'r':
		st->reverse = !st->reverse;
		break;
	case 'f':
		pt_next_device_filter(st);
		break;
	case '+':
		st->delay_s = fmin(st->delay_s * 2, PT_DELAY_MAX);
		return true;
	case '-':
		st->delay_s = fmax(st->delay_s / 2, PT_DELAY_MIN);
		return true;
	default:
		for (i = 0; i < PT_NSORTS; i++)
			if (ch == pt_sort_keys[i].key)
				st->sort = i;
		break;
	}
	pt_sort_procs(st);
	return true;
}

/*
 * Curses keeps the screen's size in shorts and allocates every cell of
 * it: a terminal said to be 32768 columns wide crashed it, one of
 * 9999 x 9999 took gigabytes and stopped answering keys.  The screen is
 * drawn at most this big (a larger terminal shows it in its corner), so
 * ptotop answers the window-size signal itself.
 */
#define UI_MAX_ROWS	500
#define UI_MAX_COLS	2000

/* set by SIGWINCH; a lock-free atomic, as a signal handler may touch */
static int ui_resized;

static void on_winch(int sig)
{
	__atomic_store_n(&ui_resized, 1, __ATOMIC_RELAXED);
}

/*
 * The terminal's size, at most UI_MAX_*: 1 if it was larger, 0 if not,
 * -1 if it has none.
 */
static int ui_size(int *rows, int *cols)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row || !ws.ws_col)
		return -1;
	*rows = ws.ws_row < UI_MAX_ROWS ? ws.ws_row : UI_MAX_ROWS;
	*cols = ws.ws_col < UI_MAX_COLS ? ws.ws_col : UI_MAX_COLS;
	return *rows != ws.ws_row || *cols != ws.ws_col;
}

/*
 * Before curses starts: it leaves SIGWINCH to a program that handles it,
 * and takes its first size from LINES and COLUMNS when they are set.
 */
static void ui_size_init(void)
{
	/* restarted: only the wait for a key need notice it */
	struct sigaction sa = { .sa_handler = on_winch,
				.sa_flags = SA_RESTART };
	char buf[16];
	int rows, cols;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, NULL);
	if (ui_size(&rows, &cols) <= 0)
		return;
	snprintf(buf, sizeof(buf), "%d", rows);
	setenv("LINES", buf, 1);
	snprintf(buf, sizeof(buf), "%d", cols);
	setenv("COLUMNS", buf, 1);
}

/*
 * newterm() rather than initscr(), which exits the program with its own
 * message when it does not know the terminal.  False: it does not.  With
 * no TERM at all curses is not asked (its failed set-up leaks a block).
 */
static bool ui_init(void)
{
	const char *term = getenv("TERM");

	/* command lines are UTF-8: let curses draw them in a UTF-8 locale */
	setlocale(LC_CTYPE, "");
	if (!term || !*term)
		return false;
	ui_size_init();
	if (!newterm(NULL, stdout, stdin))
		return false;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	set_escdelay(25);	/* Esc closes the ring view: no 1 s wait */
	curs_set(0);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(C_LOW, COLOR_GREEN, -1);
		init_pair(C_MID, COLOR_YELLOW, -1);
		init_pair(C_HIGH, COLOR_RED, -1);
		init_pair(C_TITLE, COLOR_CYAN, -1);
	}
	return true;
}

/* Sleep until the next refresh is due. */
static void sleep_to_refresh(const struct ui *ui)
{
	uint64_t now = pt_now_ns(CLOCK_MONOTONIC), left;
	struct timespec ts;

	if (now >= ui->next_ns)
		return;
	left = ui->next_ns - now;
	ts.tv_sec = (time_t)(left / 1000000000u);
	ts.tv_nsec = (long)(left % 1000000000u);
	nanosleep(&ts, NULL);
}

/*
 * A key, or ERR when the next refresh is due first.  getch() also says
 * ERR at once when standard input is at its end (</dev/null, closed):
 * the rest of the wait is then slept, or the loop would spin a whole CPU
 * redrawing the same screen.
 */
static int wait_key(const struct ui *ui)
{
	uint64_t now = pt_now_ns(CLOCK_MONOTONIC);
	int ch;

	timeout(now >= ui->next_ns ? 0 :
		(int)((ui->next_ns - now) / 1000000) + 1);
	ch = getch();
	if (__atomic_exchange_n(&ui_resized, 0, __ATOMIC_RELAXED)) {
		int rows, cols;

		if (ui_size(&rows, &cols) >= 0)
			resizeterm(rows, cols);
		if (ch != ERR && ch != KEY_RESIZE)
			ungetch(ch);	/* a key that came with it */
		return KEY_RESIZE;
	}
	if (ch == ERR)
		sleep_to_refresh(ui);
	return ch;
}

/* Sample if a refresh is due; false once -n samples have been taken. */
static bool tick(struct ui *ui)
{
	struct pt_state *st = ui->st;
	uint64_t now = pt_now_ns(CLOCK_MONOTONIC);

	if (now < ui->next_ns)
		return true;
	ui->next_ns = now + (uint64_t)(st->delay_s * 1e9);
	if (ui->paused)
		return true;
	if (st->iterations && st->iteration >= st->iterations)
		return false;
	pt_take_sample(st);
	return true;
}

int pt_ui_run(struct pt_state *st)
{
	struct ui ui = { .st = st };
	bool go_on;
	int ch;

	if (!ui_init())
		return -ENOTTY;
	pt_take_sample(st);
	/* a quick second sample so rates show up at once */
	ui.next_ns = pt_now_ns(CLOCK_MONOTONIC) +
		     (uint64_t)(fmin(st->delay_s, 0.3) * 1e9);
	do {
		draw(&ui);
		ch = wait_key(&ui);
		go_on = ch == ERR ? tick(&ui) : handle_key(&ui, ch);
	} while (go_on);
	endwin();
	return 0;
}
