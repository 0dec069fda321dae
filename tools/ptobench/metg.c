// SPDX-License-Identifier: MIT
/*
 * ptobench --metg: Task Bench's minimum effective task granularity (METG,
 * Slaughter et al., SC'20) for libpto, libgomp, libomp and StarPU.
 *
 * For every dependence pattern and width (taskbench.h) and every task
 * granularity of a sweep (kernel iterations, halving from --max-grain down
 * to --min-grain), each implementation runs the graph in a worker process
 * and reports its wall time; ptobench-peak runs the same kernel at the same
 * granularity on one thread per core with no runtime.  Efficiency is the
 * achieved FLOP rate over that peak rate, and METG(50%) the granularity
 * (the kernel's CPU time per task in the peak runs) where the efficiency
 * falls below 0.5, interpolated between the two sweep points around the
 * crossing.  CPU time rather than wall time, so that the granularity of a
 * task is its work, whatever share of the machine other users leave.
 *
 * The peak is a property of the machine and the granularity only, so the
 * peak runs of every cell at one granularity are pooled: on a machine
 * shared with other work a single 200 ms peak run varies by a factor of
 * two or more, their median over the whole sweep much less.
 *
 * Runs are interleaved as in the NOP benchmark: repetition r runs every
 * cell (pattern, width, granularity), and within a cell every
 * implementation and the peak one after another, the first one rotating
 * with r.  Medians over the repetitions.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "metg.h"
#include "ptobench.h"
#include "taskbench.h"

/* Columns of a cell: the implementations, then the peak. */
#define COL_PEAK	NUM_IMPLS
#define NUM_COLS	(NUM_IMPLS + 1)

/* Calibration: iterations per task and duration of the probe. */
#define CALIB_ITERS	65536
#define CALIB_MS	100
/* How long each peak measurement runs, by default, and at most. */
#define PEAK_MS		200
#define MAX_PEAK_MS	3600000u
/* --steps at most, --min-grain and --max-grain (us) at least and most */
#define MAX_STEPS	1000000000u
#define MIN_GRAIN_US	0.001
#define MAX_GRAIN_US	1e7

struct metg_opts {
	bool pattern[TB_NUM_PATTERNS];
	bool impl[NUM_IMPLS];
	unsigned int width[METG_MAX_WIDTHS];
	int nwidths;
	unsigned int steps;
	unsigned int radix;
	int reps;
	unsigned int cores;
	int load;
	unsigned int timeout;
	double min_grain_us;
	double max_grain_us;
	unsigned int peak_ms;
	const char *json;
	const char *plot_dir;
	const char *vary;	/* --vary N:F, or NULL */
	uint32_t vary_every;	/* its N and F */
	uint32_t vary_factor;
	bool verbose;
};

/* One (pattern, width, granularity, column): its repetitions. */
struct mcell {
	double *rate;		/* FLOP per ns (GFLOP/s) */
	/* CPU ns per task: the kernel's (peak) or the whole worker's */
	double *cpu;
	double *wall;		/* implementations: ns * cores / tasks */
	int n;			/* successful runs */
	int failed;
	uint64_t tasks;
	uint64_t flops;
	char check[20];		/* sum of the results' bits, hex */
	bool mismatch;		/* a run's check differed from another's */
	char info[200];
};

static struct metg_opts mo;
static enum tb_pattern pats[TB_NUM_PATTERNS];
static int npats;
static uint64_t iters[METG_MAX_GRAINS];
static int ngrains;
static double ns_per_iter;
static struct mcell *cells;
/* Pooled peak per granularity: FLOP/ns and kernel us per task. */
static double peak_rate[METG_MAX_GRAINS];
static double peak_grain_us[METG_MAX_GRAINS];
static int peak_runs[METG_MAX_GRAINS];
static double load_before = -1, load_after = -1;

static struct mcell *cell(int p, int w, int g, int col)
{
	return &cells[((p * mo.nwidths + w) * ngrains + g) * NUM_COLS + col];
}

static void graph(int p, int w, struct tb_graph *g)
{
	tb_graph_init(g, pats[p], mo.width[w], mo.steps, mo.radix);
	g->vary_every = mo.vary_every;
	g->vary_factor = mo.vary_factor;
}

/* ---- running workers ---------------------------------------------------- */

/* The value of " key=" in a result line. */
static const char *field(const char *line, const char *key)
{
	char pat[32];
	const char *f;

	snprintf(pat, sizeof(pat), " %s=", key);
	f = strstr(line, pat);
	return f ? f + strlen(pat) : NULL;
}

static uint64_t field_u64(const char *line, const char *key)
{
	const char *f = field(line, key);

	return f ? strtoull(f, NULL, 10) : 0;
}

