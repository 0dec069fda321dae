// SPDX-License-Identifier: MIT
/*
 * pto_config: defaults, PTO_* environment overrides, validation.
 */
#include <ctype.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "coreload.h"
#include "log.h"
#include "number.h"
#include "ringsize.h"
#include "rings.h"
#include "runtime.h"

/*
 * Small enough that the descriptors and TensorMap entries in flight stay in
 * the CPU caches (larger windows are slower per task; see
 * Documentation/ptobench.rst), large enough to keep many cores fed.
 */
#define DEFAULT_TASK_WINDOW	4096
#define DEFAULT_HEAP_SIZE	(64ull << 20)
#define DEFAULT_ARENA_SIZE	(1ull << 30)
#define DEFAULT_STALL_MS	3000
_Static_assert(PTO_DEP_POOL_MAX == PTO_MAX_DEP_POOL,
	       "the advised and the accepted dependency pool sizes agree");
/* CPU numbers PTO_CPUS may name */
#define CPU_LIMIT		4096

static const char *const type_names[PTO_NUM_WORKER_TYPES] =
	PTO_UAPI_WORKER_TYPE_NAMES;

static const char *const env_names[PTO_NUM_ENV] = {
	[PTO_ENV_DEVICE] = "PTO_DEVICE",
	[PTO_ENV_TASK_WINDOW] = "PTO_TASK_WINDOW",
	[PTO_ENV_HEAP_SIZE] = "PTO_HEAP_SIZE",
	[PTO_ENV_DEP_POOL] = "PTO_DEP_POOL",
	[PTO_ENV_TENSORMAP_POOL] = "PTO_TENSORMAP_POOL",
	[PTO_ENV_SIM_CORES] = "PTO_SIM_CORES",
	[PTO_ENV_STALL_TIMEOUT_MS] = "PTO_STALL_TIMEOUT_MS",
	[PTO_ENV_TRACE] = "PTO_TRACE",
	[PTO_ENV_ARENA_SIZE] = "PTO_ARENA_SIZE",
	[PTO_ENV_STATS] = "PTO_STATS",
	[PTO_ENV_RINGS] = "PTO_RINGS",
	[PTO_ENV_SCHED] = "PTO_SCHED",
	[PTO_ENV_CPUS] = "PTO_CPUS",
	[PTO_ENV_CHECK] = "PTO_CHECK",
};

const char *pto_env_name(enum pto_env e)
{
	return (unsigned int)e < PTO_NUM_ENV ? env_names[e] : "?";
}

const char *pto_ring_env(enum pto_ring ring)
{
	static const enum pto_env ring_env[PTO_NUM_RINGS] = {
		[PTO_RING_TASK] = PTO_ENV_TASK_WINDOW,
		[PTO_RING_HEAP] = PTO_ENV_HEAP_SIZE,
		[PTO_RING_DEP] = PTO_ENV_DEP_POOL,
		[PTO_RING_TENSORMAP] = PTO_ENV_TENSORMAP_POOL,
	};

	return (unsigned int)ring < PTO_NUM_RINGS ?
	       env_names[ring_env[ring]] : "?";
}

/* A size: "123", "0x40", "64K", "64KiB", "256MB", "1T" (util/number.h). */
int pto_parse_size(const char *s, uint64_t *out)
{
	return pto_parse_number(s, true, out);
}

/* A count: decimal or 0x hex, no size suffix (PTO_RINGS=1K is a typo). */
static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (pto_parse_number(s, false, &v) || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* An empty item ("a,,b", a comma at either end) would be skipped. */
static bool empty_item(const char *s)
{
	size_t n = strlen(s);

	return !n || s[0] == ',' || s[n - 1] == ',' || strstr(s, ",,");
}

int pto_parse_cores(const char *s, uint32_t cores[PTO_NUM_WORKER_TYPES])
{
	uint32_t tmp[PTO_NUM_WORKER_TYPES], seen = 0;
	char buf[128], *save = NULL, *tok;
	int t;

	if (!s || strlen(s) >= sizeof(buf) || empty_item(s))
		return -EINVAL;
	memcpy(tmp, cores, sizeof(tmp));
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		for (t = 0; t < PTO_NUM_WORKER_TYPES; t++)
			if (!strcmp(tok, type_names[t]))
				break;
		/* a type named twice is a typo, not "the last one wins" */
		if (t == PTO_NUM_WORKER_TYPES || seen & 1u << t ||
		    parse_u32(eq + 1, &tmp[t]) ||
		    tmp[t] > PTO_CORES_PER_TYPE_MAX)
			return -EINVAL;
		seen |= 1u << t;
	}
	memcpy(cores, tmp, sizeof(tmp));
	return 0;
}

