// SPDX-License-Identifier: MIT
/*
 * ptotop's batch outputs: text like "top -b", and JSON (one document per
 * iteration, on one line).  Field names are documented in ptotop(1) and
 * Documentation/ptotop.rst and must stay stable.
 */
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "json.h"		/* util/: the project's one string escaper */
#include "view.h"

/* The text columns are written out for these four types and rings. */
static_assert(PTO_UAPI_NUM_WORKER_TYPES == 4, "a column per worker type");
static_assert(PTO_NUM_RINGS == 4, "a column per ring");

/* JSON keys of the rings, in the stats page's order */
static const char *const ring_names[PTO_NUM_RINGS] = {
	[PTO_RING_TASK] = "task",
	[PTO_RING_HEAP] = "heap",
	[PTO_RING_DEP] = "dep",
	[PTO_RING_TENSORMAP] = "tensormap",
};

void pt_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char units[] = "BKMGTP";
	double v = bytes;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
}

void pt_fmt_clock(char *buf, size_t len, uint64_t real_ns)
{
	time_t t = real_ns / 1000000000ull;
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

void pt_fmt_advice(char *buf, size_t len, const struct pt_proc *p, int ring,
		   enum pto_ring res, const struct pt_advice *adv)
{
	const struct pt_ring *g = &p->depth[ring][res];

	if (adv->kind == PT_ADVICE_GROW)
		snprintf(buf, len,
			 "ring %d %s: full %llu times, %.1f ms waited; %s would let the orchestrator run further ahead",
			 ring, pt_resource_name(res),
			 (unsigned long long)g->stalls, g->stall_ns / 1e6,
			 adv->env);
	else
		snprintf(buf, len,
			 "ring %d %s: never more than %llu of %llu used; %s would do and save memory",
			 ring, pt_resource_name(res),
			 (unsigned long long)g->high_water,
			 (unsigned long long)g->size, adv->env);
}

void pt_fmt_skipped(char *buf, size_t len, const struct pt_skipped_page *sp)
{
	bool older = sp->version < PTO_STATSPAGE_VERSION;

	snprintf(buf, len,
		 "pid %d not shown: its stats page %s is version %u, from %s libpto; ptotop reads version %d%s",
		 sp->pid, sp->file, sp->version, older ? "an older" : "a newer",
		 PTO_STATSPAGE_VERSION, older ? "" : ": update ptotop");
}

/* A percentage in width columns, or "-" when unknown. */
static void fmt_pct(char *buf, size_t len, int width, double frac)
{
	if (isnan(frac))
		snprintf(buf, len, "%*s", width, "-");
	else
		snprintf(buf, len, "%*.1f", width, 100.0 * frac);
}

/* ---- text ---------------------------------------------------------------- */

static void text_device(const struct pt_device *d, FILE *out)
{
	char used[16], total[16], pct[PTO_UAPI_NUM_WORKER_TYPES][16];
	char cores[32];
	int t;

	snprintf(cores, sizeof(cores), "%u/%u/%u/%u", d->cores[0],
		 d->cores[1], d->cores[2], d->cores[3]);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		fmt_pct(pct[t], sizeof(pct[t]), 6,
			d->cores[t] ? d->util[t] : NAN);
	pt_fmt_bytes(used, sizeof(used), d->mem_used);
	if (d->mem_total)
		pt_fmt_bytes(total, sizeof(total), d->mem_total);
	else
		snprintf(total, sizeof(total), "-");
	fprintf(out, "%-8s %-15s %s %s %s %s %5llu %s/%s\n", d->name,
		cores, pct[0], pct[1], pct[2], pct[3],
		(unsigned long long)d->contexts, used, total);
}

static void text_devices(const struct pt_state *st, FILE *out)
{
	int i;

	fprintf(out, "%-8s %-15s %6s %6s %6s %6s %5s %s\n", "DEVICE",
		"CORES C/V/A/X", "CUBE%", "VEC%", "AICPU%", "ACCEL%", "CTX",
		"MEM USED/TOTAL");
	for (i = 0; i < st->cur.ndevs; i++)
		if (pt_device_visible(st, &st->cur.devs[i]))
			text_device(&st->cur.devs[i], out);
}

static void text_proc(const struct pt_proc *p, FILE *out)
{
	char rate[32], ring[PTO_NUM_RINGS][16];
	int r;

	if (isnan(p->tasks_per_s))
		snprintf(rate, sizeof(rate), "%9s", "-");
	else
		snprintf(rate, sizeof(rate), "%9.1f", p->tasks_per_s);
	for (r = 0; r < PTO_NUM_RINGS; r++)
		fmt_pct(ring[r], sizeof(ring[r]), 5, pt_ring_occupancy(p, r));
	fprintf(out,
		"%7d %-8.8s %-6.6s %s %6llu %s %s %s %s %7llu %5llu %s\n",
		p->pid, p->user, p->device, rate,
		(unsigned long long)p->in_flight, ring[0], ring[1],
		ring[2], ring[3], (unsigned long long)p->stalls,
		(unsigned long long)p->failed, p->command);
}

/* Under a process row, so indented past its pid. */
#define TEXT_RING_INDENT	"        "

/* One task ring: a line per resource, as pto_print_stats() lays it out. */
static void text_task_ring(const struct pt_proc *p, int r, FILE *out)
{
	int k;

	if (!pt_task_ring_used(p, r)) {
		fprintf(out, TEXT_RING_INDENT
			"%-4d (scope depth %d%s: no tasks)\n", r, r, r + 1 == p->nrings ?
			" and deeper" : "");
		return;
	}
	for (k = 0; k < PTO_NUM_RINGS; k++) {
		const struct pt_ring *g = &p->depth[r][k];

		fprintf(out, TEXT_RING_INDENT
			"%-4d %-16s %12llu %12llu %12llu %10llu %12.3f\n",
			r, pt_resource_name(k),
			(unsigned long long)g->size,
			(unsigned long long)g->in_use,
			(unsigned long long)g->high_water,
			(unsigned long long)g->stalls, g->stall_ns / 1e6);
	}
}

static void text_advice(const struct pt_proc *p, FILE *out)
{
	struct pt_advice adv;
	char buf[512];
	int r, k;

	for (r = 0; r < p->nrings; r++) {
		for (k = 0; k < PTO_NUM_RINGS; k++) {
			if (!pt_ring_advice(p, r, k, &adv))
				continue;
			pt_fmt_advice(buf, sizeof(buf), p, r, k, &adv);
			fprintf(out, TEXT_RING_INDENT "advice: %s\n", buf);
		}
	}
	if (pt_all_advice(p, buf, sizeof(buf)))
		fprintf(out, TEXT_RING_INDENT "all of it at once: %s\n", buf);
}

/* -R: each task ring's figures, then the advice, under the process row. */
static void text_task_rings(const struct pt_proc *p, FILE *out)
{
	int r;

	if (!p->nrings)
		return;		/* fdinfo only, or a page not yet filled */
	fprintf(out, TEXT_RING_INDENT "%-4s %-16s %12s %12s %12s %10s %12s\n",
		"ring", "resource", "size", "in use", "high water", "stalls",
		"stall ms");
	for (r = 0; r < p->nrings; r++)
		text_task_ring(p, r, out);
	text_advice(p, out);
}

static void text_procs(const struct pt_state *st, FILE *out)
{
	int i;

	fprintf(out, "%7s %-8s %-6s %9s %6s %5s %5s %5s %5s %7s %5s %s\n",
		"PID", "USER", "DEVICE", "TASKS/S", "INFLT", "TASK%", "HEAP%",
		"DEP%", "TMAP%", "STALLS", "FAIL", "COMMAND");
	for (i = 0; i < st->cur.nprocs; i++) {
		const struct pt_proc *p = &st->cur.procs[i];

		if (!pt_proc_visible(st, p))
			continue;
		text_proc(p, out);
		if (st->task_rings)
			text_task_rings(p, out);
	}
}

/* Runtimes left out because ptotop cannot read their pages. */
static void text_skipped(const struct pt_state *st, FILE *out)
{
	char buf[512];
	int i;

	for (i = 0; i < st->cur.nskipped; i++) {
		if (!pt_skipped_visible(st, &st->cur.skipped[i]))
			continue;
		pt_fmt_skipped(buf, sizeof(buf), &st->cur.skipped[i]);
		fprintf(out, "%s\n", buf);
	}
}

void pt_print_text(const struct pt_state *st, FILE *out)
{
	char when[32];
	int n = pt_visible_procs(st);

	pt_fmt_clock(when, sizeof(when), st->cur.real_ns);
	fprintf(out, "ptotop - %s, iteration %ld, interval %.2f s, ",
		when, st->iteration, st->cur.interval_s);
	fprintf(out, "%d process%s\n", n, n == 1 ? "" : "es");
	if (!st->cur.ndevs && !st->cur.nprocs) {
		fprintf(out, "No PTO devices or runtimes found "
			"(stats pages in %s).\n", st->roots.stats_dir);
		text_skipped(st, out);
		fputc('\n', out);
		fflush(out);
		return;
	}
	text_devices(st, out);
	fputc('\n', out);
	text_procs(st, out);
	text_skipped(st, out);
	fputc('\n', out);
	fflush(out);
}

/* ---- JSON ---------------------------------------------------------------- */

/*
 * Each helper writes one "name":value member, then a comma if asked to.
 * Names are constants that need no escaping; text values go through
 * pto_json_str().
 */

static void json_u64(FILE *out, const char *name, uint64_t v, bool comma)
{
	fprintf(out, "\"%s\":%llu%s", name, (unsigned long long)v,
		comma ? "," : "");
}

/* A count the source may not know: null then. */
static void json_opt_u64(FILE *out, const char *name, bool known,
			 uint64_t v, bool comma)
{
	if (known)
		json_u64(out, name, v, comma);
	else
		fprintf(out, "\"%s\":null%s", name, comma ? "," : "");
}

/* A number, or null when unknown (NAN). */
static void json_num(FILE *out, const char *name, double v, bool comma)
{
	fprintf(out, "\"%s\":", name);
	if (isnan(v))
		fputs("null", out);
	else
		fprintf(out, "%.9g", v);
	if (comma)
		fputc(',', out);
}

static void json_text(FILE *out, const char *name, const char *s,
		      bool comma)
{
	fprintf(out, "\"%s\":", name);
	pto_json_str(out, s);
	if (comma)
		fputc(',', out);
}

/* {"cube":..,"vector":..}: a value per worker type. */
static void json_per_type_u64(FILE *out, const char *name,
			      const uint64_t *v)
{
	int t;

	fprintf(out, "\"%s\":{", name);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		json_u64(out, pt_type_name(t), v[t],
			 t + 1 < PTO_UAPI_NUM_WORKER_TYPES);
	fputc('}', out);
}

/* "cores", "busy_ns" and "utilisation" (null where there are no cores) */
static void json_engines(FILE *out, const uint32_t *cores,
			 const uint64_t *busy_ns, const double *util)
{
	uint64_t cores64[PTO_UAPI_NUM_WORKER_TYPES];
	int t;

	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		cores64[t] = cores[t];
	json_per_type_u64(out, "cores", cores64);
	fputc(',', out);
	json_per_type_u64(out, "busy_ns", busy_ns);
	fputs(",\"utilisation\":{", out);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		json_num(out, pt_type_name(t), cores[t] ? util[t] : NAN,
			 t + 1 < PTO_UAPI_NUM_WORKER_TYPES);
	fputc('}', out);
}

static void json_device(FILE *out, const struct pt_device *d)
{
	fputc('{', out);
	json_text(out, "name", d->name, true);
	fprintf(out, "\"kind\":\"%s\",", d->sim ? "sim" : "pto");
	json_engines(out, d->cores, d->busy_ns, d->util);
	fputc(',', out);
	json_u64(out, "processes", d->nprocs, true);
	json_u64(out, "contexts", d->contexts, true);
	json_u64(out, "tasks_done", d->tasks_done, true);
	json_u64(out, "tasks_failed", d->tasks_failed, true);
	json_u64(out, "memory_used_bytes", d->mem_used, true);
	json_opt_u64(out, "memory_total_bytes", d->mem_total != 0,
		     d->mem_total, false);
	fputc('}', out);
}

/* {"size":..,"occupancy":..}: one resource, summed or of one task ring */
static void json_resource(FILE *out, const struct pt_ring *g)
{
	fputc('{', out);
	json_u64(out, "size", g->size, true);
	json_u64(out, "in_use", g->in_use, true);
	json_u64(out, "high_water", g->high_water, true);
	json_u64(out, "stalls", g->stalls, true);
	json_u64(out, "stall_ns", g->stall_ns, true);
	json_num(out, "occupancy", pt_resource_occupancy(g), false);
	fputc('}', out);
}

/* Only the rings the row's sources know. */
static void json_rings(FILE *out, const struct pt_proc *p)
{
	bool first = true;
	int r;

	fputs("\"rings\":{", out);
	for (r = 0; r < PTO_NUM_RINGS; r++) {
		if (!p->ring[r].valid)
			continue;
		fprintf(out, "%s\"%s\":", first ? "" : ",", ring_names[r]);
		first = false;
		json_resource(out, &p->ring[r]);
	}
	fputc('}', out);
}

/* {"resource":"heap","action":"grow","size":..,"env":..,"text":..} */
static void json_one_advice(FILE *out, const struct pt_proc *p, int r,
			    enum pto_ring k, const struct pt_advice *adv)
{
	char text[512];

	pt_fmt_advice(text, sizeof(text), p, r, k, adv);
	fprintf(out, "{\"resource\":\"%s\",\"action\":\"%s\",",
		ring_names[k], adv->kind == PT_ADVICE_GROW ? "grow" : "shrink");
	json_u64(out, "size", adv->size, true);
	json_text(out, "env", adv->env, true);
	json_text(out, "text", text, false);
	fputc('}', out);
}

static void json_advice(FILE *out, const struct pt_proc *p, int r)
{
	struct pt_advice adv;
	bool first = true;
	int k;

	fputs("\"advice\":[", out);
	for (k = 0; k < PTO_NUM_RINGS; k++) {
		if (!pt_ring_advice(p, r, k, &adv))
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		json_one_advice(out, p, r, k, &adv);
	}
	fputc(']', out);
}

static void json_task_ring(FILE *out, const struct pt_proc *p, int r)
{
	int k;

	fprintf(out, "{\"ring\":%d,\"scope_depth\":%d,\"and_deeper\":%s,",
		r, r, r + 1 == p->nrings ? "true" : "false");
	fprintf(out, "\"used\":%s,\"resources\":{",
		pt_task_ring_used(p, r) ? "true" : "false");
	for (k = 0; k < PTO_NUM_RINGS; k++) {
		fprintf(out, "%s\"%s\":", k ? "," : "", ring_names[k]);
		json_resource(out, &p->depth[r][k]);
	}
	fputs("},", out);
	json_advice(out, p, r);
	fputc('}', out);
}

/* Per task ring; null when no source reports them (fdinfo only). */
static void json_task_rings(FILE *out, const struct pt_proc *p)
{
	int r;

	fputs("\"task_rings\":", out);
	if (!(p->src & PT_SRC_PAGE)) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (r = 0; r < p->nrings; r++) {
		if (r)
			fputc(',', out);
		json_task_ring(out, p, r);
	}
	fputc(']', out);
}

/* "advice_all": every ring's advice as one paste, or null (pt_all_advice()) */
static void json_all_advice(FILE *out, const struct pt_proc *p)
{
	char buf[512];

	if ((p->src & PT_SRC_PAGE) && pt_all_advice(p, buf, sizeof(buf)))
		json_text(out, "advice_all", buf, true);
	else
		fputs("\"advice_all\":null,", out);
}

static void json_sources(FILE *out, unsigned int src)
{
	fprintf(out, "\"sources\":[%s%s%s],",
		(src & PT_SRC_PAGE) ? "\"statspage\"" : "",
		src == (PT_SRC_PAGE | PT_SRC_FDINFO) ? "," : "",
		(src & PT_SRC_FDINFO) ? "\"fdinfo\"" : "");
}

static void json_memory(FILE *out, const struct pt_proc *p)
{
	fputs("\"memory_bytes\":", out);
	if (p->have_mem)
		fprintf(out, "{\"heap\":%llu,\"window\":%llu}",
			(unsigned long long)p->mem_heap,
			(unsigned long long)p->mem_window);
	else
		fputs("null", out);
}

static void json_proc(FILE *out, const struct pt_proc *p)
{
	fprintf(out, "{\"pid\":%d,", p->pid);
	json_text(out, "user", p->user, true);
	json_text(out, "command", p->command, true);
	json_text(out, "device", p->device, true);
	json_sources(out, p->src);
	json_opt_u64(out, "client_id", p->have_client_id, p->client_id, true);
	json_text(out, "state", p->state, true);
	json_opt_u64(out, "tasks_submitted", p->have_submitted, p->submitted,
		     true);
	json_u64(out, "tasks_completed", p->completed, true);
	json_u64(out, "tasks_failed", p->failed, true);
	json_u64(out, "tasks_in_flight", p->in_flight, true);
	json_u64(out, "runs", p->runs, true);
	json_num(out, "tasks_per_s", p->tasks_per_s, true);
	json_engines(out, p->cores, p->busy_ns, p->util);
	fputc(',', out);
	json_u64(out, "stalls", p->stalls, true);
	json_rings(out, p);
	fputc(',', out);
	json_task_rings(out, p);
	fputc(',', out);
	json_all_advice(out, p);
	json_memory(out, p);
	fprintf(out, ",\"last_error\":%d}", p->last_error);
}

static void json_devices(const struct pt_state *st, FILE *out)
{
	bool first = true;
	int i;

	fputs("\"devices\":[", out);
	for (i = 0; i < st->cur.ndevs; i++) {
		if (!pt_device_visible(st, &st->cur.devs[i]))
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		json_device(out, &st->cur.devs[i]);
	}
	fputc(']', out);
}

static void json_procs(const struct pt_state *st, FILE *out)
{
	bool first = true;
	int i;

	fputs("\"processes\":[", out);
	for (i = 0; i < st->cur.nprocs; i++) {
		if (!pt_proc_visible(st, &st->cur.procs[i]))
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		json_proc(out, &st->cur.procs[i]);
	}
	fputc(']', out);
}

static void json_skipped(const struct pt_state *st, FILE *out)
{
	bool first = true;
	int i;

	fputs("\"unsupported_pages\":[", out);
	for (i = 0; i < st->cur.nskipped; i++) {
		const struct pt_skipped_page *sp = &st->cur.skipped[i];

		if (!pt_skipped_visible(st, sp))
			continue;
		fputs(first ? "{" : ",{", out);
		first = false;
		json_text(out, "file", sp->file, true);
		fprintf(out, "\"pid\":%d,", sp->pid);
		json_u64(out, "version", sp->version, false);
		fputc('}', out);
	}
	fputc(']', out);
}

void pt_print_json(const struct pt_state *st, FILE *out)
{
	fputs("{\"ptotop_version\":1,", out);
	fprintf(out, "\"iteration\":%ld,", st->iteration);
	json_u64(out, "timestamp_ns", st->cur.real_ns, true);
	json_num(out, "interval_s", st->have_prev ? st->cur.interval_s : NAN,
		 true);
	json_devices(st, out);
	fputc(',', out);
	json_procs(st, out);
	fputc(',', out);
	json_skipped(st, out);
	fputs("}\n", out);
	fflush(out);
}