/* The worker's facts after check=, for the JSON. */
static void keep_info(struct mcell *c, const char *line)
{
	const char *f = field(line, "check");

	if (!f)
		return;
	f += strcspn(f, "\n ");	/* the check itself */
	while (*f == ' ')
		f++;
	snprintf(c->info, sizeof(c->info), "%.*s", (int)strcspn(f, "\n"), f);
}

/*
 * The results of a run must equal those of every earlier run of the cell,
 * its own implementation's included: the graph and the kernel are the
 * same, and the sum of the results' bits does not depend on the order.
 */
static void compare_check(int p, int w, int g, int im, const char *check)
{
	struct mcell *c = cell(p, w, g, im);
	char now[20];

	snprintf(now, sizeof(now), "%.16s", check);
	for (int k = 0; k < NUM_IMPLS; k++) {
		struct mcell *o = cell(p, w, g, k);

		if (o->check[0] && strcmp(o->check, now)) {
			fprintf(stderr, "ptobench: %s width %u: %s and %s "
				"computed different results (%s, %s)\n",
				tb_pattern_name(pats[p]), mo.width[w],
				impl_names[im], impl_names[k], now, o->check);
			c->mismatch = true;
		}
	}
	if (!c->check[0])
		snprintf(c->check, sizeof(c->check), "%s", now);
}

static int parse_run(const char *out, const struct tb_graph *tg,
		     uint64_t want_flops, uint64_t *ns, uint64_t *cpu,
		     const char **check)
{
	const char *line = strstr(out, "result ");
	uint64_t tasks, flops;

	if (!line)
		return -1;
	tasks = field_u64(line, "tasks");
	flops = field_u64(line, "flops");
	*ns = field_u64(line, "ns");
	*cpu = field_u64(line, "cpu_ns");
	*check = field(line, "check");
	if (tasks != tg->tasks || flops != want_flops || !*ns || !*check) {
		fprintf(stderr, "ptobench: bad result (%" PRIu64 " tasks, %"
			PRIu64 " FLOPs; expected %" PRIu64 " and %" PRIu64
			")\n", tasks, flops, tg->tasks, want_flops);
		return -1;
	}
	return 0;
}

static int run_impl(int p, int w, int g, int im)
{
	char path[PATH_MAX + 32], out[4096], a_w[16], a_s[16], a_r[16];
	char a_i[24], a_c[16], a_t[16];
	char *argv[] = { path, "--metg", "--pattern",
			 (char *)tb_pattern_name(pats[p]), "--width", a_w,
			 "--steps", a_s, "--radix", a_r, "--iters", a_i,
			 "--cores", a_c, "--timeout", a_t, NULL, NULL, NULL };
	struct mcell *c = cell(p, w, g, im);
	struct tb_graph tg;
	struct rusage ru;
	const char *check;
	uint64_t ns, cpu, flops;

	graph(p, w, &tg);
	flops = tb_graph_flops(&tg, iters[g]);
	worker_path(impl_names[im], path, sizeof(path));
	snprintf(a_w, sizeof(a_w), "%u", mo.width[w]);
	snprintf(a_s, sizeof(a_s), "%u", mo.steps);
	snprintf(a_r, sizeof(a_r), "%u", mo.radix);
	snprintf(a_i, sizeof(a_i), "%" PRIu64, iters[g]);
	snprintf(a_c, sizeof(a_c), "%u", mo.cores);
	snprintf(a_t, sizeof(a_t), "%u", mo.timeout);
	if (mo.vary) {	/* in the two slots before the last NULL */
		argv[sizeof(argv) / sizeof(argv[0]) - 3] = "--vary";
		argv[sizeof(argv) / sizeof(argv[0]) - 2] = (char *)mo.vary;
	}
	if (run_worker(path, argv, out, sizeof(out), &ru) ||
	    parse_run(out, &tg, flops, &ns, &cpu, &check)) {
		if (bench_stopped())
			return -1;
		fprintf(stderr, "ptobench: %s %s width %u iters %" PRIu64
			" failed\n", impl_names[im], tb_pattern_name(pats[p]),
			mo.width[w], iters[g]);
		c->failed++;
		return -1;
	}
	c->tasks = tg.tasks;
	c->flops = flops;
	c->rate[c->n] = (double)c->flops / ns;
	c->cpu[c->n] = (double)cpu / tg.tasks;
	c->wall[c->n++] = (double)ns * mo.cores / tg.tasks;
	keep_info(c, strstr(out, "result "));
	compare_check(p, w, g, im, check);
	return 0;
}

struct peak_res {
	uint64_t tasks;
	uint64_t flops;
	uint64_t ns;		/* wall time */
	uint64_t cpu;		/* CPU time of all threads */
};

/* ptobench-peak at it iterations on `threads` threads for about ms. */
static int run_peak_probe(uint64_t it, unsigned int threads, unsigned int ms,
			  struct peak_res *r)
{
	char path[PATH_MAX + 32], out[1024], a_i[24], a_c[16], a_m[16];
	char a_t[16];
	char *argv[] = { path, "--iters", a_i, "--cores", a_c, "--ms", a_m,
			 "--timeout", a_t, NULL };
	struct rusage ru;
	const char *line;

