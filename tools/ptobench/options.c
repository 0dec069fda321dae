// SPDX-License-Identifier: MIT
/*
 * What the driver's three option parsers (ptobench.c, metg.c, views.c)
 * share: numbers checked against their range, the message for an option
 * getopt_long refused, output paths checked before a run that may take
 * hours, and standard output checked at exit.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptobench.h"

/* ---- numbers ------------------------------------------------------------ */

int opt_u64(const char *name, const char *arg, uint64_t min, uint64_t max,
	    uint64_t *val)
{
	unsigned long long v = 0;
	char *end = NULL;

	/* strtoull() takes "-5" as 2^64 - 5 and skips leading blanks */
	if (*arg >= '0' && *arg <= '9') {
		errno = 0;
		v = strtoull(arg, &end, 10);
	}
	if (!end || *end || errno || v < min || v > max) {
		fprintf(stderr, "ptobench: %s: '%s' is not a number between %"
			PRIu64 " and %" PRIu64 "\n", name, arg, min, max);
		return -1;
	}
	*val = v;
	return 0;
}

int opt_uint(const char *name, const char *arg, unsigned int min,
	     unsigned int max, unsigned int *val)
{
	uint64_t v;

	if (opt_u64(name, arg, min, max, &v))
		return -1;
	*val = v;
	return 0;
}

int opt_int(const char *name, const char *arg, int min, int max, int *val)
{
	uint64_t v;

	if (opt_u64(name, arg, min, max, &v))
		return -1;
	*val = v;
	return 0;
}

/* v as plain decimal, the form opt_double() takes: 10000000, not 1e+07 */
static const char *decimal_str(double v, char *buf, size_t len)
{
	char *end;

	snprintf(buf, len, "%.6f", v);
	end = buf + strlen(buf) - 1;
	while (*end == '0')
		*end-- = '\0';
	if (*end == '.')
		*end = '\0';
	return buf;
}

int opt_double(const char *name, const char *arg, double min, double max,
	       double *val)
{
	char lo[64], hi[64];
	size_t digits = strspn(arg, "0123456789");
	char *end = NULL;
	double v = 0;

	/*
	 * Plain decimal, as ptobench(1) says: strtod() alone would also take
	 * a sign, blanks, hex, an exponent, "inf" and "nan".
	 */
	if (arg[digits] == '.')
		digits += 1 + strspn(arg + digits + 1, "0123456789");
	if (digits && !arg[digits] && strcmp(arg, ".")) {
		errno = 0;
		v = strtod(arg, &end);
	}
	if (!end || *end || errno || v < min || v > max) {
		fprintf(stderr, "ptobench: %s: '%s' is not a number between "
			"%s and %s\n", name, arg,
			decimal_str(min, lo, sizeof(lo)),
			decimal_str(max, hi, sizeof(hi)));
		return -1;
	}
	*val = v;
	return 0;
}

/* ---- refused options ---------------------------------------------------- */

/* name, len characters of it (what precedes "="), is word */
static bool is(const char *name, size_t len, const char *word)
{
	return strlen(word) == len && !strncmp(word, name, len);
}

static bool in_table(const struct option *lo, const char *name, size_t len)
{
	for (; lo->name; lo++)
		if (is(name, len, lo->name))
			return true;
	return false;
}

/* The mode, --metg or --views, whose options include name; or NULL. */
static const char *other_mode(const char *name, size_t len)
{
	if (in_table(metg_long_opts, name, len))
		return "--metg";
	if (in_table(views_long_opts, name, len))
		return "--views";
	return NULL;
}

/* How many options of lo name begins (as getopt_long takes "--rep"). */
static int prefix_of(const struct option *lo, const char *name, size_t len)
{
	int n = 0;

	for (; lo->name; lo++)
		n += !strncmp(lo->name, name, len);
	return n;
}

/* Why --name (len chars) is not an option of mode (NULL: NOP tasks). */
static void why_not(const char *name, size_t len, const char *mode)
{
	const char *other = other_mode(name, len);

	if (mode && (is(name, len, "metg") || is(name, len, "views")))
		fprintf(stderr, "ptobench: --metg and --views do not go "
			"together\n");
	else if (mode && in_table(nop_long_opts, name, len))
		fprintf(stderr, "ptobench: --%.*s does not work with %s\n",
			(int)len, name, mode);
	else if (other)
		fprintf(stderr, "ptobench: --%.*s works only with %s\n",
			(int)len, name, other);
	else
		fprintf(stderr, "ptobench: unknown option '--%.*s'\n",
			(int)len, name);
}

