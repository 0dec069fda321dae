// SPDX-License-Identifier: MIT
/*
 * ptobench --views: what tensor views buy and cost.
 *
 * A row-major BGEMM passes each tile either as the 1-D byte range from
 * its first to its last byte (which overlaps the tiles beside it, so
 * libpto infers false dependencies between them) or as a 2-D view (which
 * overlaps nothing it does not share a byte with); tile-major storage
 * with exact 1-D ranges is the reference.  Per case the table gives the
 * dependencies libpto inferred and the wall time, on real GEMM kernels
 * and on kernels that sleep (a device core busy without host CPU, so more
 * simulated cores than host CPUs still run in parallel); then ns per task
 * with NOP kernels, the per-submit cost of 2-D lookups against 1-D ones
 * with the same accesses.  Every cell runs ptobench-views once per
 * repetition, the layouts interleaved (rotated) within each repetition.
 */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json.h"
#include "ptobench.h"

enum { V_TILED, V_RANGES, V_VIEWS, V_NUM_LAYOUTS };

static const char *const v_layouts[V_NUM_LAYOUTS] = {
	"tiled", "ranges", "views"
};

/* One case: a BGEMM geometry, a form, a work model and the sim's cores. */
struct vcase {
	const char *name;
	const char *form;	/* acc, p or nop (ptobench-views --form) */
	const char *cores;
	unsigned int tile, m, n, k, slots, sleep_us;
	uint64_t batch;		/* nop: from --tasks */
};

static struct vcase vcases[] = {
	{ "gemm64-acc", "acc", "cube=2,vector=2", 64, 4, 4, 8, 1, 0, 1 },
	{ "gemm64-acc", "acc", "cube=8,vector=8", 64, 4, 4, 8, 1, 0, 1 },
	{ "sleep-acc", "acc", "cube=2,vector=2", 32, 4, 4, 8, 1, 500, 1 },
	{ "sleep-acc", "acc", "cube=8,vector=8", 32, 4, 4, 8, 1, 500, 1 },
	{ "gemm64-p", "p", "cube=2,vector=2", 64, 4, 4, 8, 1, 0, 1 },
	{ "sleep-p", "p", "cube=8,vector=8", 32, 4, 4, 8, 1, 500, 1 },
	{ "nop", "nop", "cube=2,vector=2", 32, 4, 4, 4, 64, 0, 0 },
};

#define V_NCASES (sizeof(vcases) / sizeof(vcases[0]))

struct vcell {
	double ns[MAX_REPS];	/* wall time of pto_run */
	int n, failed;
	uint64_t tasks, edges;
	char checksum[20];
};

static struct vcell vcells[V_NCASES][V_NUM_LAYOUTS];

static struct {
	int reps;
	uint64_t tasks;
	const char *json;
	bool verbose;
} vo;

static double v_load_before = -1, v_load_after = -1;

/* "key=value" out of a result line, as a number (0 when absent). */
static uint64_t field(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtoull(p + strlen(key), NULL, 0) : 0;
}

static int run_cell(const struct vcase *c, int layout, struct vcell *cell)
{
	char path[PATH_MAX + 32], tile[16], m[16], n[16], k[16], batch[32];
	char slots[16], sleep_us[16], out[1024];
	char *argv[] = {
		path, "--layout", (char *)v_layouts[layout], "--form",
		(char *)c->form, "--cores", (char *)c->cores, "--tile", tile,
		"--m", m, "--n", n, "--k", k, "--batch", batch, "--slots",
		slots, "--sleep-us", sleep_us, NULL
	};
	const char *line, *sum;
	struct rusage ru;

	worker_path("views", path, sizeof(path));
	snprintf(tile, sizeof(tile), "%u", c->tile);
	snprintf(m, sizeof(m), "%u", c->m);
	snprintf(n, sizeof(n), "%u", c->n);
	snprintf(k, sizeof(k), "%u", c->k);
	snprintf(batch, sizeof(batch), "%" PRIu64, c->batch);
	snprintf(slots, sizeof(slots), "%u", c->slots);
	snprintf(sleep_us, sizeof(sleep_us), "%u", c->sleep_us);
	line = run_worker(path, argv, out, sizeof(out), &ru) ? NULL :
	       strstr(out, "result ");
	if (!line || !field(line, " ns=")) {
		fprintf(stderr, "ptobench: views %s %s %s failed\n", c->name,
			c->cores, v_layouts[layout]);
		cell->failed++;
		return -1;
	}
	cell->tasks = field(line, " tasks=");
	cell->edges = field(line, " edges=");
	sum = strstr(line, " checksum=");
	if (sum)
		snprintf(cell->checksum, sizeof(cell->checksum), "%.16s",
			 sum + 10);
	if (cell->n < MAX_REPS)
		cell->ns[cell->n++] = (double)field(line, " ns=");
	if (vo.verbose)
		fprintf(stderr, "  %-11s %-16s %-6s %s", c->name, c->cores,
			v_layouts[layout], line);
	return 0;
}