	worker_path("peak", path, sizeof(path));
	snprintf(a_i, sizeof(a_i), "%" PRIu64, it);
	snprintf(a_c, sizeof(a_c), "%u", threads);
	snprintf(a_m, sizeof(a_m), "%u", ms);
	snprintf(a_t, sizeof(a_t), "%u", mo.timeout);
	if (run_worker(path, argv, out, sizeof(out), &ru))
		return -1;
	line = strstr(out, "result ");
	if (!line)
		return -1;
	r->tasks = field_u64(line, "tasks");
	r->flops = field_u64(line, "flops");
	r->ns = field_u64(line, "ns");
	r->cpu = field_u64(line, "cpu_ns");
	return r->tasks && r->ns && r->cpu &&
	       r->flops == r->tasks * it * TB_FLOPS_PER_ITER ? 0 : -1;
}

static int run_peak(int p, int w, int g)
{
	struct mcell *c = cell(p, w, g, COL_PEAK);
	struct peak_res r;

	if (run_peak_probe(iters[g], mo.cores, mo.peak_ms, &r)) {
		if (bench_stopped())
			return -1;
		fprintf(stderr, "ptobench: peak iters %" PRIu64 " failed\n",
			iters[g]);
		c->failed++;
		return -1;
	}
	c->tasks = r.tasks;
	c->flops = r.flops;
	c->rate[c->n] = (double)r.flops / r.ns;
	c->cpu[c->n++] = (double)r.cpu / r.tasks;
	return 0;
}

static void run_col(int p, int w, int g, int col)
{
	struct mcell *c = cell(p, w, g, col);
	int err;

	if (col == COL_PEAK)
		err = run_peak(p, w, g);
	else
		err = run_impl(p, w, g, col);
	if (mo.verbose && !err)
		fprintf(stderr, "  %-14s w%-4u iters %-8" PRIu64 " %-6s "
			"%8.3f GFLOP/s\n", tb_pattern_name(pats[p]),
			mo.width[w], iters[g],
			col == COL_PEAK ? "peak" : impl_names[col],
			c->rate[c->n - 1]);
}

/* Every column of a cell in turn, starting with column r. */
static void run_cell(int p, int w, int g, int r)
{
	for (int k = 0; k < NUM_COLS; k++) {
		int col = (k + r) % NUM_COLS;

		if (col == COL_PEAK || mo.impl[col])
			run_col(p, w, g, col);
	}
}

/* Every repetition runs every cell. */
static void sweep(void)
{
	for (int r = 0; r < mo.reps; r++) {
		if (mo.verbose)
			fprintf(stderr, "rep %d/%d\n", r + 1, mo.reps);
		for (int p = 0; p < npats; p++)
			for (int w = 0; w < mo.nwidths; w++)
				for (int g = 0; g < ngrains && !bench_stopped();
				     g++)
					run_cell(p, w, g, r);
	}
}

/*
 * The granularities: powers of two of kernel iterations, from the largest
 * whose kernel time is at most --max-grain down to the smallest at least
 * --min-grain, by the CPU time of one thread running the kernel alone.
 */
static int calibrate(void)
{
	struct peak_res r;
	uint64_t it = 1;

	if (run_peak_probe(CALIB_ITERS, 1, CALIB_MS, &r)) {
		fprintf(stderr, "ptobench: cannot time the METG kernel\n");
		return -1;
	}
	ns_per_iter = (double)r.cpu / r.tasks / CALIB_ITERS;
	while (it * 2 * ns_per_iter <= mo.max_grain_us * 1000 &&
	       it < (1ull << 40))
		it *= 2;
	ngrains = 0;
	do {
		iters[ngrains++] = it;
		it /= 2;
	} while (it && it * ns_per_iter >= mo.min_grain_us * 1000 &&
		 ngrains < METG_MAX_GRAINS);
	return 0;
}

/* Kernel seconds the sweep needs at full efficiency, to warn the user. */
static double estimate_s(void)
{
	double grain_ns = 0, tasks = 0, impls = 0;
	struct tb_graph tg;

	for (int g = 0; g < ngrains; g++)
		grain_ns += iters[g] * ns_per_iter;
	for (int p = 0; p < npats; p++)
		for (int w = 0; w < mo.nwidths; w++) {
			graph(p, w, &tg);
			tasks += tg.tasks;
		}
	for (int im = 0; im < NUM_IMPLS; im++)
		impls += mo.impl[im];
	return mo.reps * (impls * tasks * grain_ns / mo.cores / 1e9 +
			  npats * mo.nwidths * ngrains * mo.peak_ms / 1e3);
}

