/* SPDX-License-Identifier: MIT */
/*
 * What the ptobench driver's modes share: ptobench.c (NOP task graphs,
 * memory flatness), metg.c (the METG benchmark) and views.c (tensor
 * views against byte ranges).
 */
#ifndef PTOBENCH_PTOBENCH_H
#define PTOBENCH_PTOBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

enum impl { IMPL_PTO, IMPL_GOMP, IMPL_OMP, IMPL_STARPU, NUM_IMPLS };

extern const char *const impl_names[NUM_IMPLS];

#define MAX_REPS 1000

struct summary {
	double med, min, max;
};

/* Median, minimum and maximum of n values (all 0 when n is 0). */
struct summary summarize(const double *v, int n);

/* Path of the program ptobench-NAME; true when it is executable. */
bool worker_path(const char *name, char *buf, size_t len);
/* Locate the workers: PTOBENCH_WORKER_DIR, else ptobench's directory. */
int find_worker_dir(void);
/*
 * Parse an --impls list into impl[]; then drop implementations whose
 * worker was not built, with a note, unless the user named them (given).
 */
int parse_impls(const char *arg, bool *impl);
int check_impls(bool *impl, bool given);
/*
 * Run a worker: its standard output into out (NUL-terminated), its
 * resource usage into *ru.  Returns 0 when it exited with status 0.
 */
int run_worker(const char *path, char *const argv[], char *out, size_t len,
	       struct rusage *ru);

/* Fork n CPU-bound processes that compete for the machine; kill them. */
void start_load(int n);
void stop_load(void);

double loadavg1(void);
void cpu_model(char *buf, size_t len);
/* "host": its CPUs, model, kernel and the load averages around a run */
void json_host(FILE *f, double before, double after);

/* --help: both modes' options. */
void ptobench_usage(FILE *f);

/* ptobench --metg (metg.c). */
int metg_main(int argc, char **argv);

/* ptobench --views (views.c). */
int views_main(int argc, char **argv);

#endif /* PTOBENCH_PTOBENCH_H */