/* An empty value counts as unset: "PTO_SCHED= prog" drops an export. */
static const char *env(enum pto_env e)
{
	const char *s = getenv(env_names[e]);

	return s && *s ? s : NULL;
}

/*
 * Reading the environment: pto_config_init() reads it quietly and keeps the
 * default for a bad value; pto_runtime_create() reads it again, names every
 * bad value and fails, so a typo never runs a configuration nobody asked for.
 */
struct env_read {
	bool report;
	int bad;
};

static void env_refuse(struct env_read *rd, enum pto_env e, const char *want)
{
	rd->bad++;
	if (rd->report)
		pto_log("invalid environment: %s=%s: %s\n", env_names[e],
			env(e), want);
}

/*
 * A ring size from the environment: "N" for every ring, or "N0,N1,..."
 * per ring from ring 0, rings past the list taking its last value.
 * Fills vals[0..PTO_MAX_RINGS); returns how many were given (0: none or
 * unparsable, refused).
 */
static int env_ring_list(struct env_read *rd, enum pto_env e,
			 uint64_t vals[PTO_MAX_RINGS])
{
	char want[160];

	const char *s = env(e);
	char buf[128], *save = NULL, *tok;
	int n = 0;

	if (!s)
		return 0;
	/* strtok_r would skip an empty item and shift the rest a ring */
	if (strlen(s) >= sizeof(buf) || (*s && empty_item(s)))
		goto bad;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == PTO_MAX_RINGS || pto_parse_size(tok, &vals[n]))
			goto bad;
		n++;
	}
	if (!n)
		goto bad;
	for (int i = n; i < PTO_MAX_RINGS; i++)
		vals[i] = vals[n - 1];
	return n;
bad:
	snprintf(want, sizeof(want), "want %s, or up to 4 of them separated "
		 "by commas, one per task ring", e == PTO_ENV_TASK_WINDOW ?
		 "a size (a power of two from 4 to 2^24)" :
		 e == PTO_ENV_HEAP_SIZE ? "a size (bytes, suffix K, M, G or T)" :
		 "a size (entries)");
	env_refuse(rd, e, want);
	return 0;
}

static void env_ring_u32(struct env_read *rd, enum pto_env e, uint32_t *all,
			 struct pto_config *cfg, size_t field)
{
	uint64_t v[PTO_MAX_RINGS];
	int r, n = env_ring_list(rd, e, v);

	if (!n)
		return;
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		if (v[r] > UINT32_MAX) {
			env_refuse(rd, e, "a size is too large");
			return;
		}
	}
	*all = (uint32_t)v[0];
	for (r = 1; r < PTO_MAX_RINGS && n > 1; r++)
		*(uint32_t *)((char *)&cfg->ring[r] + field) = (uint32_t)v[r];
}

static void env_ring_heap(struct env_read *rd, struct pto_config *cfg)
{
	uint64_t v[PTO_MAX_RINGS];
	int r, n = env_ring_list(rd, PTO_ENV_HEAP_SIZE, v);

	if (!n)
		return;
	cfg->heap_size = v[0];
	for (r = 1; r < PTO_MAX_RINGS && n > 1; r++)
		cfg->ring[r].heap_size = v[r];
}

static void env_size(struct env_read *rd, enum pto_env e, uint64_t *v)
{
	const char *s = env(e);

	if (s && pto_parse_size(s, v))
		env_refuse(rd, e, "not a size (a number, K, M, G or T suffix)");
}

/* want: what e takes, for the refusal ("a number from 1 to 4") */
static void env_u32(struct env_read *rd, enum pto_env e, uint32_t *v,
		    const char *want)
{
	const char *s = env(e);

	if (s && parse_u32(s, v))
		env_refuse(rd, e, want);
}