static int alloc_cells(void)
{
	size_t n = (size_t)npats * mo.nwidths * ngrains * NUM_COLS;

	cells = calloc(n, sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		cells[i].rate = calloc(mo.reps, sizeof(double));
		cells[i].cpu = calloc(mo.reps, sizeof(double));
		cells[i].wall = calloc(mo.reps, sizeof(double));
		if (!cells[i].rate || !cells[i].cpu || !cells[i].wall)
			return -ENOMEM;
	}
	return 0;
}

/* ---- results ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of n values, sorting them in place; NAN when there are none. */
static double median(double *v, int n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Every cell's peak runs at granularity g; returns how many. */
static int gather_peaks(int g, double *rate, double *grain)
{
	int n = 0;

	for (int p = 0; p < npats; p++) {
		for (int w = 0; w < mo.nwidths; w++) {
			const struct mcell *c = cell(p, w, g, COL_PEAK);

			memcpy(rate + n, c->rate, c->n * sizeof(*rate));
			memcpy(grain + n, c->cpu, c->n * sizeof(*grain));
			n += c->n;
		}
	}
	return n;
}

/* Median of every cell's peak runs at each granularity. */
static int pool_peaks(void)
{
	double *rate = calloc((size_t)npats * mo.nwidths * mo.reps,
			      sizeof(double));
	double *grain = calloc((size_t)npats * mo.nwidths * mo.reps,
			       sizeof(double));

	if (!rate || !grain) {
		free(rate);
		free(grain);
		return -ENOMEM;
	}
	for (int g = 0; g < ngrains; g++) {
		int n = gather_peaks(g, rate, grain);

		peak_runs[g] = n;
		peak_rate[g] = median(rate, n);
		peak_grain_us[g] = median(grain, n) / 1000;
	}
	free(rate);
	free(grain);
	return 0;
}

/* Kernel CPU time per task in us; NAN when every peak run failed. */
static double grain_us(int g)
{
	return peak_grain_us[g];
}

/* Median achieved rate over the peak rate; NAN when either failed. */
static double efficiency(int p, int w, int g, int im)
{
	const struct mcell *c = cell(p, w, g, im);

	if (!c->n)
		return NAN;
	return summarize(c->rate, c->n).med / peak_rate[g];
}

/*
 * The worker's CPU time per task over the kernel's: 1 when the runtime
 * costs no CPU at all, cores / efficiency when it spins on every core.
 * (With --vary the kernel's is its mean over the graph's tasks.)
 */
static double cpu_ratio(int p, int w, int g, int im)
{
	const struct mcell *c = cell(p, w, g, im);
	double mean;

	if (!c->n)
		return NAN;
	mean = (double)c->flops / (c->tasks * iters[g] * TB_FLOPS_PER_ITER);
	return summarize(c->cpu, c->n).med / (grain_us(g) * 1000 * mean);
}

/*
 * Walk down from the largest granularity to the first efficiency below
 * 0.5; METG lies between that point and the one before, interpolated
 * linearly in efficiency against log(granularity).
 */
static struct metg_result metg_of(int p, int w, int im)
{
	struct metg_result m = { .kind = METG_NA };
	double e0 = NAN, g0 = NAN;

	for (int g = 0; g < ngrains; g++) {
		double e = efficiency(p, w, g, im), gr = grain_us(g);

		if (isnan(e) || isnan(gr))
			return m;
		if (e < 0.5) {
			double f;

			if (!g) {
				m.kind = METG_NONE;
				return m;
			}
			f = (e0 - 0.5) / (e0 - e);
			m.kind = METG_FOUND;
			m.us = exp(log(g0) + f * (log(gr) - log(g0)));
			m.measured_us = g0;
			return m;
		}
		e0 = e;
		g0 = gr;
	}
	m.kind = METG_BELOW;
	m.us = g0;
	m.measured_us = g0;
	return m;
}

static void fmt_metg(char *buf, size_t len, struct metg_result m)
{
	switch (m.kind) {
	case METG_FOUND:
		snprintf(buf, len, "%.1f", m.us);
		break;
	case METG_BELOW:
		snprintf(buf, len, "<%.1f", m.us);
		break;
	case METG_NONE:
		snprintf(buf, len, "none");
		break;
	default:
		snprintf(buf, len, "n/a");
		break;
	}
}

static void print_header(void)
{
	char model[128];

	cpu_model(model, sizeof(model));
	printf("ptobench --metg: %u steps, radix %u, %d reps interleaved, "
	       "%u cores, %d competing process%s\n", mo.steps, mo.radix,
	       mo.reps, mo.cores, mo.load, mo.load == 1 ? "" : "es");
	printf("host: %ld CPUs, %s; load average %.2f before, %.2f after\n",
	       sysconf(_SC_NPROCESSORS_ONLN), model, load_before, load_after);
	printf("kernel: %d FLOPs per iteration, %.3f ns CPU per iteration;"
	       " %d granularities,\n%" PRIu64 " down to %" PRIu64
	       " iterations per task\n", TB_FLOPS_PER_ITER, ns_per_iter,
	       ngrains, iters[0], iters[ngrains - 1]);
	if (mo.vary)
		printf("variable kernels: one task in %u runs %u times the "
		       "iterations\n", mo.vary_every,
		       mo.vary_factor);
	printf("\n");
}

/*
 * No implementation beats the peak by more than noise: an efficiency well
 * above 1 means the peak runs went slow (a machine busy meanwhile, or too
 * short a --peak-ms), and every figure of the run is suspect.
 */
static void warn_peak_low(void)
{
	double worst = 0;

	for (int p = 0; p < npats; p++)
		for (int w = 0; w < mo.nwidths; w++)
			for (int g = 0; g < ngrains; g++)
				for (int im = 0; im < NUM_IMPLS; im++) {
					double e = mo.impl[im] ?
						   efficiency(p, w, g, im) : 0;

					if (e > worst)
						worst = e;
				}
	if (worst > 1.1)
		printf("\nwarning: an efficiency of %.2f: the peak was measured "
		       "low (the machine busy during the peak runs, or "
		       "--peak-ms too short); compare implementations within "
		       "this run only, or run again\n", worst);
}

static void print_summary(void)
{
	printf("%-15s %5s", "pattern", "width");
	for (int im = 0; im < NUM_IMPLS; im++)
		if (mo.impl[im])
			printf(" | %6s eff   METG", impl_names[im]);
	printf("\n");
	for (int p = 0; p < npats; p++) {
		for (int w = 0; w < mo.nwidths; w++) {
			printf("%-15s %5u", tb_pattern_name(pats[p]),
			       mo.width[w]);
			for (int im = 0; im < NUM_IMPLS; im++) {
				char buf[24];

				if (!mo.impl[im])
					continue;
				fmt_metg(buf, sizeof(buf), metg_of(p, w, im));
				printf(" | %10.2f %6s", efficiency(p, w, 0, im),
				       buf);
			}
			printf("\n");
		}
	}
	printf("\neff: achieved / peak FLOP/s at the largest granularity "
	       "(%.0f us);\nMETG: smallest granularity, us of kernel CPU "
	       "time per task, with eff >= 0.5\n(none: below 0.5 already at "
	       "the largest; <X: still >= 0.5 at the smallest).\n",
	       grain_us(0));
	warn_peak_low();
}

/* CPU per task relative to the kernel's, at the largest granularity. */
static void print_cpu(void)
{
	printf("\nCPU time per task over the kernel's, at the largest "
	       "granularity\n%-15s %5s", "pattern", "width");
	for (int im = 0; im < NUM_IMPLS; im++)
		if (mo.impl[im])
			printf(" %7s", impl_names[im]);
	printf("\n");
	for (int p = 0; p < npats; p++) {
		for (int w = 0; w < mo.nwidths; w++) {
			printf("%-15s %5u", tb_pattern_name(pats[p]),
			       mo.width[w]);
			for (int im = 0; im < NUM_IMPLS; im++)
				if (mo.impl[im])
					printf(" %7.2f",
					       cpu_ratio(p, w, 0, im));
			printf("\n");
		}
	}
}

static void print_curve(int p, int w)
{
	struct tb_graph tg;

	graph(p, w, &tg);
	printf("\n%s, width %u, %" PRIu64 " tasks: efficiency by "
	       "granularity\n%10s %10s %9s", tb_pattern_name(pats[p]),
	       mo.width[w], tg.tasks, "iters", "grain us", "peak GF/s");
	for (int im = 0; im < NUM_IMPLS; im++)
		if (mo.impl[im])
			printf(" %7s", impl_names[im]);
	printf("\n");
	for (int g = 0; g < ngrains; g++) {
		printf("%10" PRIu64 " %10.2f %9.3f", iters[g], grain_us(g),
		       peak_rate[g]);
		for (int im = 0; im < NUM_IMPLS; im++)
			if (mo.impl[im])
				printf(" %7.3f", efficiency(p, w, g, im));
		printf("\n");
	}
}

/* ---- JSON --------------------------------------------------------------- */

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", v);
}

