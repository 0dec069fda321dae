/* SPDX-License-Identifier: MIT */
/*
 * The device interface libpto drives.  Two implementations: the in-process
 * simulator (backend/sim.c) and the /dev/ptoN driver (backend/dev.c).  Both expose
 * the regions of <pto/pto_uapi.h>; the scheduler's dispatch and completion
 * path is the same code for both.
 */
#ifndef PTO_LIB_BACKEND_H
#define PTO_LIB_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <pto/pto.h>

struct pto_backend;

/* Sizes libpto asks for; the backend lays out and maps the regions. */
struct pto_backend_setup {
	uint32_t task_window;		/* power of two */
	uint32_t dep_pool_size;
	uint32_t release_ring_size;	/* power of two */
	uint32_t cring_size;		/* power of two */
	uint64_t heap_ring_size;
	uint64_t heap_size;		/* ring + pto_malloc arena */
};

struct pto_backend_ops {
	const char *name;
	/*
	 * Open the device named cfg->device, learn its cores (be->cores,
	 * be->num_cores, be->core_type) and whether it runs C kernels.
	 */
	int (*open)(struct pto_backend *be, const struct pto_config *cfg);
	/* Create and map the regions; fills every region pointer below. */
	int (*setup)(struct pto_backend *be, const struct pto_backend_setup *s);
	/* Stop the cores, unmap, close.  Safe after a failed open/setup. */
	void (*close)(struct pto_backend *be);
	/* Bind kernel_id to a built-in op (fn == NULL) or a C function. */
	int (*bind_kernel)(struct pto_backend *be, uint32_t kernel_id,
			   uint32_t worker_type, uint32_t op, pto_kernel_fn fn);
	/*
	 * The host wrote doorbells of cores (PTO_KICK_ALL: any); make sure
	 * sleeping cores notice.
	 */
	void (*kick)(struct pto_backend *be, uint32_t core);
	/*
	 * Sleep until the completion ring holds entries past cring_head, the
	 * window's notify.sched_wake differs from sched_wake_seen, or
	 * timeout_ms passes.  Returns 0 or a negative errno (-ENODEV when the
	 * device went away).
	 */
	int (*wait)(struct pto_backend *be, uint64_t cring_head,
		    uint32_t sched_wake_seen, uint32_t timeout_ms);
	/* Wake a scheduler sleeping in wait() (orchestrator side). */
	void (*notify)(struct pto_backend *be);
};

struct pto_backend {
	const struct pto_backend_ops *ops;
	void *priv;

	/* from open() */
	bool c_kernels;			/* runs pto_kernel_fn kernels */
	bool batch_kick;		/* one kick(PTO_KICK_ALL) beats many */
	uint32_t cores[PTO_NUM_WORKER_TYPES];
	uint32_t num_cores;		/* cores are numbered in type order */
	uint32_t first_core[PTO_NUM_WORKER_TYPES];

	/* from setup() */
	struct pto_window_header *win;
	struct pto_task_desc *desc;
	struct pto_dep_entry *dep;
	struct pto_release_entry *release;
	uint8_t *heap;			/* host address of heap offset 0 */
	uint64_t heap_size;
	/*
	 * Device address of heap offset 0: the sim uses host addresses
	 * (heap_dev_base = (uintptr_t)heap), the driver heap offsets (0).
	 */
	uint64_t heap_dev_base;
	bool host_addresses;		/* any host address is a device address */
	struct pto_core_regs *regs;	/* num_cores blocks */
	struct pto_cring_header *cring;
	struct pto_completion *cring_entries;
};

extern const struct pto_backend_ops pto_sim_backend_ops;
extern const struct pto_backend_ops pto_dev_backend_ops;

/* Pick the backend for a device name ("sim" or a path). */
const struct pto_backend_ops *pto_backend_for(const char *device);

#endif /* PTO_LIB_BACKEND_H */