static void env_sched(struct env_read *rd, struct pto_config *cfg)
{
	static const char *const names[] = {
		[PTO_SCHED_AUTO] = "auto",
		[PTO_SCHED_THREAD] = "thread",
		[PTO_SCHED_WORKERS] = "workers",
		[PTO_SCHED_SHARDS] = "shards",
	};
	const char *s = env(PTO_ENV_SCHED);
	uint32_t i;

	if (!s)
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			cfg->sched = i;
			return;
		}
	}
	env_refuse(rd, PTO_ENV_SCHED, "want auto, thread, workers or shards");
}

/* PTO_STATS is read where the stats page is made; only its form here. */
/*
 * Edit distance of a and b (adjacent swaps count one), or more than max
 * when it is: names are short, so one row pair on the stack will do.
 */
#define ENV_NAME_MAX 48

static size_t env_distance(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	size_t d[3][ENV_NAME_MAX + 1];

	if (la > ENV_NAME_MAX || lb > ENV_NAME_MAX)
		return max + 1;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		size_t *row = d[i % 3], *up = d[(i - 1) % 3];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t c = up[j - 1] + (a[i - 1] != b[j - 1]);

			if (up[j] + 1 < c)
				c = up[j] + 1;
			if (row[j - 1] + 1 < c)
				c = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[(i - 2) % 3][j - 2] + 1 < c)
				c = d[(i - 2) % 3][j - 2] + 1;
			row[j] = c;
		}
	}
	return d[la % 3][lb];
}

/* Is the shorter of a and b the tail of the other from a '_' on? */
static bool env_tail_of(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la > lb)
		return env_tail_of(b, a);
	return la >= 4 && la < lb && b[lb - la - 1] == '_' &&
	       !strcmp(b + lb - la, a);
}

/*
 * The libpto variable a name not libpto's most likely means (PTO_CORES,
 * PTO_SIM_CORE, pto_sched), or NULL: none is that close.  Names too far
 * from all of them (the test harness's PTO_RESULTS, PTO_SKIP_VM ...) are
 * somebody else's.
 */
static const char *env_meant(const char *name)
{
	static const char *const more[] = { "PTO_STATS_DIR" };
	const size_t nknown = PTO_NUM_ENV + 1;
	char up[ENV_NAME_MAX + 1];
	size_t i, n = strlen(name);

	if (n > ENV_NAME_MAX)
		return NULL;
	for (i = 0; i < nknown; i++)
		if (!strcmp(name, i < PTO_NUM_ENV ? env_names[i] : more[0]))
			return NULL;
	for (i = 0; i <= n; i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	for (i = 0; i < nknown; i++) {
		const char *k = i < PTO_NUM_ENV ? env_names[i] : more[0];
		size_t max = strlen(k) >= 10 ? 2 : 1;

		if (env_distance(up, k, max) <= max ||
		    env_tail_of(up + 4, k + 4))
			return k;
	}
	return NULL;
}

/*
 * A mistyped variable would change nothing, silently: name it, and what
 * it probably meant.  Only names starting with PTO_ in any case.
 */
static void env_typos(void)
{
	char name[ENV_NAME_MAX + 1];
	char **e;

	for (e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '='), *meant;
		size_t n = eq ? (size_t)(eq - *e) : 0;

		if (n < 5 || n > ENV_NAME_MAX || strncasecmp(*e, "PTO_", 4))
			continue;
		memcpy(name, *e, n);
		name[n] = '\0';
		meant = env_meant(name);
		if (meant)
			pto_log("environment: %s is not a libpto variable and "
				"changes nothing; did you mean %s?\n", name,
				meant);
	}
}

static void env_stats(struct env_read *rd)
{
	const char *s = env(PTO_ENV_STATS);

	if (s && strcmp(s, "0") && strcmp(s, "1"))
		env_refuse(rd, PTO_ENV_STATS, "want 0 (off) or 1 (on)");
}

int pto_parse_cpus(const char *s, uint32_t *cpus, uint32_t max)
{
	unsigned long lo, hi, c;
	uint32_t n = 0;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		lo = strtoul(s, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			hi = strtoul(end + 1, &end, 10);
		}
		if (hi < lo || hi >= CPU_LIMIT)
			return -EINVAL;
		for (c = lo; c <= hi; c++) {
			if (n == max)
				return -EINVAL;
			cpus[n++] = (uint32_t)c;
		}
		if (!*end)
			return (int)n;
		if (*end != ',')
			return -EINVAL;
		s = end + 1;
	}
}