static void json_config(FILE *f)
{
	json_host(f, load_before, load_after);
	fprintf(f, "  \"config\": {\"steps\": %u, \"radix\": %u, \"reps\": %d,"
		" \"cores\": %u, \"load\": %d, \"min_grain_us\": %g, "
		"\"max_grain_us\": %g, \"peak_ms\": %u, "
		"\"flops_per_iter\": %d, \"ns_per_iter\": %.4f, "
		"\"ring\": %d, \"vary_every\": %u, \"vary_factor\": %u},\n",
		mo.steps, mo.radix, mo.reps, mo.cores, mo.load,
		mo.min_grain_us, mo.max_grain_us, mo.peak_ms,
		TB_FLOPS_PER_ITER, ns_per_iter, TB_RING,
		mo.vary_every, mo.vary_factor);
}

static void json_point(FILE *f, int p, int w, int g, int im)
{
	const struct mcell *c = cell(p, w, g, im);

	fprintf(f, "          {\"iters\": %" PRIu64 ", \"grain_us\": ",
		iters[g]);
	json_num(f, grain_us(g));
	fprintf(f, ", \"efficiency\": ");
	json_num(f, efficiency(p, w, g, im));
	fprintf(f, ", \"gflops\": ");
	json_num(f, c->n ? summarize(c->rate, c->n).med : NAN);
	fprintf(f, ", \"wall_us_x_cores_per_task\": ");
	json_num(f, c->n ? summarize(c->wall, c->n).med / 1000 : NAN);
	fprintf(f, ", \"cpu_us_per_task\": ");
	json_num(f, c->n ? summarize(c->cpu, c->n).med / 1000 : NAN);
	fprintf(f, ", \"cpu_over_kernel\": ");
	json_num(f, cpu_ratio(p, w, g, im));
	fprintf(f, ", \"samples_gflops\": [");
	for (int i = 0; i < c->n; i++)
		fprintf(f, "%s%.4f", i ? ", " : "", c->rate[i]);
	fprintf(f, "],\n           \"runs\": %d, \"failed\": %d, \"tasks\": %"
		PRIu64 ", \"flops\": %" PRIu64 ", \"check\": ", c->n,
		c->failed, c->tasks, c->flops);
	pto_json_str(f, c->check);
	fprintf(f, ", \"mismatch\": %s, \"info\": ",
		c->mismatch ? "true" : "false");
	pto_json_str(f, c->info);
	fprintf(f, "}%s\n", g + 1 < ngrains ? "," : "");
}

