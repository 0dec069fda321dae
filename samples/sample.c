// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the sample orchestrations; see sample.h.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sample.h"

static void sample_usage(const char *prog, const struct sample_opt *opts)
{
	const struct sample_opt *o;

	printf("%s options (name=value after the .so on the ptorun line):\n",
	       prog);
	for (o = opts; o->name; o++) {
		if (o->val)
			printf("  %-12s %s (default %" PRIu64 ")\n", o->name,
			       o->help, *o->val);
		else
			printf("  %-12s %s (default %s)\n", o->name, o->help,
			       *o->str ? *o->str : "none");
	}
}

static int sample_set(const char *prog, const struct sample_opt *o,
		      const char *value)
{
	unsigned long long v;
	char *end;

	if (o->given)
		*o->given = true;
	if (!o->val) {
		*o->str = value;
		return 0;
	}
	errno = 0;
	/* decimal ("010" is ten, not octal eight) or 0x hex */
	v = strtoull(value, &end, strncasecmp(value, "0x", 2) ? 10 : 16);
	/* strtoull() would take " 1" and wrap "-1" round to 2^64 - 1 */
	if (errno || end == value || *end || !isdigit((unsigned char)*value)) {
		fprintf(stderr, "%s: %s=%s: %s\n", prog, o->name, value,
			*value == '-' ? "must not be negative" :
			errno == ERANGE ? "too large" :
			"not a number (a count: decimal, or 0x hex)");
		return -EINVAL;
	}
	*o->val = v;
	return 0;
}

int sample_parse_args(const char *prog, int argc, char **argv,
		      const struct sample_opt *opts)
{
	const struct sample_opt *o;
	const char *eq;
	size_t len;
	int i, ret;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "help") || !strcmp(argv[i], "--help")) {
			sample_usage(prog, opts);
			return 1;
		}
		eq = strchr(argv[i], '=');
		len = eq ? (size_t)(eq - argv[i]) : 0;
		for (o = opts; eq && o->name; o++)
			if (strlen(o->name) == len &&
			    !strncmp(o->name, argv[i], len))
				break;
		if (!eq || !o->name) {
			fprintf(stderr, "%s: unknown argument '%s' (see help)\n",
				prog, argv[i]);
			return -EINVAL;
		}
		ret = sample_set(prog, o, eq + 1);
		if (ret)
			return ret;
	}
	return 0;
}

void sample_fill_f32(float *p, uint64_t n, uint64_t *state)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		p[i] = sample_rand_f32(state);
}

uint64_t sample_fnv1a(uint64_t h, const void *buf, uint64_t len)
{
	const unsigned char *p = buf;
	uint64_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

void sample_compare_f32(const float *got, const float *want, uint64_t n,
			double abs_tol, double rel_tol, struct sample_err *e)
{
	bool exact = abs_tol == 0.0 && rel_tol == 0.0;
	double d, r;
	uint64_t i;
	bool bad;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < n; i++) {
		d = fabs((double)got[i] - (double)want[i]);
		r = want[i] != 0.0f ? d / fabs((double)want[i]) : d;
		if (!isfinite(got[i]) && f32_bits(got[i]) != f32_bits(want[i])) {
			d = INFINITY;
			r = INFINITY;
		}
		if (exact)
			bad = f32_bits(got[i]) != f32_bits(want[i]);
		else
			bad = !(d <= abs_tol + rel_tol * fabs((double)want[i]));
		if (d > e->max_abs)
			e->max_abs = d;
		if (r > e->max_rel)
			e->max_rel = r;
		if (bad && !e->bad++)
			e->first_bad = i;
	}
}

int sample_verdict(const char *label, const struct sample_err *e,
		   const char *how, uint64_t checksum)
{
	printf("%s: max abs error %.3g, max rel error %.3g (%s)\n", label,
	       e->max_abs, e->max_rel, how);
	if (e->bad)
		printf("%s: %" PRIu64 " elements wrong, first at index %" PRIu64
		       "\n", label, e->bad, e->first_bad);
	printf("%s: checksum: %016" PRIx64 "\n", label, checksum);
	printf("%s: %s\n", label, e->bad ? "FAIL" : "PASS");
	fflush(stdout);
	return e->bad ? -1 : 0;
}

/* units of per_unit that fit in half of cap after fixed; ~0 if unknown */
static uint64_t units_in(uint64_t cap, uint64_t per_unit, uint64_t fixed)
{
	uint64_t half = cap / 2;

	if (!cap || !per_unit)
		return ~0ull;
	if (half <= fixed)
		return 0;
	return (half - fixed) / per_unit;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t sample_units_per_scope(struct pto_runtime *rt, uint32_t depth,
				const struct sample_cost *unit,
				const struct sample_cost *fixed,
				uint64_t max_units)
{
	const struct pto_ring_stats *r;
	struct pto_stats st;
	uint64_t n = max_units;

	if (pto_get_stats(rt, &st) || !st.nrings)
		return n ? n : 1;
	/* depths past the last ring share it */
	r = st.depth[depth < st.nrings ? depth : st.nrings - 1];
	n = min_u64(n, units_in(r[PTO_RING_TASK].size, unit->tasks,
				fixed->tasks));
	n = min_u64(n, units_in(r[PTO_RING_HEAP].size, unit->heap,
				fixed->heap));
	n = min_u64(n, units_in(r[PTO_RING_TENSORMAP].size, unit->tensors,
				fixed->tensors));
	n = min_u64(n, units_in(r[PTO_RING_DEP].size, 2 * unit->tensors,
				2 * fixed->tensors));
	return n ? n : 1;
}

int sample_submit(struct pto_runtime *rt, uint32_t kernel,
		  enum pto_worker_type type, const struct pto_param *p,
		  uint32_t n)
{
	int64_t id = pto_submit_task(rt, kernel, type, p, n);

	return id < 0 ? (int)id : 0;
}

int sample_scope_end(struct pto_runtime *rt, int ret)
{
	int end = pto_scope_end(rt);

	return ret ? ret : end;
}

void *sample_malloc(struct pto_runtime *rt, const char *prog,
		    const char *what, uint64_t size)
{
	void *p = pto_malloc(rt, size);

	if (!p)
		fprintf(stderr, "%s: no device memory for %s (%" PRIu64
			" bytes); raise --arena-size, unless libpto's line "
			"above says the device cut the arena\n", prog, what,
			size);
	return p;
}

int sample_error(const char *prog, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(-err));
	return err;
}

static const char *const sample_layouts[SAMPLE_NUM_LAYOUTS] = {
	"tiled", "rowmajor", "ranges"
};

const char *sample_layout_name(enum sample_layout l)
{
	return l < SAMPLE_NUM_LAYOUTS ? sample_layouts[l] : "?";
}

int sample_parse_layout(const char *prog, const char *name,
			unsigned int allowed, enum sample_layout *out)
{
	unsigned int l;

	for (l = 0; l < SAMPLE_NUM_LAYOUTS; l++) {
		if (!(allowed & (1u << l)) || strcmp(name, sample_layouts[l]))
			continue;
		*out = l;
		return 0;
	}
	fprintf(stderr, "%s: unknown layout '%s' (have", prog, name);
	for (l = 0; l < SAMPLE_NUM_LAYOUTS; l++)
		if (allowed & (1u << l))
			fprintf(stderr, " %s", sample_layouts[l]);
	fprintf(stderr, ")\n");
	return -EINVAL;
}
