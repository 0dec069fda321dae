/* SPDX-License-Identifier: MIT */
/*
 * ptotop's model: a sample is the sources' records merged into one row per
 * runtime or device client and one row per device, with rates derived
 * against the previous sample and a utilisation history per device.  The
 * views (view.h) show the current sample through the filters and in the
 * sort order kept here.
 */
#ifndef PTOTOP_MODEL_H
#define PTOTOP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "sources.h"

#define PT_HIST		128	/* utilisation samples kept per device */
#define PT_MAX_PIDS	32	/* -p options */

/* Where a process row came from (a bit mask). */
enum {
	PT_SRC_PAGE = 1,	/* a libpto stats page */
	PT_SRC_FDINFO = 2,	/* /proc/PID/fdinfo of an open /dev/ptoN */
};

/* One resource (enum pto_ring) of a row: of one task ring, or summed. */
struct pt_ring {
	bool valid;
	uint64_t size, in_use, high_water, stalls, stall_ns;
};

/*
 * libpto's sizing advice for one resource of one task ring (see
 * pt_ring_advice()): grow it when the orchestrator waited on it, shrink it
 * when it was never used beyond an eighth.
 */
enum pt_advice_kind {
	PT_ADVICE_NONE,
	PT_ADVICE_GROW,		/* "full N times, X ms waited" */
	PT_ADVICE_SHRINK,	/* "never more than N of M used" */
};

struct pt_advice {
	enum pt_advice_kind kind;
	uint64_t size;		/* what to give this ring */
	char env[160];		/* "PTO_HEAP_SIZE=a,b,c,d": every ring's size */
};