static void json_impl(FILE *f, int p, int w, int im, bool last)
{
	struct metg_result m = metg_of(p, w, im);

	fprintf(f, "        \"%s\": {\"efficiency_large\": ", impl_names[im]);
	json_num(f, efficiency(p, w, 0, im));
	fprintf(f, ", \"metg_us\": ");
	json_num(f, m.kind == METG_FOUND || m.kind == METG_BELOW ? m.us :
		 NAN);
	fprintf(f, ", \"metg_measured_us\": ");
	json_num(f, m.kind == METG_FOUND || m.kind == METG_BELOW ?
		 m.measured_us : NAN);
	fprintf(f, ", \"metg\": \"%s\",\n          \"points\": [\n",
		m.kind == METG_FOUND ? "found" : m.kind == METG_BELOW ?
		"below_min_grain" : m.kind == METG_NONE ? "never" : "failed");
	for (int g = 0; g < ngrains; g++)
		json_point(f, p, w, g, im);
	fprintf(f, "        ]}%s\n", last ? "" : ",");
}

/* The pooled peak, and how many peak runs of each cell failed. */
static void json_peak(FILE *f)
{
	fprintf(f, "  \"peak\": [");
	for (int g = 0; g < ngrains; g++) {
		int failed = 0;

		for (int p = 0; p < npats; p++)
			for (int w = 0; w < mo.nwidths; w++)
				failed += cell(p, w, g, COL_PEAK)->failed;
		fprintf(f, "%s\n    {\"iters\": %" PRIu64
			", \"grain_us\": ", g ? "," : "", iters[g]);
		json_num(f, grain_us(g));
		fprintf(f, ", \"gflops\": ");
		json_num(f, peak_rate[g]);
		fprintf(f, ", \"runs\": %d, \"failed\": %d}", peak_runs[g],
			failed);
	}
	fprintf(f, "],\n");
}

static void json_results(FILE *f)
{
	int last_im = -1;

	for (int im = 0; im < NUM_IMPLS; im++)
		if (mo.impl[im])
			last_im = im;
	fprintf(f, "  \"results\": [");
	for (int p = 0; p < npats; p++) {
		for (int w = 0; w < mo.nwidths; w++) {
			struct tb_graph tg;

			graph(p, w, &tg);
			fprintf(f, "%s\n    {\"pattern\": \"%s\", "
				"\"width\": %u, \"tasks\": %" PRIu64 ",\n",
				p || w ? "," : "", tb_pattern_name(pats[p]),
				mo.width[w], tg.tasks);
			fprintf(f, "      \"impls\": {\n");
			for (int im = 0; im < NUM_IMPLS; im++)
				if (mo.impl[im])
					json_impl(f, p, w, im, im == last_im);
			fprintf(f, "      }}");
		}
	}
	fprintf(f, "\n  ]\n");
}

static int write_json(void)
{
	FILE *f = output_open(mo.json);

	if (!f)
		return -1;
	fprintf(f, "{\n  \"ptobench\": 1,\n  \"mode\": \"metg\",\n");
	json_config(f);
	json_peak(f);
	json_results(f);
	fprintf(f, "}\n");
	return output_close(f, mo.json);
}

