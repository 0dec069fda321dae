/* SPDX-License-Identifier: MIT */
/*
 * ptotop's sources: what the libpto stats pages, the pto driver's fdinfo
 * lines and its sysfs attributes say, as raw records, one set per sample.
 * Nothing here is merged or derived; that is the model's job (model.h).
 */
#ifndef PTOTOP_SOURCES_H
#define PTOTOP_SOURCES_H

#include <stdbool.h>
#include <stdint.h>

#include <pto/pto_statspage.h>
#include "ptotop.h"

#define PT_NAME_LEN	64	/* a device name: "sim", "pto0" */
#define PT_USER_LEN	32
#define PT_COMMAND_LEN	256
#define PT_STATE_LEN	16

/* Where the sources are: the real ones, or a fake tree for the tests. */
struct pt_roots {
	const char *stats_dir;	/* stats pages; $PTO_STATS_DIR or /dev/shm */
	const char *proc_root;	/* $PTOTOP_PROC_ROOT or /proc */
	const char *sysfs_root;	/* $PTOTOP_SYSFS_ROOT or /sys */
};

/* A device in <sysfs>/class/pto; what could not be read is 0. */
struct pt_sysfs_device {
	char name[PT_NAME_LEN];		/* "pto0" */
	bool have_cores;
	bool have_busy;
	uint32_t cores[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];
	uint64_t contexts;
	uint64_t tasks_done;
	uint64_t tasks_failed;
	bool have_mem;			/* mem_used and mem_total read */
	uint64_t mem_used;		/* bytes its contexts hold */
	uint64_t mem_total;		/* max_memory, shared by the devices */
};

/* One open /dev/ptoN file, as the driver describes it in fdinfo. */
struct pt_fd_client {
	int pid;
	int fd;				/* the descriptor */
	char device[PT_NAME_LEN];	/* pto-device */
	bool have_client_id;
	uint64_t client_id;
	uint32_t cores[PTO_UAPI_NUM_WORKER_TYPES];	/* engine capacity */
	uint64_t busy_ns[PTO_UAPI_NUM_WORKER_TYPES];	/* engine time */
	bool have_mem;
	uint64_t mem_heap;		/* bytes */
	uint64_t mem_window;		/* bytes */
	uint64_t task_window;		/* slots, 0 if not given */
	uint64_t in_flight;
	uint64_t done;
	uint64_t failed;
	char state[PT_STATE_LEN];	/* idle, active, failed or "" */
};

/* A consistent copy of a live runtime's stats page. */
struct pt_stats_page {
	char file[256];			/* its name in the stats directory */
	struct pto_statspage page;
};

/*
 * A live runtime's page in another version of the format (an older or
 * newer libpto): not read, but reported, so that the runtime is not
 * simply missing from the screen.
 */
struct pt_skipped_page {
	char file[256];			/* its name in the stats directory */
	int pid;			/* from the name: pto-stats.<pid>.<n> */
	uint32_t version;
};

/* Everything read for one sample, each array in directory order. */
struct pt_sources {
	struct pt_sysfs_device *devs;
	int ndevs, devs_cap;
	struct pt_fd_client *clients;
	int nclients, clients_cap;
	struct pt_stats_page *pages;
	int npages, pages_cap;
	struct pt_skipped_page *skipped;
	int nskipped, skipped_cap;
};

/**
 * pt_roots_from_env() - where to look, from the environment
 * @roots: filled in; the strings are the environment's or constants
 *
 * PTO_STATS_DIR is libpto's own setting; PTOTOP_PROC_ROOT and
 * PTOTOP_SYSFS_ROOT let the tests point ptotop at a fake /proc and /sys.
 */
void pt_roots_from_env(struct pt_roots *roots);

/**
 * pt_sources_read() - read every source once
 * @roots: where to look
 * @src: zeroed (or freed) records, filled in
 *
 * Reads sysfs, then the fdinfo of every open /dev/ptoN file (skipped when
 * the driver is not loaded), then the stats pages.  Stale pages are left
 * out: their process is gone, or its pid was reused by a process that does
 * not map the page.  Those of our own user are unlinked, and so is the
 * half-made page of a writer that died before renaming it into place.
 * Live pages of a version other than PTO_STATSPAGE_VERSION go to skipped.
 * Out of memory, a source's records stop short; nothing fails.
 */
void pt_sources_read(const struct pt_roots *roots, struct pt_sources *src);

/**
 * pt_sources_free() - free the records of pt_sources_read()
 * @src: the records; zeroed, ready for the next read
 */
void pt_sources_free(struct pt_sources *src);

/**
 * pt_read_identity() - the user and command line of a process
 * @roots: where /proc is
 * @pid: the process
 * @user: its user name, or its uid when it has no name, or "?"
 * @command: its arguments separated by spaces; "[comm]" for a process
 *	without a command line (kernel threads, zombies), as top shows it;
 *	or "?" when it is gone
 */
void pt_read_identity(const struct pt_roots *roots, int pid,
		      char user[PT_USER_LEN], char command[PT_COMMAND_LEN]);

#endif /* PTOTOP_SOURCES_H */
