// SPDX-License-Identifier: MIT
/*
 * Chrome / Perfetto JSON trace ("traceEvents" array format).
 *
 * Tracks (one pid, the process's own):
 *   orchestrator  the thread in pto_run() (its real tid): a "submit" span
 *                 per task and a "stall" span per wait for ring room,
 *                 including the one that ends in -EDEADLK
 *   scheduler     the scheduler thread (its real tid), one span per run
 *   cube0 ...     one per core, a slice per task named by its kernel;
 *                 a core is not a host thread, so its tid is
 *                 PTO_TRACE_CORE_TID + core, outside the range of real tids
 * plus flow arrows (ph "s" -> "f") from each producer's slice to its
 * consumer's, and counters (ph "C") for each task ring's occupancy, its
 * heap bytes in use, and the orchestrator's stalls.
 *
 * Events stream to the file as they happen.  What the slice of a task
 * needs from its submission (id, depth, parameters) and what its
 * consumers' flow arrows need from its execution (core, times) is kept in
 * a record per task slot, so memory is bounded by the task windows.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"
#include "fd.h"
#include "json.h"
#include "log.h"
#include "orchestrator.h"
#include "runtime.h"
#include "sync.h"
#include "trace.h"

/* Real tids stay below 2^22 (PID_MAX_LIMIT); cores are numbered above. */
#define PTO_TRACE_CORE_TID	(1u << 30)

/* Track order in the viewer: orchestrator, scheduler, then the cores. */
enum { SORT_ORCH = -2, SORT_SCHED = -1 };

/* What one task slot's task left for its slice and its consumers' arrows. */
struct trace_rec {
	uint64_t handle1;	/* the task's handle + 1; 0: none yet */
	uint64_t id;
	uint64_t start_ns, end_ns;
	uint32_t depth;
	uint32_t core;
	bool done;		/* start/end/core are valid */
	uint8_t nparams;
	uint8_t kind[PTO_MAX_ARGS];
	uint64_t size[PTO_MAX_ARGS];
};

struct pto_trace {
	FILE *f;
	pthread_mutex_t lock;	/* the file, the records, the counters */
	uint64_t t0;
	int pid;
	bool first;
	uint64_t flows;		/* flow ids handed out */
	uint64_t stalls;
	int orch_tid;		/* last orchestrator track named */
	int sched_tid;		/* and scheduler track */
	struct trace_rec *rec[PTO_MAX_RINGS];
	uint32_t rec_mask[PTO_MAX_RINGS];
	char *path;		/* the file's name, for messages */
	int write_err;		/* errno of the first failed write, or 0 */
	bool told;		/* pto_trace_flush() has returned it */
	bool ended;		/* the document is closed: see end_at_exit() */
	dev_t dev;		/* the file, to tell whether a path is ours */
	ino_t ino;
	struct pto_trace *next;	/* open traces of the process */
};

/*
 * The traces open in this process.  Two runtimes alive at once given the
 * same path (PTO_TRACE applies to every runtime) would interleave two
 * JSON documents in one file, or the second would truncate the first's:
 * the second writes PATH.1 instead, the third PATH.2, and so on.
 */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pto_trace *open_traces;

/*
 * fork(): a child inherits each trace's stdio buffer, and its exit()
 * would write the parent's buffered events into the file a second time,
 * mid-document.  So every trace is flushed, and held still, across a
 * fork: the child's copies of the buffers are empty.
 */
static void fork_prepare(void)
{
	struct pto_trace *t;

	pthread_mutex_lock(&open_lock);
	for (t = open_traces; t; t = t->next) {
		pthread_mutex_lock(&t->lock);
		fflush(t->f);	/* an error stays in ferror() for later */
	}
}

static void fork_done(void)
{
	struct pto_trace *t;

	for (t = open_traces; t; t = t->next)
		pthread_mutex_unlock(&t->lock);
	pthread_mutex_unlock(&open_lock);
}