/* ---- plots -------------------------------------------------------------- */

static void fill_series(int p, int w, struct metg_series *s)
{
	int n = 0;

	for (int im = 0; im < NUM_IMPLS; im++) {
		if (!mo.impl[im])
			continue;
		s->curve[n].name = impl_names[im];
		s->curve[n].n = ngrains;
		for (int g = 0; g < ngrains; g++) {
			s->curve[n].x[g] = grain_us(g);
			s->curve[n].y[g] = efficiency(p, w, g, im);
		}
		n++;
	}
	s->ncurves = n;
	snprintf(s->title, sizeof(s->title), "%s, width %u",
		 tb_pattern_name(pats[p]), mo.width[w]);
}

static int write_plots(void)
{
	static struct metg_series s[TB_NUM_PATTERNS * METG_MAX_WIDTHS];
	char path[PATH_MAX];
	int n = 0, err = 0;

	for (int p = 0; p < npats; p++) {
		for (int w = 0; w < mo.nwidths; w++, n++) {
			fill_series(p, w, &s[n]);
			snprintf(path, sizeof(path), "%s/metg-%s-w%u.svg",
				 mo.plot_dir, tb_pattern_name(pats[p]),
				 mo.width[w]);
			err |= metg_plot_svg(path, &s[n], 1, 1);
		}
	}
	snprintf(path, sizeof(path), "%s/metg-all.svg", mo.plot_dir);
	err |= metg_plot_svg(path, s, n, mo.nwidths);
	return err ? -1 : 0;
}

/* ---- options ------------------------------------------------------------ */

static int parse_patterns(const char *arg)
{
	const char *names[TB_NUM_PATTERNS];

	for (int p = 0; p < TB_NUM_PATTERNS; p++)
		names[p] = tb_pattern_name(p);
	return parse_names("--patterns", arg, mo.pattern, names,
			   TB_NUM_PATTERNS);
}

/* One width of --widths: a number, or "cores" for --cores. */
static int parse_width(const char *tok, unsigned int *w)
{
	if (!strcmp(tok, "cores")) {
		*w = mo.cores;
		return 0;
	}
	return opt_uint("--widths", tok, 1, TB_MAX_WIDTH, w);
}

/* Add w to the widths unless it is there already. */
static int add_width(unsigned int w)
{
	for (int k = 0; k < mo.nwidths; k++)
		if (mo.width[k] == w)
			return 0;
	if (mo.nwidths == METG_MAX_WIDTHS) {
		fprintf(stderr, "ptobench: --widths: at most %d widths\n",
			METG_MAX_WIDTHS);
		return -1;
	}
	mo.width[mo.nwidths++] = w;
	return 0;
}

/* Widths in the order given, "cores" as --cores, no duplicates. */
static int resolve_widths(const char *list)
{
	char *dup, *save = NULL, *tok;
	unsigned int w;
	int err = 0;

	if (list_has_empty("--widths", list))
		return -1;
	dup = strdup(list);
	if (!dup)
		return -1;
	mo.nwidths = 0;
	for (tok = strtok_r(dup, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save))
		err = parse_width(tok, &w) || add_width(w);
	free(dup);
	if (!err && !mo.nwidths)
		fprintf(stderr, "ptobench: --widths: the list '%s' is empty\n",
			list);
	return err || !mo.nwidths ? -1 : 0;
}

static void defaults(void)
{
	for (int p = 0; p < TB_NUM_PATTERNS; p++)
		mo.pattern[p] = true;
	for (int im = 0; im < NUM_IMPLS; im++)
		mo.impl[im] = true;
	mo.steps = 1000;
	mo.radix = TB_DEF_RADIX;
	mo.reps = 3;
	mo.cores = default_cores();
	mo.timeout = 600;
	mo.min_grain_us = 1;
	mo.max_grain_us = 4000;
	mo.peak_ms = PEAK_MS;
}

/* What no single option can check: after the options, before the run. */
static int check_opts(const char *widths)
{
	if (mo.max_grain_us < mo.min_grain_us) {
		fprintf(stderr, "ptobench: --max-grain %g is below --min-grain "
			"%g\n", mo.max_grain_us, mo.min_grain_us);
		return -1;
	}
	if (resolve_widths(widths))
		return -1;
	npats = 0;
	for (int p = 0; p < TB_NUM_PATTERNS; p++)
		if (mo.pattern[p])
			pats[npats++] = p;
	if (mo.json && check_output_file("--json", mo.json))
		return -1;
	return mo.plot_dir ? make_output_dir("--plot", mo.plot_dir) : 0;
}

