/* SPDX-License-Identifier: MIT */
/*
 * ptotop: a live monitor for PTO devices (/dev/ptoN, through fdinfo and
 * sysfs) and sim runtimes (through their shared-memory stats pages).
 */
#ifndef PTOTOP_H
#define PTOTOP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <pto/pto_uapi.h>	/* the worker types and their names */

#define PT_NRINGS	4	/* task, heap, dep, tensormap */
#define PT_HIST		128	/* utilisation samples kept per device */
#define PT_MAX_PIDS	32

/* fdinfo's and the JSON's names, and the screen's short column titles */
extern const char *const pt_type_names[PTO_UAPI_NUM_WORKER_TYPES];
extern const char *const pt_type_short[PTO_UAPI_NUM_WORKER_TYPES];
extern const char *const pt_ring_names[PT_NRINGS];

/* Where a process row came from (a bit mask). */
enum {
	PT_SRC_PAGE = 1,	/* a libpto stats page */
	PT_SRC_FDINFO = 2,	/* /proc/PID/fdinfo of an open /dev/ptoN */
};

struct pt_ring {
	bool valid;
	uint64_t size, in_use, high_water, stalls, stall_ns;
};

/* One runtime or one device client (the rows of the process table). */
struct pt_proc {
	char key[320];		/* identity from one sample to the next */
	int pid;
	unsigned int src;	/* PT_SRC_* */
	char user[32];
	char command[256];
	char device[64];	/* "sim", "pto0" */
	char state[16];		/* idle, active, failed */
	bool have_client_id;
	uint64_t client_id;
	bool have_submitted;	/* stats page only */
	uint64_t submitted, completed, failed, in_flight, runs;
	uint32_t cores[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];
	struct pt_ring ring[PT_NRINGS];
	bool have_mem;		/* fdinfo only */
	uint64_t mem_heap, mem_window;	/* bytes */
	uint64_t task_window;	/* fdinfo: window slots */
	int last_error;
	uint64_t start_ns;	/* page: CLOCK_REALTIME of creation */
	/* derived from the previous sample; NAN while unknown */
	double tasks_per_s;
	double util[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t stalls;	/* sum over the rings */
};

struct pt_device {
	char name[64];		/* "sim" or "pto0" */
	bool sim;
	bool have_sysfs;
	uint32_t cores[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t contexts, tasks_done, tasks_failed;
	uint64_t mem_used, mem_total;	/* bytes, 0 when unknown */
	int nprocs;
	double util[PTO_UAPI_NUM_WORKER_TYPES];		/* NAN while unknown */
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
};

enum pt_sort {
	PT_SORT_PID, PT_SORT_TASKS, PT_SORT_INFLIGHT, PT_SORT_STALLS,
	PT_SORT_FAILED, PT_SORT_DEVICE, PT_SORT_COMMAND, PT_SORT_USER,
	PT_NSORTS
};

struct pt_sort_key {
	const char *name;	/* --sort argument and JSON-free label */
	int key;		/* interactive key */
	const char *title;	/* column it sorts */
};
extern const struct pt_sort_key pt_sort_keys[PT_NSORTS];

struct pt_hist_entry {
	char name[64];
	int len;
	float v[PTO_UAPI_NUM_WORKER_TYPES][PT_HIST];
};

struct pt_state {
	/* options */
	double delay_s;
	long iterations;	/* 0: until quit */
	bool batch, json;
	enum pt_sort sort;
	bool reverse;
	char device_filter[64];	/* "" for all */
	int pids[PT_MAX_PIDS];
	int npids;
	/* where to look (overridable for tests) */
	const char *stats_dir;
	const char *proc_root;
	const char *sysfs_root;
	/* samples */
	struct pt_sample prev, cur;
	bool have_prev;
	long iteration;
	struct pt_hist_entry *hist;
	int nhist;
};

/* collect.c */
int pt_collect(struct pt_state *st);
void pt_sample_free(struct pt_sample *s);
void pt_sort_procs(struct pt_state *st);
bool pt_proc_visible(const struct pt_state *st, const struct pt_proc *p);
bool pt_device_visible(const struct pt_state *st, const struct pt_device *d);
double pt_ring_occupancy(const struct pt_proc *p, int ring);
uint64_t pt_now_ns(int clock);

/* output.c */
void pt_print_text(struct pt_state *st, FILE *out);
void pt_print_json(struct pt_state *st, FILE *out);
void pt_fmt_bytes(char *buf, size_t len, uint64_t bytes);

/* ui.c */
int pt_ui_run(struct pt_state *st);

#endif /* PTOTOP_H */