/* One runtime or one device client (the rows of the process table). */
struct pt_proc {
	char key[320];		/* identity from one sample to the next */
	int pid;
	unsigned int src;	/* PT_SRC_* */
	char user[PT_USER_LEN];
	char command[PT_COMMAND_LEN];
	char device[PT_NAME_LEN];	/* "sim", "pto0" */
	char state[PT_STATE_LEN];	/* idle, active, failed */
	bool have_client_id;
	uint64_t client_id;
	bool have_submitted;	/* stats page only */
	uint64_t submitted, completed, failed, in_flight, runs;
	uint32_t cores[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];
	struct pt_ring ring[PTO_NUM_RINGS];	/* by enum pto_ring, summed */
	/* per task ring (scope depth), stats page only; 0 rings otherwise */
	int nrings;
	struct pt_ring depth[PTO_MAX_RINGS][PTO_NUM_RINGS];
	bool have_mem;		/* fdinfo only */
	uint64_t mem_heap, mem_window;	/* bytes */
	int last_error;
	/* derived from the previous sample; NAN while unknown */
	double tasks_per_s;
	double util[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t stalls;	/* sum over the rings */
};

struct pt_device {
	char name[PT_NAME_LEN];		/* "sim" or "pto0" */
	bool sim;
	bool have_sysfs;
	uint32_t cores[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t contexts, tasks_done, tasks_failed;
	uint64_t mem_used, mem_total;	/* bytes, 0 when unknown */
	bool mem_from_sysfs;		/* the driver's, not the rows' sum */
	int nprocs;
	double util[PTO_UAPI_NUM_WORKER_TYPES];	/* NAN while unknown */
	/* history of util, oldest first, copied from the state */
	int hist_len;
	float hist[PTO_UAPI_NUM_WORKER_TYPES][PT_HIST];
};

struct pt_sample {
	uint64_t mono_ns, real_ns;
	double interval_s;	/* since the previous sample; 0 if none */
	struct pt_proc *procs;
	int nprocs, procs_cap;
	struct pt_device *devs;
	int ndevs, devs_cap;
	struct pt_skipped_page *skipped;	/* pages of other versions */
	int nskipped, skipped_cap;
};

enum pt_sort {
	PT_SORT_PID, PT_SORT_TASKS, PT_SORT_INFLIGHT, PT_SORT_STALLS,
	PT_SORT_FAILED, PT_SORT_DEVICE, PT_SORT_COMMAND, PT_SORT_USER,
	PT_NSORTS
};

struct pt_sort_key {
	const char *name;	/* --sort argument */
	int key;		/* interactive key */
	const char *title;	/* column it sorts */
};

extern const struct pt_sort_key pt_sort_keys[PT_NSORTS];

/* A device's utilisation history, kept across samples by name. */
struct pt_hist_entry {
	char name[PT_NAME_LEN];
	int len;
	float v[PTO_UAPI_NUM_WORKER_TYPES][PT_HIST];
};

struct pt_state {
	/* options; the screen's keys change delay, sort and device filter */
	long iterations;	/* 0: until quit */
	bool batch, json;
	bool task_rings;	/* -R: per task ring lines in batch text */
	double delay_s;
	enum pt_sort sort;
	bool reverse;
	char device_filter[PT_NAME_LEN];	/* "" for all */
	int pids[PT_MAX_PIDS];
	int npids;
	struct pt_roots roots;
	/* samples */
	struct pt_sample prev, cur;
	bool have_prev;
	long iteration;
	struct pt_hist_entry *hist;
	int nhist, hist_cap;
};

/**
 * pt_state_init() - the state before the first sample
 * @st: zeroed and set to the defaults: a refresh every second, sorted by
 *	tasks per second, the sources found through pt_roots_from_env()
 */
void pt_state_init(struct pt_state *st);

/**
 * pt_state_free() - free the samples and the history
 * @st: the state; not usable afterwards until pt_state_init()
 */
void pt_state_free(struct pt_state *st);

/**
 * pt_take_sample() - read the sources into a new current sample
 * @st: the state; the current sample becomes the previous one
 *
 * Merges the records into rows (a stats page of a /dev/ptoN runtime joins
 * that process's fdinfo row), derives tasks per second and utilisation
 * against the previous sample, appends to each device's history, counts
 * the iteration and sorts the rows.
 */
void pt_take_sample(struct pt_state *st);

/**
 * pt_sort_procs() - sort the current rows by st->sort and st->reverse
 * @st: the state
 *
 * Numbers sort busiest first, text alphabetically; ties by pid, then key,
 * so that the order is stable from one refresh to the next.
 */
void pt_sort_procs(struct pt_state *st);

/**
 * pt_proc_visible() - does a row pass the device and pid filters?
 * @st: the state holding the filters
 * @p: a row of the current sample
 */
bool pt_proc_visible(const struct pt_state *st, const struct pt_proc *p);

/**
 * pt_device_visible() - does a device pass the device filter?
 * @st: the state holding the filter
 * @d: a device of the current sample
 */
bool pt_device_visible(const struct pt_state *st, const struct pt_device *d);

/**
 * pt_visible_procs() - how many rows pass the filters
 * @st: the state
 */
int pt_visible_procs(const struct pt_state *st);

/**
 * pt_next_device_filter() - cycle the device filter
 * @st: the state
 *
 * From all devices to the first device of the current sample, from each
 * to the next, and from the last (or one no longer present) back to all.
 */
void pt_next_device_filter(struct pt_state *st);

/**
 * pt_ring_occupancy() - how full a resource of the rings is
 * @p: the row
 * @ring: which resource (task window, heap, ...)
 *
 * Return: in_use / size of the fullest task ring when the row has each
 * ring's figures (a stats page), else of the resource summed over the
 * rings; NAN when the row does not know it.
 */
double pt_ring_occupancy(const struct pt_proc *p, enum pto_ring ring);

/**
 * pt_resource_occupancy() - how full one resource is
 * @g: a resource of a row, summed or of one task ring
 *
 * Return: in_use / size, or NAN when it is not known.
 */
double pt_resource_occupancy(const struct pt_ring *g);

/**
 * pt_task_ring_used() - has a task ring held any task?
 * @p: the row
 * @ring: the task ring, below p->nrings
 *
 * As libpto decides it for its statistics: a task window in use or with a
 * high-water mark.
 */
bool pt_task_ring_used(const struct pt_proc *p, int ring);

/**
 * pt_ring_advice() - libpto's sizing advice for one resource of a task ring
 * @p: the row
 * @ring: the task ring, below p->nrings
 * @res: the resource
 * @adv: filled in; kind PT_ADVICE_NONE when the resource is fine
 *
 * The same rules as pto_print_stats(): double a resource the orchestrator
 * waited on for more than 1 ms in all; else offer the power of two above
 * twice the high-water mark for one above 1024 never used beyond an eighth.
 * Return: true when there is advice.
 */
bool pt_ring_advice(const struct pt_proc *p, int ring, enum pto_ring res,
		    struct pt_advice *adv);

/**
 * pt_all_advice() - every ring's advice at once, as pto_print_stats()
 *	ends it
 * @p: the row
 * @buf: "PTO_TASK_WINDOW=a,b,c,d PTO_HEAP_SIZE=...": each variable with
 *	every ring's advised (or present) size, ready to paste; each
 *	pt_ring_advice() env changes one ring only, and pasting two for the
 *	same variable kept only the last
 * @len: its size
 *
 * Return: true when there are two or more pieces of advice (one is its
 * own line already).
 */
bool pt_all_advice(const struct pt_proc *p, char *buf, size_t len);

/**
 * pt_skipped_visible() - does a skipped page pass the pid filter?
 * @st: the state holding the filter
 * @sp: a skipped page of the current sample
 *
 * The device filter does not apply: another version's device is unknown.
 */
bool pt_skipped_visible(const struct pt_state *st,
			const struct pt_skipped_page *sp);

#endif /* PTOTOP_MODEL_H */
