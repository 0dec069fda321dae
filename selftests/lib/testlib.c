// SPDX-License-Identifier: MIT
/*
 * Shared helpers of the libpto tests.  See testlib.h.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

uint64_t tl_env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return def;
	return v;
}

uint64_t tl_env_seed(const char *name)
{
	const char *s = getenv(name);

	if (s && *s)
		return tl_env_u64(name, 1);
	return tl_mix(tl_now_ns() ^ ((uint64_t)getpid() << 32));
}

void tl_config(struct pto_config *cfg, uint32_t window, uint64_t heap)
{
	pto_config_init(cfg);
	if (window)
		cfg->task_window = window;
	if (heap)
		cfg->heap_size = heap;
	cfg->cores[PTO_WORKER_CUBE] = 2;
	cfg->cores[PTO_WORKER_VECTOR] = 2;
	cfg->cores[PTO_WORKER_AICPU] = 1;
	cfg->cores[PTO_WORKER_ACCEL] = 1;
	cfg->stall_timeout_ms = 20000;
	cfg->trace_path = NULL;
}

struct pto_runtime *tl_runtime(const struct pto_config *cfg)
{
	struct pto_runtime *rt = NULL;
	int ret = pto_runtime_create(cfg, &rt);

	if (ret || !rt)
		bail_out("pto_runtime_create: %d (%s)", ret, strerror(-ret));
	return rt;
}

const struct tl_policy tl_policies[TL_NPOLICIES] = {
	{ PTO_SCHED_THREAD, "thread" },
	{ PTO_SCHED_WORKERS, "workers" },
	{ PTO_SCHED_SHARDS, "shards" },
};

uint64_t tl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint32_t tl_cpus(void)
{
	cpu_set_t set;

	if (!sched_getaffinity(0, sizeof(set), &set))
		return (uint32_t)CPU_COUNT(&set);
	return (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
}

int tl_threads_named(const char *prefix, long *tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		bail_out("/proc/self/task: %s", strerror(errno));
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* it exited meanwhile */
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, prefix, strlen(prefix))) {
			n++;
			if (tid)
				*tid = atol(e->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* ---- gates -------------------------------------------------------------- */

void tl_gate_init(struct tl_gate *g)
{
	pthread_condattr_t attr;

	pthread_mutex_init(&g->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&g->cond, &attr);
	pthread_condattr_destroy(&attr);
	g->open = 0;
}

void tl_gate_destroy(struct tl_gate *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

void tl_gate_open(struct tl_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = 1;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void tl_gate_close(struct tl_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = 0;
	pthread_mutex_unlock(&g->lock);
}

int tl_gate_wait(struct tl_gate *g, unsigned int timeout_ms)
{
	struct timespec until;
	int ret = 0;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&g->lock);
	while (!g->open && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&g->cond, &g->lock, &until);
	ret = g->open ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&g->lock);
	return ret;
}

/* ---- stderr capture ------------------------------------------------------ */

void tl_capture_begin(struct tl_capture *c)
{
	fflush(stderr);
	c->tmp = tmpfile();
	if (!c->tmp)
		bail_out("tmpfile: %s", strerror(errno));
	c->saved_fd = dup(STDERR_FILENO);
	if (c->saved_fd < 0 || dup2(fileno(c->tmp), STDERR_FILENO) < 0)
		bail_out("dup: %s", strerror(errno));
}

char *tl_capture_end(struct tl_capture *c)
{
	long len;
	char *text;

	fflush(stderr);
	dup2(c->saved_fd, STDERR_FILENO);
	close(c->saved_fd);
	len = ftell(c->tmp);
	if (len < 0)
		len = 0;
	text = calloc(1, len + 1);
	if (!text)
		bail_out("out of memory");
	rewind(c->tmp);
	len = fread(text, 1, len, c->tmp);
	text[len] = '\0';
	fclose(c->tmp);
	return text;
}

/* Read fd to its end, keeping what fits in text (len bytes with the NUL). */
static void read_to_end(int fd, char *text, size_t len)
{
	char sink[512];
	size_t got = 0;
	ssize_t n;

	for (;;) {
		bool room = text && got + 1 < len;

		n = room ? read(fd, text + got, len - 1 - got) :
			   read(fd, sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (room)
			got += (size_t)n;
	}
	if (text && len)
		text[got] = '\0';
}

int tl_in_child(int (*fn)(void *arg), void *arg, unsigned int timeout_s,
		char *text, size_t len)
{
	int fds[2], status = 0;
	pid_t pid;

	fflush(stdout);		/* or the child prints the TAP so far again */
	fflush(stderr);
	if (pipe(fds))
		bail_out("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		bail_out("fork: %s", strerror(errno));
	if (pid == 0) {
		alarm(timeout_s);
		close(fds[0]);
		if (dup2(fds[1], STDERR_FILENO) < 0)
			_exit(125);
		_exit(fn(arg));
	}
	close(fds[1]);
	read_to_end(fds[0], text, len);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return status;
}

const char *tl_status_text(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	return buf;
}

static uint64_t suffix_scale(const char *s, const char **end)
{
	static const struct {
		const char *name;
		uint64_t scale;
	} sfx[] = {
		{ "KiB", 1ull << 10 }, { "MiB", 1ull << 20 },
		{ "GiB", 1ull << 30 }, { "kB", 1ull << 10 },
		{ "KB", 1ull << 10 }, { "MB", 1ull << 20 },
		{ "GB", 1ull << 30 }, { "K", 1ull << 10 },
		{ "k", 1ull << 10 }, { "M", 1ull << 20 },
		{ "G", 1ull << 30 },
	};
	size_t i, n;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		n = strlen(sfx[i].name);
		/* a suffix, not the start of a word ("8 Mtasks" is no size) */
		if (!strncmp(s, sfx[i].name, n) && !isalpha((unsigned char)s[n])) {
			*end = s + n;
			return sfx[i].scale;
		}
	}
	*end = s;
	return 1;
}

int tl_count(const char *text, const char *want)
{
	const char *p;
	int n = 0;

	for (p = text; (p = strstr(p, want)); p++)
		n++;
	return n;
}

int tl_numbers(const char *text, uint64_t *out, int max)
{
	const char *p = text;
	int n = 0;

	while (*p && n < max) {
		char *end;
		uint64_t v;

		if (!isdigit((unsigned char)*p) ||
		    (p > text && (isalnum((unsigned char)p[-1]) ||
				  p[-1] == '.'))) {
			p++;
			continue;
		}
		v = strtoull(p, &end, 10);
		if (*end == '.') {	/* "1.5 MiB": skip fractions */
			while (isdigit((unsigned char)*++end))
				;
			p = end;
			continue;
		}
		out[n++] = v * suffix_scale(end, &p);
	}
	return n;
}

/* ---- the sequential reference -------------------------------------------- */

void tl_rec_init(struct tl_rec *r, struct pto_runtime *rt)
{
	memset(r, 0, sizeof(*r));
	r->rt = rt;
}

static void free_regions(struct tl_region *reg, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(reg[i].shadow);
	free(reg);
}

void tl_rec_free(struct tl_rec *r)
{
	free(r->task);
	free(r->views);
	free_regions(r->host, r->nhost);
	free_regions(r->outs, r->nouts);
	memset(r, 0, sizeof(*r));
}

void tl_rec_reset(struct tl_rec *r)
{
	free_regions(r->host, r->nhost);
	free_regions(r->outs, r->nouts);
	r->host = r->outs = NULL;
	r->nhost = r->host_cap = r->nouts = r->outs_cap = 0;
	r->ntask = 0;
	r->nviews = 0;
	r->bad = 0;
	r->err[0] = '\0';
}

int tl_register(struct tl_rec *r, uint32_t kid, enum pto_worker_type type,
		pto_kernel_fn fn, const char *name)
{
	if (kid >= TL_MAX_KERNELS)
		bail_out("kernel id %u too large for the recorder", kid);
	r->fn[kid] = fn;
	return pto_kernel_register(r->rt, kid, type, fn, name);
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = realloc(p, n * elem);
	if (!p)
		bail_out("out of memory");
	*cap = n;
	return p;
}

static void add_region(struct tl_region **reg, size_t *n, size_t *cap,
		       uintptr_t addr, uint64_t size, const void *init)
{
	struct tl_region *g;

	*reg = grow(*reg, cap, *n + 1, sizeof(**reg));
	g = &(*reg)[(*n)++];
	g->addr = addr;
	g->size = size;
	/* +1: a zero-sized region still gets a distinct shadow */
	g->shadow = calloc(1, size + 1);
	if (!g->shadow)
		bail_out("out of memory");
	if (init)
		memcpy(g->shadow, init, size);
}

void tl_host(struct tl_rec *r, void *ptr, uint64_t size)
{
	add_region(&r->host, &r->nhost, &r->host_cap, (uintptr_t)ptr, size,
		   ptr);
}

/* Elements of a view's shape (its first ndim dimensions). */
static uint64_t view_elems(const struct pto_view *v)
{
	uint64_t n = 1;
	uint32_t d;

	for (d = 0; d < v->ndim && d < PTO_MAX_DIMS; d++)
		n *= v->shape[d];
	return n;
}

/*
 * An OUTPUT view (or pto_alloc()'s) as submitted (in) and as filled in
 * (out): a buffer, offset 0, the same type and shape, row-major strides.
 */
static void check_filled(struct tl_rec *r, const struct pto_view *in,
			 const struct pto_view *out, const char *what)
{
	uint64_t stride = 1;
	uint32_t d;
	int bad = !out->base || out->offset || out->dtype != in->dtype ||
		  out->ndim != in->ndim;

	for (d = in->ndim; !bad && d-- > 0;) {
		bad = out->shape[d] != in->shape[d] || out->stride[d] != stride;
		stride *= in->shape[d];
	}
	if (!bad)
		return;
	if (!r->bad++)
		snprintf(r->err, sizeof(r->err),
			 "task %zu: %s filled in as base %p offset %llu, "
			 "ndim %u, stride[0] %llu: not a row-major buffer",
			 r->ntask, what, out->base,
			 (unsigned long long)out->offset, out->ndim,
			 (unsigned long long)out->stride[0]);
}

/* Room for a task in the log, and for nviews more views. */
static struct tl_task *new_task(struct tl_rec *r, size_t nviews)
{
	r->task = grow(r->task, &r->task_cap, r->ntask + 1, sizeof(*r->task));
	r->views = grow(r->views, &r->views_cap, r->nviews + nviews + 1,
			sizeof(*r->views));
	return &r->task[r->ntask];
}

int64_t tl_submit(struct tl_rec *r, uint32_t kid, enum pto_worker_type type,
		  const struct pto_param *p, uint32_t n)
{
	struct tl_task *t;
	size_t nv = 0;
	int64_t id;
	uint32_t i;

	for (i = 0; i < n && i < PTO_MAX_PARAMS; i++)
		nv += (p[i].kind & PTO_PARAM_VIEW) && p[i].view;
	t = new_task(r, nv);
	/* the views as submitted: an OUTPUT view is filled in by the call */
	t->view0 = r->nviews;
	for (i = 0, nv = 0; i < n && i < PTO_MAX_PARAMS; i++)
		if ((p[i].kind & PTO_PARAM_VIEW) && p[i].view)
			r->views[t->view0 + nv++] = *p[i].view;
	id = pto_submit_task(r->rt, kid, type, p, n);
	if (id < 0)
		return id;
	if (n > PTO_MAX_PARAMS)
		bail_out("submit of %u params accepted", n);
	t->kid = kid;
	t->n = n;
	memcpy(t->p, p, n * sizeof(*p));
	for (i = 0, nv = 0; i < n; i++) {
		t->out[i] = 0;
		if (p[i].kind == PTO_PARAM_OUTPUT)
			t->out[i] = (uintptr_t)*p[i].ref;
		if (!(p[i].kind & PTO_PARAM_VIEW))
			continue;
		if (p[i].kind == (PTO_PARAM_OUTPUT | PTO_PARAM_VIEW)) {
			t->out[i] = (uintptr_t)p[i].view->base;
			check_filled(r, &r->views[t->view0 + nv], p[i].view,
				     "OUTPUT view");
		}
		nv++;
	}
	r->nviews += nv;
	r->ntask++;
	return id;
}

int tl_alloc(struct tl_rec *r, struct pto_view *view)
{
	struct pto_view in = *view;
	struct tl_task *t;
	int ret = pto_alloc(r->rt, view);

	if (ret)
		return ret;
	t = new_task(r, 1);
	t->kid = TL_ALLOC_KID;
	t->n = 1;
	t->view0 = r->nviews;
	t->p[0] = PTO_OUT_VIEW(NULL);
	t->out[0] = (uintptr_t)view->base;
	r->views[r->nviews++] = in;
	check_filled(r, &in, view, "pto_alloc() view");
	r->ntask++;
	return 0;
}

static struct tl_region *find(struct tl_region *reg, size_t n, uintptr_t a,
			      uint64_t size, bool newest_first)
{
	size_t i, k;

	for (k = 0; k < n; k++) {
		i = newest_first ? n - 1 - k : k;
		if (a >= reg[i].addr && a - reg[i].addr <= reg[i].size &&
		    size <= reg[i].size - (a - reg[i].addr))
			return &reg[i];
	}
	return NULL;
}

/*
 * The shadow address of [a, a + size).  OUTPUT allocations are searched
 * newest first: the runtime reuses heap addresses, and the newest
 * allocation at an address is the one a correct program still refers to.
 */
static uint64_t resolve(struct tl_rec *r, uintptr_t a, uint64_t size)
{
	struct tl_region *g = find(r->outs, r->nouts, a, size, true);

	if (!g)
		g = find(r->host, r->nhost, a, size, false);
	if (!g)
		return 0;
	return (uintptr_t)(g->shadow + (a - g->addr));
}

/* The descriptor libpto passes for view v, but for its address. */
static void view_desc(struct pto_view_desc *d, const struct pto_view *v,
		      bool row_major)
{
	uint64_t stride = 1;
	uint32_t dim;

	memset(d, 0, sizeof(*d));
	d->ndim = v->ndim;
	d->dtype = (uint16_t)v->dtype;
	d->elem_size = (uint16_t)pto_dtype_size(v->dtype);
	for (dim = PTO_MAX_DIMS; dim-- > 0;) {
		d->shape[dim] = dim < v->ndim ? v->shape[dim] : 1;
		d->stride[dim] = dim >= v->ndim ? 0 :
				 row_major ? stride : v->stride[dim];
		if (dim < v->ndim)
			stride *= v->shape[dim];
	}
}

/*
 * Parameter i of task t, a view: its descriptor in d, pointing into the
 * shadow (an OUTPUT's made now).  0, or -1 with r->err.
 */
static int replay_view(struct tl_rec *r, size_t t, uint32_t i,
		       struct pto_view_desc *d, const struct pto_view *v)
{
	const struct tl_task *tk = &r->task[t];
	uint32_t kind = tk->p[i].kind & ~(uint32_t)PTO_PARAM_VIEW, dim;
	uint64_t es = pto_dtype_size(v->dtype), last = 0, lo;
	bool empty = false;

	view_desc(d, v, kind == PTO_PARAM_OUTPUT);
	if (kind == PTO_PARAM_OUTPUT) {
		add_region(&r->outs, &r->nouts, &r->outs_cap, tk->out[i],
			   view_elems(v) * es, NULL);
		d->addr = (uintptr_t)r->outs[r->nouts - 1].shadow;
		return 0;
	}
	for (dim = 0; dim < v->ndim; dim++) {
		empty |= !v->shape[dim];
		if (v->shape[dim])
			last += (v->shape[dim] - 1) * v->stride[dim];
	}
	lo = (uintptr_t)v->base + v->offset * es;
	d->addr = resolve(r, lo, empty ? 0 : (last + 1) * es);
	if (d->addr)
		return 0;
	snprintf(r->err, sizeof(r->err),
		 "task %zu param %u: view at %#llx, %llu elements to the last, "
		 "is in no buffer", t, i, (unsigned long long)lo,
		 (unsigned long long)last);
	return -1;
}

int tl_replay(struct tl_rec *r)
{
	static struct pto_view_desc desc[PTO_MAX_PARAMS];
	uint64_t args[PTO_MAX_PARAMS];
	size_t t, vi;
	uint32_t i;

	if (r->bad)
		return -1;
	for (t = 0; t < r->ntask; t++) {
		struct tl_task *tk = &r->task[t];

		if (tk->kid == TL_ALLOC_KID) {
			add_region(&r->outs, &r->nouts, &r->outs_cap,
				   tk->out[0], view_elems(&r->views[tk->view0]) *
				   pto_dtype_size(r->views[tk->view0].dtype),
				   NULL);
			continue;
		}
		vi = tk->view0;
		for (i = 0; i < tk->n; i++) {
			const struct pto_param *p = &tk->p[i];
			uintptr_t a = (uintptr_t)p->base + p->offset;

			if (p->kind & PTO_PARAM_VIEW) {
				if (replay_view(r, t, i, &desc[i],
						&r->views[vi++]))
					return -1;
				args[i] = (uintptr_t)&desc[i];
				continue;
			}
			switch (p->kind) {
			case PTO_PARAM_SCALAR:
				args[i] = p->value;
				continue;
			case PTO_PARAM_OUTPUT:
				add_region(&r->outs, &r->nouts, &r->outs_cap,
					   tk->out[i], p->size, NULL);
				args[i] = (uintptr_t)r->outs[r->nouts - 1].shadow;
				continue;
			default:
				args[i] = resolve(r, a, p->size);
			}
			if (!args[i]) {
				snprintf(r->err, sizeof(r->err),
					 "task %zu param %u: address %#lx+%llu is in no buffer",
					 t, i, (unsigned long)a,
					 (unsigned long long)p->size);
				return -1;
			}
		}
		if (!r->fn[tk->kid]) {
			snprintf(r->err, sizeof(r->err),
				 "task %zu: kernel %u has no C function", t,
				 tk->kid);
			return -1;
		}
		r->fn[tk->kid](args, tk->n);
	}
	return 0;
}

int64_t tl_compare(struct tl_rec *r, const void *ptr)
{
	struct tl_region *g = NULL;
	const uint8_t *a = ptr;
	uint64_t i;

	for (i = 0; i < r->nhost; i++)
		if (r->host[i].addr == (uintptr_t)ptr)
			g = &r->host[i];
	if (!g)
		bail_out("tl_compare: %p is no registered buffer", ptr);
	for (i = 0; i < g->size; i++)
		if (a[i] != g->shadow[i])
			return (int64_t)i;
	return -1;
}