uint32_t pto_host_cpus(void)
{
	cpu_set_t allowed;
	long n;

	if (!sched_getaffinity(0, sizeof(allowed), &allowed))
		return (uint32_t)CPU_COUNT(&allowed);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? (uint32_t)n : 1;
}

/* Defaults, then the environment's overrides, into a whole struct. */
static void config_defaults(struct pto_config *cfg, struct env_read *rd)
{
	uint32_t ncpu = pto_host_cpus();
	uint32_t half = ncpu > 3 ? ncpu / 2 : 1;
	const char *s;

	memset(cfg, 0, sizeof(*cfg));
	cfg->size = sizeof(*cfg);
	cfg->device = "sim";
	cfg->task_window = DEFAULT_TASK_WINDOW;
	cfg->heap_size = DEFAULT_HEAP_SIZE;
	/* room for ~8 dependencies and ~8 tracked tensors per task in flight */
	cfg->dep_pool_size = 8 * DEFAULT_TASK_WINDOW;
	cfg->tensormap_pool_size = 8 * DEFAULT_TASK_WINDOW;
	/* as many matrix and vector cores as the host has CPUs to run them */
	cfg->cores[PTO_WORKER_CUBE] = half;
	cfg->cores[PTO_WORKER_VECTOR] = half;
	cfg->cores[PTO_WORKER_AICPU] = 1;
	cfg->cores[PTO_WORKER_ACCEL] = 1;
	cfg->stall_timeout_ms = DEFAULT_STALL_MS;
	cfg->arena_size = DEFAULT_ARENA_SIZE;
	cfg->nrings = PTO_MAX_RINGS;
	s = env(PTO_ENV_DEVICE);
	if (s && *s)
		cfg->device = s;
	env_u32(rd, PTO_ENV_RINGS, &cfg->nrings,
		"want a number of rings from 1 to 4");
	env_ring_u32(rd, PTO_ENV_TASK_WINDOW, &cfg->task_window, cfg,
		     offsetof(struct pto_ring_config, task_window));
	env_ring_heap(rd, cfg);
	env_ring_u32(rd, PTO_ENV_DEP_POOL, &cfg->dep_pool_size, cfg,
		     offsetof(struct pto_ring_config, dep_pool_size));
	env_ring_u32(rd, PTO_ENV_TENSORMAP_POOL, &cfg->tensormap_pool_size,
		     cfg, offsetof(struct pto_ring_config,
				   tensormap_pool_size));
	env_u32(rd, PTO_ENV_STALL_TIMEOUT_MS, &cfg->stall_timeout_ms,
		"want milliseconds from 1 to 4294967295");
	env_size(rd, PTO_ENV_ARENA_SIZE, &cfg->arena_size);
	s = env(PTO_ENV_SIM_CORES);
	if (s && pto_parse_cores(s, cfg->cores))
		env_refuse(rd, PTO_ENV_SIM_CORES,
			   "want e.g. cube=4,vector=8,aicpu=1,accel=1 (each type "
			   "once, at most 256 cores)");
	s = env(PTO_ENV_TRACE);
	if (s && *s)
		cfg->trace_path = s;
	env_sched(rd, cfg);
	s = env(PTO_ENV_CPUS);
	if (s && *s)
		cfg->cpus = s;
	env_u32(rd, PTO_ENV_CHECK, &cfg->check, "want 0 (off) or 1 (on)");
	env_stats(rd);
}

void pto_config_init_sized(struct pto_config *cfg, size_t size)
{
	struct env_read quiet = { .report = false };
	struct pto_config full;

	if (!cfg || size < PTO_CONFIG_SIZE_0_1)
		return;
	config_defaults(&full, &quiet);
	full.size = (uint32_t)size;
	/* a caller newer than us gets our fields and zeroes past them */
	memset(cfg, 0, size);
	memcpy(cfg, &full, size < sizeof(full) ? size : sizeof(full));
}

void (pto_config_init)(struct pto_config *cfg)
{
	pto_config_init_sized(cfg, PTO_CONFIG_SIZE_0_1);
}

/*
 * How many of a caller's bytes are fields, for a struct of size bytes.
 * A layout's tail padding is not: libpto 0.2 put nrings in 0.1's, which
 * a 0.1 program leaves as its compiler pleases (zero after a designated
 * initializer).  Each release that adds fields adds its layout here.
 */