/*
 * exit() with a traced runtime still alive (a program that returns from
 * main without pto_runtime_destroy(), a Python interpreter that exits):
 * exit() flushes the events into the file with every stdio stream, but
 * the document never ended, and no viewer opened it.  So each trace this
 * process opened is ended here; a task that completes after (a run still
 * in progress) is left out, and a destroy after (the program's own
 * atexit() handler) adds nothing.  A child of fork() leaves its parent's
 * traces alone.
 */
/* Close the JSON document, once; the caller holds t->lock or owns t. */
static void end_document(struct pto_trace *t)
{
	if (!t->ended)
		fputs("\n]}\n", t->f);
	t->ended = true;
}

static void end_at_exit(void)
{
	struct pto_trace *t;

	pthread_mutex_lock(&open_lock);
	for (t = open_traces; t; t = t->next) {
		if (t->pid != (int)getpid())
			continue;
		pthread_mutex_lock(&t->lock);
		end_document(t);
		pthread_mutex_unlock(&t->lock);
	}
	pthread_mutex_unlock(&open_lock);
}

static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;

static void register_process_handlers(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
	atexit(end_at_exit);
}

/* Lock t to write an event: false, and not locked, once it has ended. */
static bool trace_lock(struct pto_trace *t)
{
	pthread_mutex_lock(&t->lock);
	if (!t->ended)
		return true;
	pthread_mutex_unlock(&t->lock);
	return false;
}

/* Is the file at path one an open trace writes?  Under open_lock. */
static bool path_taken(const char *path)
{
	struct pto_trace *t;
	struct stat st;

	if (stat(path, &st))
		return false;
	for (t = open_traces; t; t = t->next)
		if (t->dev == st.st_dev && t->ino == st.st_ino)
			return true;
	return false;
}

/*
 * Open path, or the first free PATH.N when another runtime writes path;
 * the name used goes into buf.  Under open_lock.
 */
static FILE *open_free_path(const char *path, char *buf, size_t len)
{
	unsigned int n;
	int fd, err;
	FILE *f;

	snprintf(buf, len, "%s", path);
	for (n = 1; path_taken(buf) && n < 1000; n++)
		snprintf(buf, len, "%s.%u", path, n);
	if (strcmp(buf, path))
		pto_log("trace: %s is written by another runtime of this "
			"process; this one's goes to %s\n", path, buf);
	fd = pto_fd_above_stdio(open(buf, O_WRONLY | O_CREAT | O_TRUNC |
				     O_CLOEXEC, 0666));
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f && fd >= 0) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

/*
 * Every writer unlocks through here: the first write that failed is
 * recorded with its errno (-ENOSPC for a full disk) while errno still
 * holds it; stdio's error flag alone keeps no cause, and a later flush
 * with nothing left to write would not fail at all.
 */
static void trace_unlock(struct pto_trace *t)
{
	if (!t->write_err && ferror(t->f))
		t->write_err = errno ? errno : EIO;
	pthread_mutex_unlock(&t->lock);
}

static int cur_tid(void)
{
	static __thread int tid;

	if (!tid)
		tid = (int)syscall(SYS_gettid);
	return tid;
}

static double rel_us(struct pto_trace *t, uint64_t ns)
{
	return ns > t->t0 ? (double)(ns - t->t0) / 1000.0 : 0.0;
}

static void event_sep(struct pto_trace *t)
{
	fputs(t->first ? "\n" : ",\n", t->f);
	t->first = false;
}

/* A metadata event naming (and placing) a thread track. */
static void name_track(struct pto_trace *t, uint32_t tid, const char *name,
		       int sort)
{
	event_sep(t);
	fprintf(t->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,"
		"\"tid\":%u,\"args\":{\"name\":", t->pid, tid);
	pto_json_str(t->f, name);
	fputs("}}", t->f);
	event_sep(t);
	fprintf(t->f, "{\"name\":\"thread_sort_index\",\"ph\":\"M\","
		"\"pid\":%d,\"tid\":%u,\"args\":{\"sort_index\":%d}}",
		t->pid, tid, sort);
}