static void v_bench(void)
{
	for (int r = 0; r < vo.reps; r++) {
		if (vo.verbose)
			fprintf(stderr, "rep %d/%d\n", r + 1, vo.reps);
		for (size_t c = 0; c < V_NCASES; c++)
			for (int k = 0; k < V_NUM_LAYOUTS; k++) {
				int l = (k + r) % V_NUM_LAYOUTS;

				run_cell(&vcases[c], l, &vcells[c][l]);
			}
	}
}

/* The layouts of a case computed different C: a failure. */
static bool v_mismatch(size_t c)
{
	for (int l = 1; l < V_NUM_LAYOUTS; l++)
		if (vcells[c][l].n && vcells[c][0].n &&
		    strcmp(vcells[c][l].checksum, vcells[c][0].checksum))
			return true;
	return false;
}

static double v_ratio(size_t c, int l)
{
	const struct vcell *t = &vcells[c][V_TILED], *x = &vcells[c][l];

	if (!t->n || !x->n)
		return 0;
	return summarize(x->ns, x->n).med / summarize(t->ns, t->n).med;
}

static void v_print(void)
{
	char model[128];

	cpu_model(model, sizeof(model));
	printf("ptobench --views: row-major BGEMM, tiles as 1-D bounding "
	       "ranges or 2-D views;\ntile-major with exact ranges as the "
	       "reference; %d reps interleaved\n", vo.reps);
	printf("host: %ld CPUs, %s; load average %.2f before, %.2f after\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), model, v_load_before,
	       v_load_after);
	printf("%-11s %-16s %-6s %6s %7s %9s %21s %9s %6s\n", "case", "cores",
	       "layout", "tasks", "edges", "wall ms", "(min - max)",
	       "ns/task", "/tiled");
	for (size_t c = 0; c < V_NCASES; c++) {
		for (int l = 0; l < V_NUM_LAYOUTS; l++) {
			const struct vcell *x = &vcells[c][l];
			struct summary s = summarize(x->ns, x->n);

			printf("%-11s %-16s %-6s ", vcases[c].name,
			       vcases[c].cores, v_layouts[l]);
			if (!x->n) {
				printf("%6s\n", "FAILED");
				continue;
			}
			printf("%6" PRIu64 " %7" PRIu64 " %9.2f (%8.2f - %8.2f)"
			       " %9.1f %6.2f%s\n", x->tasks, x->edges,
			       s.med / 1e6, s.min / 1e6, s.max / 1e6,
			       s.med / (double)x->tasks, v_ratio(c, l),
			       l == V_VIEWS && v_mismatch(c) ?
			       "  RESULTS DIFFER" : "");
		}
	}
	printf("\nedges: dependencies libpto inferred (pto_get_stats); wall: "
	       "pto_run, median;\n/tiled: median wall over tile-major's.  "
	       "gemm*: C GEMM kernels; sleep-*: kernels\nsleeping %u us "
	       "(device time without host CPU); nop: no-op kernels, the\n"
	       "submission cost.  acc: C(i,j) += A(i,k) B(k,j) per task; p: "
	       "P = A B, C += P.\n", vcases[2].sleep_us);
}