/*
 * glibc's getopt_long leaves optopt 0 for an unknown or ambiguous long
 * option; sets it to the option's character for an unknown short option
 * and for a long option given a value it does not take.
 */
void opt_refused(int c, char **argv, const struct option *mine,
		 const char *mode)
{
	const char *arg = argv[optind - 1], *name = arg + 2;
	size_t len = strcspn(name, "=");
	bool valued = !strncmp(arg, "--", 2) && name[len] == '=';

	if (c == ':')
		fprintf(stderr, "ptobench: --%.*s needs a value\n", (int)len,
			name);
	else if (optopt && !valued)
		fprintf(stderr, "ptobench: unknown option '-%c'\n", optopt);
	else if (optopt)
		fprintf(stderr, "ptobench: --%.*s takes no value\n", (int)len,
			name);
	else if (prefix_of(mine, name, len) > 1)
		fprintf(stderr, "ptobench: --%.*s is ambiguous\n", (int)len,
			name);
	else
		why_not(name, len, mode);
	fprintf(stderr, "Try 'ptobench --help'.\n");
}

int opt_no_operands(int argc, char **argv)
{
	if (optind >= argc)
		return 0;
	fprintf(stderr, "ptobench: unexpected argument '%s'\n", argv[optind]);
	return -1;
}

/* ---- output paths ------------------------------------------------------- */

/* The directory path would be created in: "." when it names none. */
static void parent_dir(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/* 0 when path can be written (created or overwritten), else -errno. */
static int writable_file(const char *path)
{
	char dir[PATH_MAX];
	struct stat st;

	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		return access(path, W_OK) ? -errno : 0;
	}
	if (errno != ENOENT)
		return -errno;
	parent_dir(path, dir, sizeof(dir));
	return access(dir, W_OK | X_OK) ? -errno : 0;
}

/* Standard output, once the results file has claimed it. */
static FILE *results_stdout;

/*
 * "-": the results go to standard output alone, so the tables and
 * progress printed there meanwhile go to stderr instead.
 */
static int claim_stdout(const char *opt)
{
	int fd;

	fflush(stdout);
	fd = dup(STDOUT_FILENO);
	if (fd >= 0)
		results_stdout = fdopen(fd, "w");
	if (!results_stdout || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
		fprintf(stderr, "ptobench: %s -: %s\n", opt, strerror(errno));
		return -1;
	}
	return 0;
}

FILE *output_open(const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : results_stdout;

	if (!f)
		fprintf(stderr, "ptobench: %s: %s\n", path,
			strerror(errno ? errno : EBADF));
	return f;
}

int output_close(FILE *f, const char *path)
{
	if (ferror(f) | fclose(f)) {
		fprintf(stderr, "ptobench: %s: write failed\n", path);
		return -1;
	}
	return 0;
}

int check_output_file(const char *opt, const char *path)
{
	int err;

	if (!strcmp(path, "-"))
		return claim_stdout(opt);
	err = *path ? writable_file(path) : -ENOENT;
	if (!err)
		return 0;
	fprintf(stderr, "ptobench: %s: cannot write '%s': %s\n", opt, path,
		strerror(-err));
	return -1;
}

/* mkdir -p: dir and the parents it lacks; 0 or -errno. */
static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];
	size_t len = strlen(dir);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return -errno;
	return 0;
}

int make_output_dir(const char *opt, const char *dir)
{
	struct stat st;
	int err = *dir ? mkdir_p(dir) : -ENOENT;

	if (!err && stat(dir, &st))
		err = -errno;
	if (!err && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (!err && access(dir, W_OK | X_OK))
		err = -errno;
	if (!err)
		return 0;
	fprintf(stderr, "ptobench: %s: cannot write into directory '%s': %s\n",
		opt, dir, strerror(-err));
	return -1;
}

/* ---- standard output ---------------------------------------------------- */

/*
 * At exit: what stdio still holds must reach standard output, or ptobench
 * fails (ptobench --help >/dev/full, a full disk under the table).
 */
static void check_stdout(void)
{
	bool failed = ferror(stdout);

	if (fclose(stdout)) {
		fprintf(stderr, "ptobench: standard output: %s\n",
			strerror(errno));
		_exit(1);
	}
	if (failed) {
		fprintf(stderr, "ptobench: standard output: write error\n");
		_exit(1);
	}
}

void check_stdout_at_exit(void)
{
	atexit(check_stdout);
}