static int alloc_records(struct pto_trace *t, struct pto_runtime *rt)
{
	uint32_t r;

	for (r = 0; r < rt->nrings; r++) {
		t->rec[r] = calloc(rt->ring[r].task_window, sizeof(*t->rec[r]));
		if (!t->rec[r])
			return -ENOMEM;
		t->rec_mask[r] = rt->ring[r].window_mask;
	}
	return 0;
}

static void free_trace(struct pto_trace *t)
{
	uint32_t r;

	for (r = 0; r < PTO_MAX_RINGS; r++)
		free(t->rec[r]);
	free(t->path);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static void write_header(struct pto_trace *t, struct pto_runtime *rt)
{
	uint32_t type, i, core = 0;
	char name[96];

	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", t->f);
	snprintf(name, sizeof(name), "pto %s", rt->device);
	event_sep(t);
	fprintf(t->f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,"
		"\"args\":{\"name\":", t->pid);
	pto_json_str(t->f, name);
	fputs("}}", t->f);
	for (type = 0; type < PTO_NUM_WORKER_TYPES; type++) {
		for (i = 0; i < rt->be.cores[type]; i++, core++) {
			snprintf(name, sizeof(name), "%s%u",
				 pto_worker_type_name(type), i);
			name_track(t, PTO_TRACE_CORE_TID + core, name, core);
		}
	}
}

struct pto_trace *pto_trace_open(const char *path, struct pto_runtime *rt)
{
	struct pto_trace *t = calloc(1, sizeof(*t));
	char name[PATH_MAX];
	struct stat st;

	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	pthread_once(&handlers_once, register_process_handlers);
	if (alloc_records(t, rt)) {
		free_trace(t);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&open_lock);
	t->f = open_free_path(path, name, sizeof(name));
	if (!t->f) {
		int err = errno;

		pthread_mutex_unlock(&open_lock);
		pto_log("cannot write trace %s: %s\n", name, strerror(err));
		free_trace(t);
		errno = err;
		return NULL;
	}
	t->path = strdup(name);
	if (!fstat(fileno(t->f), &st)) {
		t->dev = st.st_dev;
		t->ino = st.st_ino;
	}
	t->next = open_traces;
	open_traces = t;
	pthread_mutex_unlock(&open_lock);
	t->t0 = pto_now_ns();
	t->pid = (int)getpid();
	t->first = true;
	write_header(t, rt);
	return t;
}

void pto_trace_close(struct pto_trace *t)
{
	struct pto_trace **pp;

	if (!t)
		return;
	pthread_mutex_lock(&open_lock);
	for (pp = &open_traces; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&open_lock);
	end_document(t);
	/*
	 * A full disk: say so, rather than leave a cut-off trace unsaid,
	 * unless pto_trace_flush() has told the program already.
	 */
	errno = 0;
	if ((ferror(t->f) | fclose(t->f)) && !t->write_err)
		t->write_err = errno ? errno : EIO;
	if (t->write_err && !t->told)
		pto_log("trace %s: writing failed (%s): the trace is "
			"incomplete\n", t->path ? t->path : "?",
			strerror(t->write_err));
	free_trace(t);
}

int pto_trace_flush_file(struct pto_trace *t)
{
	int err;

	if (!t)
		return 0;
	pthread_mutex_lock(&t->lock);
	errno = 0;
	if (fflush(t->f) && !t->write_err)
		t->write_err = errno ? errno : EIO;
	if (!t->write_err && ferror(t->f))
		t->write_err = EIO;
	err = t->write_err;
	t->told |= err != 0;
	pthread_mutex_unlock(&t->lock);
	return -err;
}

static struct trace_rec *rec_of(struct pto_trace *t, uint64_t handle)
{
	uint32_t r = PTO_TASK_RING(handle);

	if (r >= PTO_MAX_RINGS || !t->rec[r])
		return NULL;
	return &t->rec[r][PTO_TASK_SEQ(handle) & t->rec_mask[r]];
}

void pto_trace_submit(struct pto_trace *t, uint64_t handle, uint64_t id,
		      uint32_t depth, const struct pto_param *p, uint32_t n)
{
	struct trace_rec *rec = rec_of(t, handle);
	uint32_t i;

	if (!rec)
		return;
	pthread_mutex_lock(&t->lock);
	rec->handle1 = handle + 1;
	rec->id = id;
	rec->depth = depth;
	rec->done = false;
	rec->nparams = n < PTO_MAX_ARGS ? n : PTO_MAX_ARGS;
	for (i = 0; i < rec->nparams; i++) {
		rec->kind[i] = (uint8_t)p[i].kind;
		rec->size[i] = p[i].kind == PTO_PARAM_SCALAR ? 0 : p[i].size;
	}
	trace_unlock(t);
}

/* Called with the lock held: the orchestrator's track, named once per tid. */
static int orch_track(struct pto_trace *t)
{
	int tid = cur_tid();

	if (tid != t->orch_tid) {
		name_track(t, (uint32_t)tid, "orchestrator", SORT_ORCH);
		t->orch_tid = tid;
	}
	return tid;
}

static void counter(struct pto_trace *t, const char *name, uint64_t ns,
		    const char *series, uint64_t value)
{
	event_sep(t);
	fputs("{\"name\":", t->f);
	pto_json_str(t->f, name);
	fprintf(t->f, ",\"ph\":\"C\",\"pid\":%d,\"ts\":%.3f,"
		"\"args\":{\"%s\":%" PRIu64 "}}", t->pid, rel_us(t, ns),
		series, value);
}

/* The occupancy of a task ring and its heap, as the orchestrator sees it. */
static void ring_counters(struct pto_trace *t, struct pto_runtime *rt,
			  uint32_t r, uint64_t ns)
{
	char name[32];

	snprintf(name, sizeof(name), "ring%u tasks", r);
	counter(t, name, ns, "in flight", orch_tasks_in_flight(rt, r));
	snprintf(name, sizeof(name), "ring%u heap", r);
	counter(t, name, ns, "bytes", orch_heap_used(rt, r));
}

void pto_trace_submitted(struct pto_trace *t, struct pto_runtime *rt,
			 uint64_t start_ns, uint64_t handle, uint64_t id,
			 const char *kernel)
{
	uint64_t now = pto_now_ns();
	uint32_t r = PTO_TASK_RING(handle);
	int tid;

	if (!trace_lock(t))
		return;
	tid = orch_track(t);
	event_sep(t);
	fputs("{\"name\":\"submit\",\"cat\":\"orchestrator\",\"ph\":\"X\",",
	      t->f);
	fprintf(t->f, "\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
		"\"args\":{\"task\":%" PRIu64 ",\"ring\":%u,\"kernel\":",
		t->pid, tid, rel_us(t, start_ns),
		rel_us(t, now) - rel_us(t, start_ns), id, r);
	pto_json_str(t->f, kernel);
	fputs("}}", t->f);
	ring_counters(t, rt, r, now);
	trace_unlock(t);
}

static const char *const kind_name[] = {
	[PTO_PARAM_INPUT] = "in",
	[PTO_PARAM_OUTPUT] = "out",
	[PTO_PARAM_INOUT] = "inout",
	[PTO_PARAM_OUTPUT_EXISTING] = "out_existing",
	[PTO_PARAM_NODEP] = "nodep",
	[PTO_PARAM_SCALAR] = "scalar",
};

/*
 * The view descriptor at argument word addr, in the task's heap block:
 * still the task's, as it has not been retired yet.
 */
static const struct pto_view_desc *view_desc(struct pto_runtime *rt,
					     uint64_t task, uint64_t addr)
{
	const struct pto_task_ring *r = &rt->ring[PTO_TASK_RING(task)];

	if (rt->be.host_addresses)
		return (const struct pto_view_desc *)(uintptr_t)addr;
	return (const struct pto_view_desc *)(r->heap + (addr - r->heap_dev));
}

static void write_dims(struct pto_trace *t, const char *name,
		       const __u64 *dim, uint32_t ndim)
{
	uint32_t i;

	fprintf(t->f, ",\"%s\":[", name);
	for (i = 0; i < ndim && i < PTO_MAX_DIMS; i++)
		fprintf(t->f, "%s%" PRIu64, i ? "," : "", (uint64_t)dim[i]);
	fputc(']', t->f);
}

/* A view parameter: where its first element is, its type and layout. */
static void write_view(struct pto_trace *t, const struct pto_view_desc *v,
		       uint64_t size)
{
	fprintf(t->f, ",\"view\":true,\"addr\":\"%#" PRIx64 "\","
		"\"size\":%" PRIu64 ",\"dtype\":\"%s\"",
		(uint64_t)v->addr, size, pto_dtype_name(v->dtype));
	write_dims(t, "shape", v->shape, v->ndim);
	write_dims(t, "stride", v->stride, v->ndim);
}

/*
 * "params":[...]: each one's kind, and its address and size, or value; a
 * view's address is its first element's, with its dtype, shape and
 * strides (in elements).
 */
static void write_params(struct pto_trace *t, struct pto_runtime *rt,
			 uint64_t task, const struct trace_rec *rec,
			 const struct pto_task_desc *d)
{
	uint32_t i, n = rec->nparams < d->nargs ? rec->nparams : d->nargs;
	const uint64_t *args = pto_desc_args(d);

	fputs(",\"params\":[", t->f);
	for (i = 0; i < n; i++) {
		uint8_t k = rec->kind[i];

		fprintf(t->f, "%s{\"kind\":\"%s\"", i ? "," : "",
			k <= PTO_PARAM_SCALAR ? kind_name[k] : "?");
		if (k == PTO_PARAM_SCALAR)
			fprintf(t->f, ",\"value\":%" PRIu64, args[i]);
		else if (pto_desc_arg_is_view(d, args, i))
			write_view(t, view_desc(rt, task, args[i]),
				   rec->size[i]);
		else
			fprintf(t->f, ",\"addr\":\"%#" PRIx64 "\","
				"\"size\":%" PRIu64, args[i], rec->size[i]);
		fputc('}', t->f);
	}
	fputc(']', t->f);
}

/* Half way through a slice: inside it, whatever the viewer's rounding. */
static double mid_us(struct pto_trace *t, uint64_t start, uint64_t end)
{
	return (rel_us(t, start) + rel_us(t, end)) / 2;
}

/*
 * An arrow from each producer's slice to the consumer's.  A producer not
 * traced (not run on a core) or whose slot was reused has no slice left
 * to start from, and gets no arrow.
 */
static void write_flows(struct pto_trace *t, struct pto_runtime *rt,
			const struct pto_completion *c,
			const struct pto_task_desc *d)
{
	const struct pto_dep_entry *dep =
		rt->ring[PTO_TASK_RING(c->task_id)].dep;
	double to = mid_us(t, c->start_ns, c->end_ns);
	uint32_t e;

	for (e = d->fanin_head; e; e = dep[e - 1].next) {
		uint64_t ph = dep[e - 1].task_id;
		const struct trace_rec *p = rec_of(t, ph);
		uint64_t id;

		if (!p || p->handle1 != ph + 1 || !p->done)
			continue;
		id = ++t->flows;
		event_sep(t);
		fprintf(t->f, "{\"name\":\"dep\",\"cat\":\"dep\",\"ph\":\"s\","
			"\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%u,"
			"\"ts\":%.3f,\"args\":{\"producer\":%" PRIu64 "}}",
			id, t->pid, PTO_TRACE_CORE_TID + p->core,
			mid_us(t, p->start_ns, p->end_ns), p->id);
		event_sep(t);
		fprintf(t->f, "{\"name\":\"dep\",\"cat\":\"dep\",\"ph\":\"f\","
			"\"bp\":\"e\",\"id\":%" PRIu64 ",\"pid\":%d,"
			"\"tid\":%u,\"ts\":%.3f}",
			id, t->pid, PTO_TRACE_CORE_TID + c->core, to);
	}
}

void pto_trace_task(struct pto_trace *t, struct pto_runtime *rt,
		    const struct pto_completion *c, const char *kernel)
{
	const struct pto_task_desc *d = pto_desc(rt, c->task_id);
	struct trace_rec *rec = rec_of(t, c->task_id);
	uint64_t end = c->end_ns > c->start_ns ? c->end_ns : c->start_ns;

	if (!trace_lock(t))
		return;
	if (rec && rec->handle1 != c->task_id + 1)
		rec = NULL;
	event_sep(t);
	fputs("{\"name\":", t->f);
	pto_json_str(t->f, kernel);
	fprintf(t->f, ",\"cat\":\"task\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,"
		"\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"task\":%" PRIu64 ","
		"\"kernel_id\":%u,\"ring\":%u,\"status\":%d",
		t->pid, PTO_TRACE_CORE_TID + c->core, rel_us(t, c->start_ns),
		rel_us(t, end) - rel_us(t, c->start_ns),
		rec ? rec->id : 0, d->kernel_id, PTO_TASK_RING(c->task_id),
		c->status);
	if (rec) {
		fprintf(t->f, ",\"depth\":%u", rec->depth);
		write_params(t, rt, c->task_id, rec, d);
		rec->core = c->core;
		rec->start_ns = c->start_ns;
		rec->end_ns = end;
		rec->done = true;
	}
	fputs("}}", t->f);
	write_flows(t, rt, c, d);
	trace_unlock(t);
}

static const char *result_name(int result, char *buf, size_t len)
{
	switch (result) {
	case 0:
		return "ok";
	case -EDEADLK:
		return "EDEADLK";
	case -ECANCELED:
		return "ECANCELED";
	}
	snprintf(buf, len, "%d", result);
	return buf;
}

static const char *const need_name[PTO_NUM_RINGS] = {
	[PTO_RING_TASK] = "task slots",
	[PTO_RING_HEAP] = "heap bytes",
	[PTO_RING_DEP] = "dep entries",
	[PTO_RING_TENSORMAP] = "tensormap entries",
};

void pto_trace_stall(struct pto_trace *t, uint64_t start_ns, uint64_t task,
		     uint32_t ring, enum pto_ring kind, uint64_t amount,
		     int result)
{
	uint64_t now = pto_now_ns();
	char buf[16];
	int tid;

	if (!trace_lock(t))
		return;
	tid = orch_track(t);
	t->stalls++;
	event_sep(t);
	fprintf(t->f, "{\"name\":\"stall\",\"cat\":\"orchestrator\","
		"\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,"
		"\"args\":{\"task\":%" PRIu64 ",\"ring\":%u,\"waiting for\":"
		"\"%s\",\"amount\":%" PRIu64 ",\"result\":\"%s\"}}",
		t->pid, tid, rel_us(t, start_ns),
		rel_us(t, now) - rel_us(t, start_ns), task, ring,
		kind < PTO_NUM_RINGS ? need_name[kind] : "?", amount,
		result_name(result, buf, sizeof(buf)));
	/* a step up for the stall's length, and a running total */
	counter(t, "stalled", start_ns, "orchestrator", 1);
	counter(t, "stalled", now, "orchestrator", 0);
	counter(t, "stalls", now, "total", t->stalls);
	trace_unlock(t);
}

void pto_trace_sched_run(struct pto_trace *t, uint64_t start_ns)
{
	uint64_t now = pto_now_ns();
	int tid = cur_tid();

	if (!trace_lock(t))
		return;
	if (tid != t->sched_tid) {	/* named once: it outlives the run */
		name_track(t, (uint32_t)tid, "scheduler", SORT_SCHED);
		t->sched_tid = tid;
	}
	event_sep(t);
	fprintf(t->f, "{\"name\":\"schedule\",\"cat\":\"scheduler\","
		"\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f}",
		t->pid, tid, rel_us(t, start_ns),
		rel_us(t, now) - rel_us(t, start_ns));
	trace_unlock(t);
}