static void v_json_cell(FILE *f, size_t c, int l, bool *first)
{
	const struct vcell *x = &vcells[c][l];
	struct summary s = summarize(x->ns, x->n);
	const struct vcase *vc = &vcases[c];

	fprintf(f, "%s    {\"case\": \"%s\", \"form\": \"%s\", "
		"\"cores\": \"%s\", \"layout\": \"%s\",\n      \"tile\": %u, "
		"\"m\": %u, \"n\": %u, \"k\": %u, \"batch\": %" PRIu64
		", \"sleep_us\": %u,\n      \"tasks\": %" PRIu64
		", \"edges\": %" PRIu64 ", \"runs\": %d, \"failed\": %d, ",
		*first ? "" : ",\n", vc->name, vc->form, vc->cores,
		v_layouts[l], vc->tile, vc->m, vc->n, vc->k, vc->batch,
		vc->sleep_us, x->tasks, x->edges, x->n, x->failed);
	if (x->n)
		fprintf(f, "\"wall_ns\": {\"median\": %.0f, \"min\": %.0f, "
			"\"max\": %.0f},\n      \"ns_per_task\": %.3f, "
			"\"ratio_over_tiled\": %.4f, ", s.med, s.min, s.max,
			s.med / (double)x->tasks, v_ratio(c, l));
	fprintf(f, "\"checksum\": ");
	pto_json_str(f, x->checksum);
	fprintf(f, "}");
	*first = false;
}

static int v_json(void)
{
	FILE *f = output_open(vo.json);
	bool first = true;

	if (!f)
		return -1;
	fprintf(f, "{\n  \"ptobench\": 1,\n");
	json_host(f, v_load_before, v_load_after);
	fprintf(f, "  \"config\": {\"mode\": \"views\", \"reps\": %d, "
		"\"tasks\": %" PRIu64 "},\n  \"views\": [\n", vo.reps,
		vo.tasks);
	for (size_t c = 0; c < V_NCASES; c++)
		for (int l = 0; l < V_NUM_LAYOUTS; l++)
			v_json_cell(f, c, l, &first);
	fprintf(f, "\n  ]\n}\n");
	return output_close(f, vo.json);
}

const struct option views_long_opts[] = {
	{ "views", no_argument, NULL, 'W' },
	{ "reps", required_argument, NULL, 'r' },
	{ "tasks", required_argument, NULL, 'n' },
	{ "json", required_argument, NULL, 'j' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* One --views option (c from getopt_long, its optarg). */
static int v_option(int c)
{
	switch (c) {
	case 'W':
		return 0;
	case 'r':
		return opt_int("--reps", optarg, 1, MAX_REPS, &vo.reps);
	case 'n':
		/* a NOP run is whole batches of 64 tasks */
		return opt_u64("--tasks", optarg, 64, MAX_TASKS, &vo.tasks);
	case 'j':
		vo.json = optarg;
		return 0;
	case 'v':
		vo.verbose = true;
		return 0;
	default:	/* 'h' */
		ptobench_usage(stdout);
		exit(0);
	}
}

static int v_parse(int argc, char **argv)
{
	int c;

	vo.reps = 5;
	vo.tasks = 200000;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", views_long_opts,
				NULL)) != -1) {
		if (c == '?' || c == ':') {
			opt_refused(c, argv, views_long_opts, "--views");
			return -1;
		}
		if (v_option(c))
			return -1;
	}
	if (opt_no_operands(argc, argv))
		return -1;
	return vo.json ? check_output_file("--json", vo.json) : 0;
}

int views_main(int argc, char **argv)
{
	char path[PATH_MAX + 32];
	int failed = 0;

	if (v_parse(argc, argv))
		return 2;
	if (!worker_path("views", path, sizeof(path))) {
		fprintf(stderr, "ptobench: no ptobench-views next to the "
			"workers\n");
		return 1;
	}
	for (size_t c = 0; c < V_NCASES; c++) {
		const struct vcase *x = &vcases[c];

		if (!x->batch)	/* the NOP case: --tasks of them */
			vcases[c].batch = (vo.tasks + x->m * x->n * x->k - 1) /
					  (x->m * x->n * x->k);
	}
	v_load_before = loadavg1();
	v_bench();
	v_load_after = loadavg1();
	v_print();
	if (vo.json && v_json())
		return 1;
	for (size_t c = 0; c < V_NCASES; c++) {
		failed += v_mismatch(c);
		for (int l = 0; l < V_NUM_LAYOUTS; l++)
			failed += vcells[c][l].failed;
	}
	return failed ? 1 : 0;
}