static size_t config_fields_end(size_t size)
{
	const size_t end_0_1 = offsetof(struct pto_config, size) +
			       sizeof(uint32_t);
	const size_t end_0_2 = offsetof(struct pto_config, check) +
			       sizeof(uint32_t);

	if (size < end_0_2)
		return end_0_1;
	return end_0_2;
}

int pto_config_import(const struct pto_config *cfg, struct pto_config *out)
{
	size_t size = cfg->size ? cfg->size : PTO_CONFIG_SIZE_0_1;
	const unsigned char *tail = (const unsigned char *)cfg;
	struct env_read rd = { .report = true };
	size_t i;

	if (size < PTO_CONFIG_SIZE_0_1) {
		pto_log("invalid configuration: size %zu is smaller than any "
			"struct pto_config (call pto_config_init() first)\n",
			size);
		return -EINVAL;
	}
	/* what the caller knows and we do not must be left at its default */
	for (i = sizeof(*out); i < size; i++) {
		if (tail[i]) {
			pto_log("invalid configuration: it sets fields this "
				"libpto %d.%d does not know (byte %zu of %zu); "
				"use a newer libpto\n", PTO_VERSION_MAJOR,
				PTO_VERSION_MINOR, i, size);
			return -E2BIG;
		}
	}
	/* fields the caller does not know take their defaults */
	config_defaults(out, &rd);
	env_typos();
	if (rd.bad)
		return -EINVAL;
	/*
	 * Out of range is as bad as unparsable, also when the program sets
	 * the field itself (PTO_TASK_WINDOW=6 under ptorun -w 64): what the
	 * environment alone makes is checked before the program's fields.
	 */
	if (pto_config_validate(out))
		return -EINVAL;
	memcpy(out, cfg, config_fields_end(size));
	out->size = sizeof(*out);
	if (!out->device)	/* the default, as "sim" is documented */
		out->device = "sim";
	return 0;
}

/* what is wrong, and the variable that may have set it */
static int bad_from(enum pto_env e, const char *what)
{
	const char *s = (unsigned int)e < PTO_NUM_ENV ? env(e) : NULL;

	if (s)
		pto_log("invalid configuration: %s (the environment has %s=%s)\n",
			what, env_names[e], s);
	else
		pto_log("invalid configuration: %s\n", what);
	return -EINVAL;
}

static int bad(const char *what)
{
	return bad_from(PTO_NUM_ENV, what);
}

void pto_ring_env_fprint(FILE *out, enum pto_ring kind, uint32_t nrings,
			 const uint64_t *sizes, uint32_t ring, uint64_t value)
{
	uint32_t i;

	fprintf(out, "%s=", pto_ring_env(kind));
	for (i = 0; i < nrings; i++)
		fprintf(out, "%s%llu", i ? "," : "",
			(unsigned long long)(i == ring ? value : sizes[i]));
}

bool pto_config_heap_default(const struct pto_config *cfg)
{
	uint32_t r;

	if (cfg->heap_size != DEFAULT_HEAP_SIZE)
		return false;
	for (r = 0; r < PTO_MAX_DEPTH_RINGS; r++)
		if (cfg->ring[r].heap_size &&
		    cfg->ring[r].heap_size != DEFAULT_HEAP_SIZE)
			return false;
	return true;
}

struct pto_ring_config pto_ring_cfg(const struct pto_config *cfg,
				    uint32_t ring)
{
	const struct pto_ring_config *r = &cfg->ring[ring];

	return (struct pto_ring_config){
		.task_window = r->task_window ? : cfg->task_window,
		.dep_pool_size = r->dep_pool_size ? : cfg->dep_pool_size,
		.tensormap_pool_size = r->tensormap_pool_size ? :
				       cfg->tensormap_pool_size,
		.heap_size = r->heap_size ? : cfg->heap_size,
	};
}

static int bad_ring(uint32_t ring, enum pto_env e, const char *what)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "ring %u's %s", ring, what);
	return bad_from(e, msg);
}

