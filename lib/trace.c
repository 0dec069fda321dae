// SPDX-License-Identifier: MIT
/*
 * Chrome / Perfetto JSON trace ("traceEvents" array format): one track per
 * core with a slice per task, and an orchestrator track with submit and
 * stall spans.  Events stream to the file as they happen, so tracing costs
 * no memory however long the run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "runtime.h"
#include "sync.h"
#include "trace.h"

#define ORCH_TID 100000

struct pto_trace {
	FILE *f;
	pthread_mutex_t lock;
	uint64_t t0;
	bool first;
};

static void event_sep(struct pto_trace *t)
{
	fputs(t->first ? "\n" : ",\n", t->f);
	t->first = false;
}

static void name_track(struct pto_trace *t, uint32_t tid, const char *name)
{
	event_sep(t);
	fprintf(t->f, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,"
		"\"tid\":%u,\"args\":{\"name\":", tid);
	pto_json_str(t->f, name);
	fputs("}}", t->f);
}

struct pto_trace *pto_trace_open(const char *path, struct pto_runtime *rt)
{
	struct pto_trace *t = calloc(1, sizeof(*t));
	uint32_t type, i, core = 0;
	char name[96];

	if (!t)
		return NULL;
	t->f = fopen(path, "w");
	if (!t->f) {
		pto_log("cannot write trace %s: %s\n", path, strerror(errno));
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->t0 = pto_now_ns();
	t->first = true;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", t->f);
	event_sep(t);
	snprintf(name, sizeof(name), "pto %s", rt->device);
	fputs("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
	      "\"args\":{\"name\":", t->f);
	pto_json_str(t->f, name);
	fputs("}}", t->f);
	for (type = 0; type < PTO_NUM_WORKER_TYPES; type++) {
		for (i = 0; i < rt->be.cores[type]; i++, core++) {
			snprintf(name, sizeof(name), "%s%u",
				 pto_worker_type_name(type), i);
			name_track(t, core, name);
		}
	}
	name_track(t, ORCH_TID, "orchestrator");
	return t;
}

void pto_trace_close(struct pto_trace *t)
{
	if (!t)
		return;
	fputs("\n]}\n", t->f);
	fclose(t->f);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

static double rel_us(struct pto_trace *t, uint64_t ns)
{
	return ns > t->t0 ? (double)(ns - t->t0) / 1000.0 : 0.0;
}

void pto_trace_task(struct pto_trace *t, const struct pto_completion *c,
		    uint64_t id, uint32_t kernel_id, const char *name)
{
	char slice[64];

	snprintf(slice, sizeof(slice), "%s#%llu", name,
		 (unsigned long long)id);
	pthread_mutex_lock(&t->lock);
	event_sep(t);
	fputs("{\"name\":", t->f);
	pto_json_str(t->f, slice);
	fprintf(t->f, ",\"cat\":\"task\","
		"\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
		"\"args\":{\"task\":%llu,\"kernel\":%u,\"status\":%d}}",
		c->core, rel_us(t, c->start_ns),
		rel_us(t, c->end_ns) - rel_us(t, c->start_ns),
		(unsigned long long)id, kernel_id, c->status);
	pthread_mutex_unlock(&t->lock);
}

void pto_trace_span(struct pto_trace *t, const char *name, uint64_t start_ns,
		    uint64_t end_ns, uint64_t task_id)
{
	pthread_mutex_lock(&t->lock);
	event_sep(t);
	fputs("{\"name\":", t->f);
	pto_json_str(t->f, name);
	fprintf(t->f, ",\"cat\":\"orchestrator\",\"ph\":\"X\","
		"\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
		"\"args\":{\"task\":%" PRIu64 "}}", ORCH_TID,
		rel_us(t, start_ns), rel_us(t, end_ns) - rel_us(t, start_ns),
		task_id);
	pthread_mutex_unlock(&t->lock);
}
