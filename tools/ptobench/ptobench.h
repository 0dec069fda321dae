/* SPDX-License-Identifier: MIT */
/*
 * What the ptobench driver's modes share: ptobench.c (NOP task graphs,
 * memory flatness), metg.c (the METG benchmark) and views.c (tensor
 * views against byte ranges).
 */
#ifndef PTOBENCH_PTOBENCH_H
#define PTOBENCH_PTOBENCH_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

enum impl { IMPL_PTO, IMPL_GOMP, IMPL_OMP, IMPL_STARPU, NUM_IMPLS };

extern const char *const impl_names[NUM_IMPLS];

#define MAX_REPS 1000
/* --cores: libpto's simulator has at most 256 cores of a type */
#define MAX_CORES 256
/* --load: competing processes */
#define MAX_LOAD 256
/*
 * --tasks: the shapes count batches, steps and passes in 32 bits (at
 * least 128 tasks each); 1e11 NOP tasks take hours already
 */
#define MAX_TASKS 100000000000ull
/* --gap-us: the sparse shape's host work per task, up to a second */
#define MAX_GAP_US 1000000u
/* --timeout: seconds, 0 for none */
#define MAX_TIMEOUT 2147483647u

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
 * -1, saying so, when a comma-separated list has an empty item (',a',
 * 'a,', 'a,,b'), which strtok_r() would skip.
 */
int list_has_empty(const char *opt, const char *arg);
/*
 * A comma-separated list of names[n], the value of option opt, into set[]:
 * -1 with a message naming opt when a name is unknown, an item is empty
 * or none is given.
 */
int parse_names(const char *opt, const char *arg, bool *set,
		const char *const *names, int n);
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

/*
 * The signal (SIGINT, SIGTERM) that asked the driver to stop, 0: none
 * yet.  The first one kills the worker then running (its run counts as
 * neither a result nor a failure); the driver then prints and writes what
 * it measured so far and exits 128 + the signal.  A second one exits at
 * once.
 */
int bench_stopped(void);
/* Tell the user a stop cut the measurements short; 128 + the signal. */
int bench_stop_status(void);

/* --cores by default: the online CPUs, at most MAX_CORES */
unsigned int default_cores(void);

/* Fork n CPU-bound processes that compete for the machine; kill them. */
void start_load(int n);
void stop_load(void);

double loadavg1(void);
void cpu_model(char *buf, size_t len);
/* "host": its CPUs, model, kernel and the load averages around a run */
void json_host(FILE *f, double before, double after);

/* --help: every mode's options. */
void ptobench_usage(FILE *f);

/*
 * Options (options.c).  Each mode's getopt_long table, so that an option
 * of another mode gets a message that says so.
 */
extern const struct option nop_long_opts[];
extern const struct option metg_long_opts[];
extern const struct option views_long_opts[];
/*
 * The value arg of option name (as "--tasks") as a decimal number in
 * [min, max], nothing before or after it.  Returns 0, or -1 after
 * "ptobench: NAME: 'ARG' is not a number between MIN and MAX".  No
 * option takes a negative number: min >= 0.
 */
int opt_u64(const char *name, const char *arg, uint64_t min, uint64_t max,
	    uint64_t *val);
int opt_uint(const char *name, const char *arg, unsigned int min,
	     unsigned int max, unsigned int *val);
int opt_int(const char *name, const char *arg, int min, int max, int *val);
int opt_double(const char *name, const char *arg, double min, double max,
	       double *val);
/*
 * getopt_long, with opterr 0 and ':' first in its short options, returned
 * c ('?' or ':') for argv[optind - 1]: say why, for the mode whose table is
 * mine (mode: "--metg", "--views", or NULL for the NOP benchmark).
 */
void opt_refused(int c, char **argv, const struct option *mine,
		 const char *mode);
/* After the options: -1, with a message, when arguments are left. */
int opt_no_operands(int argc, char **argv);
/*
 * Before a run, not after it: -1 with a message naming opt when file
 * cannot be written ("-", standard output, can), or when directory dir
 * cannot be created (with its parents, as mkdir -p) or written into.
 */
int check_output_file(const char *opt, const char *file);
/* The results file (after check_output_file()), with a message if not. */
FILE *output_open(const char *path);
/* Close it: 0, or -1 with a message when anything was lost. */
int output_close(FILE *f, const char *path);
int make_output_dir(const char *opt, const char *dir);
/* At exit, fail (status 1, with a message) when stdout lost output. */
void check_stdout_at_exit(void);

/* ptobench --metg (metg.c). */
int metg_main(int argc, char **argv);

/* ptobench --views (views.c). */
int views_main(int argc, char **argv);

#endif /* PTOBENCH_PTOBENCH_H */