const struct option metg_long_opts[] = {
	{ "metg", no_argument, NULL, 'M' },
	{ "patterns", required_argument, NULL, 'p' },
	{ "widths", required_argument, NULL, 'w' },
	{ "steps", required_argument, NULL, 's' },
	{ "radix", required_argument, NULL, 'x' },
	{ "min-grain", required_argument, NULL, 'g' },
	{ "max-grain", required_argument, NULL, 'G' },
	{ "plot", required_argument, NULL, 'P' },
	{ "peak-ms", required_argument, NULL, 'K' },
	{ "impls", required_argument, NULL, 'i' },
	{ "reps", required_argument, NULL, 'r' },
	{ "cores", required_argument, NULL, 'c' },
	{ "load", required_argument, NULL, 'l' },
	{ "json", required_argument, NULL, 'j' },
	{ "timeout", required_argument, NULL, 't' },
	{ "vary", required_argument, NULL, 'V' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* One --metg option (c from getopt_long, its optarg); widths: the list. */
static int metg_option(int c, const char **widths, bool *impls_given)
{
	switch (c) {
	case 'M':
		return 0;
	case 'p':
		return parse_patterns(optarg);
	case 'w':
		*widths = optarg;
		return 0;
	case 's':
		return opt_uint("--steps", optarg, 1, MAX_STEPS, &mo.steps);
	case 'x':
		return opt_uint("--radix", optarg, 1, TB_MAX_RADIX, &mo.radix);
	case 'g':
		return opt_double("--min-grain", optarg, MIN_GRAIN_US,
				  MAX_GRAIN_US, &mo.min_grain_us);
	case 'G':
		return opt_double("--max-grain", optarg, MIN_GRAIN_US,
				  MAX_GRAIN_US, &mo.max_grain_us);
	case 'P':
		mo.plot_dir = optarg;
		return 0;
	case 'K':
		return opt_uint("--peak-ms", optarg, 1, MAX_PEAK_MS,
				&mo.peak_ms);
	case 'i':
		*impls_given = true;
		return parse_impls(optarg, mo.impl);
	case 'r':
		return opt_int("--reps", optarg, 1, MAX_REPS, &mo.reps);
	case 'c':
		return opt_uint("--cores", optarg, 1, MAX_CORES, &mo.cores);
	case 'l':
		return opt_int("--load", optarg, 0, MAX_LOAD, &mo.load);
	case 'j':
		mo.json = optarg;
		return 0;
	case 't':
		return opt_uint("--timeout", optarg, 0, MAX_TIMEOUT,
				&mo.timeout);
	case 'V':
		if (tb_parse_vary(optarg, &mo.vary_every, &mo.vary_factor)) {
			fprintf(stderr, "ptobench: --vary wants N:F, one task "
				"in N running F times as long, both 2 to %d: "
				"'%s'\n", TB_MAX_VARY, optarg);
			return -1;
		}
		mo.vary = optarg;
		return 0;
	case 'v':
		mo.verbose = true;
		return 0;
	default:	/* 'h' */
		ptobench_usage(stdout);
		exit(0);
	}
}

static int parse_metg_opts(int argc, char **argv)
{
	const char *widths = "2,16,cores";
	bool impls_given = false;
	int c;

	defaults();
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", metg_long_opts,
				NULL)) != -1) {
		if (c == '?' || c == ':') {
			opt_refused(c, argv, metg_long_opts, "--metg");
			return -1;
		}
		if (metg_option(c, &widths, &impls_given))
			return -1;
	}
	if (opt_no_operands(argc, argv) || check_opts(widths))
		return -1;
	return check_impls(mo.impl, impls_given);
}

/* Failed runs and results that differ between implementations. */
static int count_failures(void)
{
	size_t n = (size_t)npats * mo.nwidths * ngrains * NUM_COLS;
	int failed = 0;

	for (size_t i = 0; i < n; i++)
		failed += cells[i].failed + cells[i].mismatch;
	return failed;
}

int metg_main(int argc, char **argv)
{
	char path[PATH_MAX + 32];

	if (parse_metg_opts(argc, argv))
		return 2;
	if (!worker_path("peak", path, sizeof(path))) {
		fprintf(stderr, "ptobench: no ptobench-peak next to the "
			"workers\n");
		return 1;
	}
	load_before = loadavg1();
	start_load(mo.load);
	if (calibrate() || alloc_cells()) {
		stop_load();
		return bench_stopped() ? 128 + bench_stopped() : 1;
	}
	fprintf(stderr, "ptobench: %d granularities, about %.0f s of kernel "
		"time at full efficiency\n", ngrains, estimate_s());
	sweep();
	load_after = loadavg1();
	stop_load();
	if (pool_peaks())
		return 1;
	print_header();
	print_summary();
	print_cpu();
	for (int p = 0; p < npats; p++)
		for (int w = 0; w < mo.nwidths; w++)
			print_curve(p, w);
	if (mo.json && write_json())
		return 1;
	if (mo.plot_dir && write_plots())
		return 1;
	if (bench_stopped())
		return bench_stop_status();
	return count_failures() ? 1 : 0;
}
