/* SPDX-License-Identifier: MIT */
/*
 * The entry points of an orchestration shared object, as ptorun(1) loads
 * it: include this in the .so so the compiler checks the signatures that
 * ptorun looks up with dlsym().
 *
 * Only pto_orchestration_entry() is required.  ptorun calls, in order:
 *   pto_orchestration_init(rt, argc, argv, &arg)  once, before any run
 *   pto_run(rt, pto_orchestration_entry, arg)     per --repeat, until one fails
 *   pto_orchestration_fini(rt, arg, status)       once, after the runs
 * all on the same thread (the orchestrator thread of every run; see
 * libpto(3), THREADS), with the runtime ptorun created.
 */
#ifndef PTO_PTO_ORCHESTRATION_H
#define PTO_PTO_ORCHESTRATION_H

#include <pto/pto.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * pto_orchestration_init() - set up before the runs (optional)
 * @rt: the runtime; register kernels and pto_malloc() buffers here
 * @argc: arguments after the .so on ptorun's command line
 * @argv: them ("name=value" by convention)
 * @arg: receives what the entry and fini are passed
 *
 * argv[0] is the object's path as given, argv[1..] the arguments after
 * it (see ptorun(1)).
 *
 * Return: 0 to run; a positive value to stop successfully without
 * running (after printing help, say); a negative errno, which ptorun
 * reports.
 */
int pto_orchestration_init(struct pto_runtime *rt, int argc, char **argv,
			   void **arg);

/**
 * pto_orchestration_entry() - the orchestration function (required)
 * @rt: the runtime, inside pto_run()
 * @arg: what pto_orchestration_init() set (NULL without one)
 *
 * Submits the tasks; a pto_orch_fn.
 *
 * Return: 0, or a negative errno, which pto_run() returns.
 */
int pto_orchestration_entry(struct pto_runtime *rt, void *arg);

/**
 * pto_orchestration_fini() - check the result and free (optional)
 * @rt: the runtime, after the last run
 * @arg: what pto_orchestration_init() set
 * @run_status: 0, or the first failed run's error; fini is called
 *	after a failed run too, so that it can free what init allocated
 *
 * Return: 0 when the result is right; nonzero makes ptorun exit with
 * its "verification failed" status.
 */
int pto_orchestration_fini(struct pto_runtime *rt, void *arg,
			   int run_status);

#ifdef __cplusplus
}
#endif

#endif /* PTO_PTO_ORCHESTRATION_H */