static int validate_ring(const struct pto_config *cfg, uint32_t ring)
{
	struct pto_ring_config r = pto_ring_cfg(cfg, ring);

	/* reserved for a later field: a value there asks for what we lack */
	if (cfg->ring[ring].__pad)
		return bad_ring(ring, PTO_NUM_ENV, "__pad must be 0 (reserved)");
	if (!pto_is_pow2(r.task_window) ||
	    r.task_window < PTO_TASK_WINDOW_MIN ||
	    r.task_window > PTO_TASK_WINDOW_MAX)
		return bad_ring(ring, PTO_ENV_TASK_WINDOW, "task_window must be a power of two in "
				"[4, 2^24]");
	if (r.heap_size < PTO_HEAP_SIZE_MIN || r.heap_size > PTO_HEAP_SIZE_MAX)
		return bad_ring(ring, PTO_ENV_HEAP_SIZE, "heap_size must be in [4 KiB, 1 TiB]");
	if (r.dep_pool_size < PTO_DEP_POOL_MIN ||
	    r.dep_pool_size > PTO_DEP_POOL_MAX)
		return bad_ring(ring, PTO_ENV_DEP_POOL, "dep_pool_size must be in [16, 2^30 - 1)");
	if (r.tensormap_pool_size < PTO_TENSORMAP_POOL_MIN ||
	    r.tensormap_pool_size > PTO_TENSORMAP_POOL_MAX)
		return bad_ring(ring, PTO_ENV_TENSORMAP_POOL,
				"tensormap_pool_size must be in [16, "
				"2^30]");
	return 0;
}

/* Every CPU of a PTO_CPUS list must be one this process may run on. */
static int check_cpus_allowed(const uint32_t *cpus, uint32_t n)
{
	cpu_set_t allowed;
	char msg[96];
	uint32_t i;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return 0;	/* cannot tell: pinning will say */
	for (i = 0; i < n; i++) {
		if (cpus[i] < CPU_SETSIZE && CPU_ISSET(cpus[i], &allowed))
			continue;
		snprintf(msg, sizeof(msg), "cpus: CPU %u is not one this "
			 "process may run on (see taskset -p)", cpus[i]);
		return bad_from(PTO_ENV_CPUS, msg);
	}
	return 0;
}

int pto_config_validate(const struct pto_config *cfg)
{
	uint32_t t, r, total = 0, cpus[256];
	int ret;

	if (!cfg->device || !*cfg->device)
		return bad("no device");
	if (!cfg->nrings || cfg->nrings > PTO_MAX_RINGS)
		return bad_from(PTO_ENV_RINGS, "nrings must be in [1, 4]");
	/* rings past nrings too: a bad value is a typo whether used or not */
	for (r = 0; r < PTO_MAX_RINGS; r++) {
		ret = validate_ring(cfg, r);
		if (ret)
			return ret;
	}
	if (!cfg->stall_timeout_ms)
		return bad_from(PTO_ENV_STALL_TIMEOUT_MS,
				"stall_timeout_ms must be at least 1");
	if (cfg->sched > PTO_SCHED_SHARDS)
		return bad("sched must be PTO_SCHED_AUTO, _THREAD, _WORKERS "
			   "or _SHARDS");
	if (cfg->check > 1)
		return bad_from(PTO_ENV_CHECK, "check must be 0 or 1");
	if (cfg->cpus && strcmp(cfg->cpus, "any")) {
		ret = pto_parse_cpus(cfg->cpus, cpus, 256);
		if (ret < 0)
			return bad_from(PTO_ENV_CPUS, "cpus must be a list "
					"like 0-3,8 (at most 256 CPUs) or "
					"\"any\"");
		ret = check_cpus_allowed(cpus, (uint32_t)ret);
		if (ret)
			return ret;
	}
	if (!cfg->arena_size || cfg->arena_size > PTO_ARENA_SIZE_MAX)
		return bad_from(PTO_ENV_ARENA_SIZE,
				"arena_size must be in [1, 1 TiB]");
	for (t = 0; t < PTO_NUM_WORKER_TYPES; t++) {
		if (cfg->cores[t] > PTO_CORES_PER_TYPE_MAX)
			return bad_from(PTO_ENV_SIM_CORES,
					"at most 256 cores per worker type");
		total += cfg->cores[t];
	}
	if (!total)
		return bad_from(PTO_ENV_SIM_CORES, "cores[] has no core of "
				"any worker type (at least one is needed)");
	return 0;
}

const char *pto_worker_type_name(uint32_t type)
{
	return type < PTO_NUM_WORKER_TYPES ? type_names[type] : "?";
}
