// SPDX-License-Identifier: MIT
/*
 * What both backends share: finding the context's structures in its
 * regions by SETUP's offsets.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "backend.h"
#include "log.h"

int pto_backend_attach(struct pto_backend *be)
{
	const struct pto_setup *s = &be->geo;
	uint8_t *win = be->region[PTO_BE_WINDOW];
	uint8_t *cring = be->region[PTO_BE_CRING];
	const struct pto_window_ident *id;
	uint32_t r;

	be->win = (struct pto_window_header *)(win + s->header_offset);
	id = &be->win->ident;
	if (id->magic != PTO_WINDOW_MAGIC ||
	    id->abi_version != PTO_ABI_VERSION || id->nrings != s->nrings) {
		pto_log("%s: the shared window is not a PTO window of ABI %u "
			"(magic %#x, ABI %u, %u rings)\n", be->ops->name,
			PTO_ABI_VERSION, id->magic, id->abi_version,
			id->nrings);
		return -EPROTO;
	}
	for (r = 0; r < s->nrings; r++) {
		be->ring[r].desc = (struct pto_task_desc *)
			(win + s->ring[r].desc_offset);
		be->ring[r].dep = (struct pto_dep_entry *)
			(win + s->ring[r].dep_offset);
		be->ring[r].heap = be->region[PTO_BE_HEAP] +
				   s->ring[r].heap_offset;
	}
	be->order = (uint64_t *)(win + s->order_offset);
	be->release = (struct pto_release_entry *)(win + s->release_offset);
	be->heap = be->region[PTO_BE_HEAP];
	be->heap_size = s->heap_size;
	be->cring = (struct pto_cring_header *)cring;
	be->cring_entries = (struct pto_completion *)
		(cring + s->cring_entries_offset);
	return 0;
}

__thread bool pto_backend_runs_tasks
	__attribute__((tls_model("initial-exec")));

/* The index-th CPU of PTO_CPUS, round robin, as a set; false: none set. */
static bool thread_cpu(const struct pto_backend *be, uint32_t index,
		       cpu_set_t *set)
{
	if (!be->ncpus)
		return false;
	CPU_ZERO(set);
	CPU_SET(be->cpus[index % be->ncpus], set);
	return true;
}

int pto_backend_thread_create(const struct pto_backend *be, uint32_t index,
			      const char *name, pthread_t *thread,
			      void *(*fn)(void *arg), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	ret = pthread_attr_init(&attr);
	if (ret)
		return -ret;
	if (thread_cpu(be, index, &set))
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	ret = pthread_create(thread, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	/* a CPU taken from the process since: pto_backend_thread_start() says */
	if (ret == EINVAL && be->ncpus)
		ret = pthread_create(thread, NULL, fn, arg);
	if (ret) {
		/* EAGAIN: RLIMIT_NPROC, threads-max, or no memory for a stack */
		pto_log("cannot start thread %s: %s (one thread per core, "
			"%u cores; PTO_SIM_CORES sets fewer)\n", name,
			strerror(ret), be->num_cores);
		return -ret;
	}
	pthread_setname_np(*thread, name);
	return 0;
}

void pto_backend_thread_start(const struct pto_backend *be, uint32_t index)
{
	cpu_set_t set;

	pto_backend_runs_tasks = true;
	pto_log_enter(be->log_tag);
	/* a CPU the process may not use is the user's to fix: say so */
	if (thread_cpu(be, index, &set) &&
	    pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		pto_log("cannot pin a thread to CPU %u (PTO_CPUS)\n",
			be->cpus[index % be->ncpus]);
}
