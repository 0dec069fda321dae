// SPDX-License-Identifier: MIT
/*
 * The threading contract, enforced: during a run only the thread that
 * called pto_run() may submit tasks and open or close scopes, and nothing
 * that changes a runtime's set-up may run while a run is in progress.
 * Each refusal says on the log which call and why.  Kept apart from the
 * runtime and the orchestrator, which both ask it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "log.h"
#include "runtime.h"

__thread char pto_thread_token __attribute__((tls_model("initial-exec")));

/* Here, not in kernel.c: the contract refuses kernels its calls. */
__thread struct pto_kernel_ctx *pto_kernel_current
	__attribute__((tls_model("initial-exec")));

unsigned int pto_fork_gen;

static void forked_child(void)
{
	__atomic_add_fetch(&pto_fork_gen, 1, __ATOMIC_RELAXED);
}

static void watch_forks(void)
{
	pthread_atfork(NULL, NULL, forked_child);
}

void pto_fork_watch(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, watch_forks);
}

/*
 * Was call refused already in this run (the run_state it meets)?  Else
 * note it, in its own slot or one a call of an earlier run had.  Racing
 * refusals may both say it: harmless.
 */
static bool busy_said_before(struct pto_runtime *rt, const char *call)
{
	const size_t n = sizeof(rt->busy_said) / sizeof(rt->busy_said[0]);
	uint32_t run = __atomic_load_n(&rt->run_state, __ATOMIC_RELAXED);
	size_t i, free_slot = 0;

	for (i = 0; i < n; i++) {
		const char *c = __atomic_load_n(&rt->busy_said[i].call,
						__ATOMIC_RELAXED);
		uint32_t r = __atomic_load_n(&rt->busy_said[i].run,
					     __ATOMIC_RELAXED);

		if (c == call && r == run)
			return true;
		if (c == call || r != run)
			free_slot = i;
	}
	__atomic_store_n(&rt->busy_said[free_slot].call, call,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&rt->busy_said[free_slot].run, run, __ATOMIC_RELAXED);
	return false;
}

int pto_say_in_kernel(struct pto_runtime *rt, const char *call)
{
	/* once a run: a kernel may try on every one of its tasks */
	if (!busy_said_before(rt, call))
		pto_log("%s: called from a kernel: kernels may not run "
			"orchestrations, submit tasks, wait for them or open "
			"or close scopes\n", call);
	return -EPERM;
}

int pto_orch_check_slow(struct pto_runtime *rt, const char *call)
{
	const struct pto_log_tag *prev;
	uintptr_t owner;
	int ret;

	if (!rt) {
		pto_log("%s: the runtime is NULL\n", call);
		return -EINVAL;
	}
	if (pto_forked(rt))
		return pto_check_process(rt, call);
	if (pto_kernel_current)
		return pto_say_in_kernel(rt, call);
	owner = __atomic_load_n(&rt->orch.owner, __ATOMIC_RELAXED);
	if (owner == pto_self())
		return 0;
	/* outside its run this thread is in no runtime's name: say whose */
	prev = pto_log_enter(&rt->log_tag);
	if (!owner || owner == PTO_OWNER_DESTROYING) {
		pto_log("%s: no run in progress: call it from the "
			"orchestration function, inside pto_run()\n", call);
		ret = -EINVAL;
	} else {
		pto_log("%s: not the orchestrator thread: during a run only "
			"the thread that called pto_run() may submit tasks, "
			"wait for them and open or close scopes\n", call);
		ret = -EPERM;
	}
	pto_log_leave(prev);
	return ret;
}

int pto_say_busy(struct pto_runtime *rt, const char *call, uintptr_t owner)
{
	if (busy_said_before(rt, call))
		return -EBUSY;
	pto_log("%s: %s\n", call, owner == PTO_OWNER_DESTROYING ?
		"the runtime is being destroyed" :
		/* a kernel may run on the orchestrator's thread too */
		pto_kernel_current ?
		"called from a kernel of this runtime's run, which cannot "
		"end before the kernel returns" :
		owner == pto_self() ?
		"not allowed inside the orchestration function: a run is in "
		"progress on this thread" :
		"a run is in progress on this runtime (in another thread); "
		"wait for pto_run() to return");
	return -EBUSY;
}

int pto_check_process(const struct pto_runtime *rt, const char *call)
{
	if (!pto_forked(rt))
		return 0;
	pto_log("%s: this runtime belongs to process %d, which created it; "
		"after fork() a child has none of its threads and must "
		"create a runtime of its own\n", call, (int)rt->pid);
	return -EPERM;
}

int pto_check_idle(struct pto_runtime *rt, const char *call)
{
	uintptr_t owner = __atomic_load_n(&rt->orch.owner, __ATOMIC_RELAXED);

	return owner ? pto_say_busy(rt, call, owner) : 0;
}
