// SPDX-License-Identifier: MIT
/*
 * ptotop's data sources: libpto stats pages, the pto driver's fdinfo lines
 * and per-device sysfs attributes.  One call of pt_collect() takes a new
 * sample and derives rates against the previous one.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <pto/pto_statspage.h>
#include "ptotop.h"

/* The driver's names, from the uapi, so that the two cannot drift apart. */
const char *const pt_type_names[PTO_UAPI_NUM_WORKER_TYPES] =
	PTO_UAPI_WORKER_TYPE_NAMES;

const char *const pt_type_short[PTO_UAPI_NUM_WORKER_TYPES] = {
	[PTO_UAPI_WORKER_CUBE] = "CUBE",
	[PTO_UAPI_WORKER_VECTOR] = "VEC",
	[PTO_UAPI_WORKER_AICPU] = "AICPU",
	[PTO_UAPI_WORKER_ACCEL] = "ACCEL",
};

const char *const pt_ring_names[PT_NRINGS] = {
	"task", "heap", "dep", "tensormap"
};

const struct pt_sort_key pt_sort_keys[PT_NSORTS] = {
	[PT_SORT_PID] = { "pid", 'P', "PID" },
	[PT_SORT_TASKS] = { "tasks", 'T', "TASKS/S" },
	[PT_SORT_INFLIGHT] = { "inflight", 'I', "INFLT" },
	[PT_SORT_STALLS] = { "stalls", 'S', "STALLS" },
	[PT_SORT_FAILED] = { "failures", 'F', "FAIL" },
	[PT_SORT_DEVICE] = { "device", 'D', "DEVICE" },
	[PT_SORT_COMMAND] = { "command", 'C', "COMMAND" },
	[PT_SORT_USER] = { "user", 'U', "USER" },
};

uint64_t pt_now_ns(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- small file helpers ------------------------------------------------- */

/* Read a small file into buf (NUL-terminated); bytes read or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

static bool read_u64(const char *path, uint64_t *v)
{
	char buf[64];

	if (read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	*v = strtoull(buf, NULL, 0);
	return true;
}

/* "C V A X": a value per worker type. */
static bool read_u64x4(const char *path, uint64_t v[PTO_UAPI_NUM_WORKER_TYPES])
{
	char buf[256], *p = buf, *end;
	int i;

	if (read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	for (i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++) {
		v[i] = strtoull(p, &end, 0);
		if (end == p)
			return false;
		p = end;
	}
	return true;
}

/* ---- sample containers -------------------------------------------------- */

void pt_sample_free(struct pt_sample *s)
{
	free(s->procs);
	free(s->devs);
	memset(s, 0, sizeof(*s));
}

static struct pt_proc *proc_add(struct pt_sample *s)
{
	struct pt_proc *p;

	if (s->nprocs == s->procs_cap) {
		int cap = s->procs_cap ? 2 * s->procs_cap : 16;

		p = realloc(s->procs, cap * sizeof(*p));
		if (!p)
			return NULL;
		s->procs = p;
		s->procs_cap = cap;
	}
	p = &s->procs[s->nprocs++];
	memset(p, 0, sizeof(*p));
	p->tasks_per_s = NAN;
	for (int i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++)
		p->util[i] = NAN;
	return p;
}

static struct pt_device *device_get(struct pt_sample *s, const char *name)
{
	struct pt_device *d;
	int i;

	for (i = 0; i < s->ndevs; i++)
		if (!strcmp(s->devs[i].name, name))
			return &s->devs[i];
	if (s->ndevs == s->devs_cap) {
		int cap = s->devs_cap ? 2 * s->devs_cap : 8;

		d = realloc(s->devs, cap * sizeof(*d));
		if (!d)
			return NULL;
		s->devs = d;
		s->devs_cap = cap;
	}
	d = &s->devs[s->ndevs++];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->sim = !strcmp(name, "sim");
	for (i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++)
		d->util[i] = NAN;
	return d;
}

/* ---- process metadata --------------------------------------------------- */

static void proc_meta(const struct pt_state *st, struct pt_proc *p)
{
	char path[PATH_MAX], buf[sizeof(p->command)];
	struct passwd *pw;
	struct stat sb;
	ssize_t n, i;

	snprintf(p->user, sizeof(p->user), "?");
	snprintf(p->command, sizeof(p->command), "?");
	snprintf(path, sizeof(path), "%s/%d", st->proc_root, p->pid);
	if (stat(path, &sb) == 0) {
		pw = getpwuid(sb.st_uid);
		if (pw)
			snprintf(p->user, sizeof(p->user), "%s", pw->pw_name);
		else
			snprintf(p->user, sizeof(p->user), "%u",
				 (unsigned int)sb.st_uid);
	}
	snprintf(path, sizeof(path), "%s/%d/cmdline", st->proc_root, p->pid);
	n = read_small(path, buf, sizeof(buf));
	if (n > 0) {
		/* argv is NUL-separated; show it space-separated */
		while (n > 0 && buf[n - 1] == '\0')
			n--;
		for (i = 0; i < n; i++)
			if (buf[i] == '\0' || !isprint((unsigned char)buf[i]))
				buf[i] = ' ';
		buf[n] = '\0';
		snprintf(p->command, sizeof(p->command), "%s", buf);
		return;
	}
	/* kernel threads and zombies have no cmdline: use comm, as top */
	snprintf(path, sizeof(path), "%s/%d/comm", st->proc_root, p->pid);
	n = read_small(path, buf, 64);
	if (n > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(p->command, sizeof(p->command), "[%.64s]", buf);
	}
}

/* ---- stats pages (sim and dev runtimes of libpto) ----------------------- */

/*
 * Does process pid map the file called name?  1 yes, 0 no, -1 cannot
 * tell (another user's process, or no /proc).  A live runtime keeps its
 * page mapped until it unlinks it, so "no" means the pid was reused.
 */
static int proc_maps_file(const struct pt_state *st, int pid,
			  const char *name)
{
	char path[PATH_MAX], line[PATH_MAX + 128];
	size_t len = strlen(name);
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", st->proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strstr(line, name);

		/* "/name", then end of line or " (deleted)" */
		found = p && p > line && p[-1] == '/' &&
			(p[len] == '\n' || p[len] == ' ' || p[len] == '\0');
	}
	fclose(f);
	return found;
}

/*
 * A page is stale when its process is gone, or when its pid now belongs to
 * a process that does not map it (pid reuse).  Time stamps are not used:
 * a clock step would make a live page look stale.
 */
static bool page_stale(const struct pt_state *st,
		       const struct pto_statspage *pg, const char *name)
{
	if (pg->pid <= 0)
		return true;
	if (kill(pg->pid, 0) < 0 && errno == ESRCH)
		return true;
	return proc_maps_file(st, pg->pid, name) == 0;
}

/*
 * Map and copy one page: 0 on success, -ESRCH for a stale page, another
 * negative errno for a file that is not a page.  Magic, version, size, pid
 * and start_ns never change after creation, so they are checked before the
 * seqlock read: a runtime killed in mid-update leaves seq odd forever.
 */
static int page_load(const struct pt_state *st, int dirfd, const char *name,
		     struct pto_statspage *out, uid_t *owner)
{
	const struct pto_statspage *map;
	struct stat sb;
	int fd, ret;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	/* size is fixed at creation: no SIGBUS from a shrinking file */
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size < (off_t)sizeof(*map)) {
		close(fd);
		return -EINVAL;
	}
	*owner = sb.st_uid;
	map = mmap(NULL, sizeof(*map), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	if (map->magic != PTO_STATSPAGE_MAGIC ||
	    map->version != PTO_STATSPAGE_VERSION ||
	    map->size < sizeof(*out))
		ret = -EINVAL;
	else if (page_stale(st, map, name))
		ret = -ESRCH;
	else
		ret = pto_statspage_read(map, out);
	munmap((void *)map, sizeof(*map));
	out->device[sizeof(out->device) - 1] = '\0';
	return ret;
}

static const char *device_short(const char *dev)
{
	const char *slash = strrchr(dev, '/');

	return slash ? slash + 1 : dev;
}

static void page_to_proc(struct pt_proc *p, const struct pto_statspage *pg)
{
	int i;

	p->pid = pg->pid;
	p->start_ns = pg->start_ns;
	p->have_submitted = true;
	p->submitted = pg->tasks_submitted;
	p->completed = pg->tasks_completed;
	p->failed = pg->tasks_failed;
	p->in_flight = pg->tasks_in_flight;
	p->runs = pg->runs;
	p->last_error = pg->last_error;
	/* the driver's engine time is authoritative for a device client */
	for (i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++) {
		if (p->src & PT_SRC_FDINFO)
			break;
		p->cores[i] = pg->cores[i];
		p->busy_ns[i] = pg->busy_ns[i];
	}
	p->stalls = 0;
	for (i = 0; i < PT_NRINGS; i++) {
		p->ring[i].valid = true;
		p->ring[i].size = pg->ring[i].size;
		p->ring[i].in_use = pg->ring[i].in_use;
		p->ring[i].high_water = pg->ring[i].high_water;
		p->ring[i].stalls = pg->ring[i].stalls;
		p->ring[i].stall_ns = pg->ring[i].stall_ns;
		p->stalls += pg->ring[i].stalls;
	}
	if (pg->last_error)
		snprintf(p->state, sizeof(p->state), "failed");
	else if (strcmp(p->state, "failed"))	/* keep the driver's verdict */
		snprintf(p->state, sizeof(p->state), "%s",
			 pg->running ? "active" : "idle");
	p->src |= PT_SRC_PAGE;
}

/* A page of a /dev/ptoN runtime joins that process's fdinfo row. */
static struct pt_proc *page_merge_target(struct pt_sample *s,
					 const struct pto_statspage *pg)
{
	const char *dev = device_short(pg->device);
	int i;

	if (!strcmp(pg->device, "sim"))
		return NULL;
	for (i = 0; i < s->nprocs; i++) {
		struct pt_proc *p = &s->procs[i];

		if (p->src == PT_SRC_FDINFO && p->pid == pg->pid &&
		    !strcmp(p->device, dev))
			return p;
	}
	return NULL;
}

/*
 * lib/statspage.c builds a page as ".pto-stats.new.<pid>.<n>" and renames
 * it; a writer killed in between leaves that behind.  Remove our own.
 */
static void tidy_temp(int dirfd, const char *name)
{
	static const char tmp[] = "." PTO_STATSPAGE_PREFIX "new.";
	struct stat sb;
	int pid;

	if (strncmp(name, tmp, sizeof(tmp) - 1))
		return;
	pid = atoi(name + sizeof(tmp) - 1);
	if (pid <= 0 || !(kill(pid, 0) < 0 && errno == ESRCH))
		return;
	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb.st_mode) && sb.st_uid == geteuid())
		unlinkat(dirfd, name, 0);
}

static void scan_pages(struct pt_state *st, struct pt_sample *s)
{
	size_t plen = strlen(PTO_STATSPAGE_PREFIX);
	struct pto_statspage pg;
	struct dirent *de;
	struct pt_proc *p;
	uid_t owner = (uid_t)-1;
	DIR *dir;
	int ret;

	dir = opendir(st->stats_dir);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			tidy_temp(dirfd(dir), de->d_name);
		if (strncmp(de->d_name, PTO_STATSPAGE_PREFIX, plen))
			continue;
		ret = page_load(st, dirfd(dir), de->d_name, &pg, &owner);
		if (ret == -ESRCH && owner == geteuid()) {
			/* a crashed runtime's leftover: tidy up our own */
			unlinkat(dirfd(dir), de->d_name, 0);
		}
		if (ret)
			continue;
		p = page_merge_target(s, &pg);
		if (!p) {
			p = proc_add(s);
			if (!p)
				break;
			snprintf(p->key, sizeof(p->key), "page:%s",
				 de->d_name);
			snprintf(p->device, sizeof(p->device), "%s",
				 device_short(pg.device));
			p->pid = pg.pid;
			proc_meta(st, p);
		}
		page_to_proc(p, &pg);
	}
	closedir(dir);
}

/* ---- /dev/ptoN clients through fdinfo ----------------------------------- */

/* The pto driver's character major from /proc/devices, or -1. */
static int pto_major(const struct pt_state *st)
{
	char path[PATH_MAX], buf[4096], *line, *save;
	int major;

	snprintf(path, sizeof(path), "%s/devices", st->proc_root);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64];

		if (!strncmp(line, "Block", 5))
			break;
		if (sscanf(line, "%d %63s", &major, name) == 2 &&
		    !strcmp(name, "pto"))
			return major;
	}
	return -1;
}

static bool fd_is_pto(const char *fdpath, int major)
{
	char link[PATH_MAX];
	struct stat sb;
	ssize_t n;

	n = readlink(fdpath, link, sizeof(link) - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	if (!strncmp(link, "/dev/pto", 8))
		return true;
	/* a node made elsewhere (mknod, containers): check the major */
	if (major < 0 || strncmp(link, "/dev/", 5))
		return false;
	return stat(fdpath, &sb) == 0 && S_ISCHR(sb.st_mode) &&
	       (int)major(sb.st_rdev) == major;
}

static uint64_t field_u64(const char *v)
{
	return strtoull(v, NULL, 10);
}

static int type_index(const char *name)
{
	int i;

	for (i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++)
		if (!strcmp(name, pt_type_names[i]))
			return i;
	return -1;
}

/* Parse one "key:\tvalue" line of the driver into p. */
static void fdinfo_line(struct pt_proc *p, const char *key, const char *val)
{
	int t;

	if (!strcmp(key, "pto-device")) {
		snprintf(p->device, sizeof(p->device), "%s", val);
	} else if (!strcmp(key, "pto-client-id")) {
		p->have_client_id = true;
		p->client_id = field_u64(val);
	} else if (!strncmp(key, "pto-engine-capacity-", 20)) {
		t = type_index(key + 20);
		if (t >= 0)
			p->cores[t] = field_u64(val);
	} else if (!strncmp(key, "pto-engine-", 11)) {
		t = type_index(key + 11);
		if (t >= 0)
			p->busy_ns[t] = field_u64(val);
	} else if (!strcmp(key, "pto-memory-heap")) {
		p->have_mem = true;
		p->mem_heap = field_u64(val) * 1024;
	} else if (!strcmp(key, "pto-memory-window")) {
		p->have_mem = true;
		p->mem_window = field_u64(val) * 1024;
	} else if (!strcmp(key, "pto-task-window")) {
		p->task_window = field_u64(val);
	} else if (!strcmp(key, "pto-tasks-in-flight")) {
		p->in_flight = field_u64(val);
	} else if (!strcmp(key, "pto-tasks-done")) {
		p->completed = field_u64(val);
	} else if (!strcmp(key, "pto-tasks-failed")) {
		p->failed = field_u64(val);
	} else if (!strcmp(key, "pto-state")) {
		snprintf(p->state, sizeof(p->state), "%s", val);
	}
}

/* Parse an fdinfo file; true if it is a pto client. */
static bool fdinfo_parse(char *buf, struct pt_proc *p)
{
	bool is_pto = false;
	char *line, *save, *val;

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		val = strchr(line, ':');
		if (!val)
			continue;
		*val++ = '\0';
		val += strspn(val, " \t");
		if (!strcmp(line, "pto-driver"))
			is_pto = !strcmp(val, "pto");
		else if (!strncmp(line, "pto-", 4))
			fdinfo_line(p, line, val);
	}
	return is_pto && p->device[0];
}

/* The same client seen through a dup()ed or inherited fd counts once. */
static bool client_seen(const struct pt_sample *s, const struct pt_proc *c)
{
	int i;

	if (!c->have_client_id)
		return false;
	for (i = 0; i < s->nprocs; i++) {
		const struct pt_proc *p = &s->procs[i];

		if ((p->src & PT_SRC_FDINFO) && p->have_client_id &&
		    p->client_id == c->client_id &&
		    !strcmp(p->device, c->device))
			return true;
	}
	return false;
}

static void scan_fds(struct pt_state *st, struct pt_sample *s, int pid,
		     int major)
{
	char path[PATH_MAX], buf[4096];
	struct pt_proc c, *p;
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/fd", st->proc_root, pid);
	dir = opendir(path);
	if (!dir)
		return;		/* gone, or another user's */
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%d/fd/%s", st->proc_root,
			 pid, de->d_name);
		if (!fd_is_pto(path, major))
			continue;
		snprintf(path, sizeof(path), "%s/%d/fdinfo/%s", st->proc_root,
			 pid, de->d_name);
		if (read_small(path, buf, sizeof(buf)) <= 0)
			continue;
		memset(&c, 0, sizeof(c));
		if (!fdinfo_parse(buf, &c) || client_seen(s, &c))
			continue;
		p = proc_add(s);
		if (!p)
			break;
		c.tasks_per_s = p->tasks_per_s;
		memcpy(c.util, p->util, sizeof(c.util));
		*p = c;
		p->src = PT_SRC_FDINFO;
		p->pid = pid;
		if (p->have_client_id)
			snprintf(p->key, sizeof(p->key), "fd:%s:%llu",
				 p->device, (unsigned long long)p->client_id);
		else
			snprintf(p->key, sizeof(p->key), "fd:%s:%d:%.32s",
				 p->device, pid, de->d_name);
		if (p->task_window) {
			p->ring[0].valid = true;
			p->ring[0].size = p->task_window;
			p->ring[0].in_use = p->in_flight;
		}
		proc_meta(st, p);
	}
	closedir(dir);
}

static void scan_fdinfo(struct pt_state *st, struct pt_sample *s)
{
	char path[PATH_MAX];
	int major = pto_major(st);
	struct dirent *de;
	struct stat sb;
	DIR *dir;

	/* no driver loaded: skip walking every process's fds */
	snprintf(path, sizeof(path), "%s/class/pto", st->sysfs_root);
	if (major < 0 && stat(path, &sb) < 0)
		return;
	dir = opendir(st->proc_root);
	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (isdigit((unsigned char)de->d_name[0]))
			scan_fds(st, s, atoi(de->d_name), major);
	closedir(dir);
}

/* ---- devices ------------------------------------------------------------ */

/* Read <sysfs>/class/pto/<dev>/<attr> as one or four numbers. */
static bool sysfs_attr(const struct pt_state *st, const char *dev,
		       const char *attr, uint64_t *v, bool four)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/class/pto/%s/%s", st->sysfs_root,
		     dev, attr);
	if (n < 0 || n >= (int)sizeof(path))
		return false;
	return four ? read_u64x4(path, v) : read_u64(path, v);
}

static void scan_sysfs(struct pt_state *st, struct pt_sample *s)
{
	char path[PATH_MAX];
	uint64_t v[PTO_UAPI_NUM_WORKER_TYPES];
	struct pt_device *d;
	struct dirent *de;
	DIR *dir;
	int i;

	snprintf(path, sizeof(path), "%s/class/pto", st->sysfs_root);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "pto", 3) ||
		    !isdigit((unsigned char)de->d_name[3]) ||
		    strlen(de->d_name) >= sizeof(d->name))
			continue;
		d = device_get(s, de->d_name);
		if (!d)
			break;
		d->have_sysfs = true;
		if (sysfs_attr(st, d->name, "cores", v, true))
			for (i = 0; i < PTO_UAPI_NUM_WORKER_TYPES; i++)
				d->cores[i] = v[i];
		if (sysfs_attr(st, d->name, "busy_ns", v, true))
			memcpy(d->busy_ns, v, sizeof(v));
		sysfs_attr(st, d->name, "contexts", &d->contexts, false);
		sysfs_attr(st, d->name, "tasks_done", &d->tasks_done, false);
		sysfs_attr(st, d->name, "tasks_failed", &d->tasks_failed,
			   false);
	}
	closedir(dir);
}

/* Fold each process into its device's totals. */
static void devices_from_procs(struct pt_sample *s)
{
	int i, t;

	for (i = 0; i < s->nprocs; i++) {
		struct pt_proc *p = &s->procs[i];
		struct pt_device *d = device_get(s, p->device);

		if (!d)
			return;
		d->nprocs++;
		if (d->have_sysfs) {
			if (p->have_mem) {
				d->mem_used += p->mem_heap + p->mem_window;
			}
			continue;
		}
		/* sim: every runtime brings its own cores */
		for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
			if (d->sim || !d->cores[t])
				d->cores[t] += p->cores[t];
			d->busy_ns[t] += p->busy_ns[t];
		}
		d->contexts++;
		d->tasks_done += p->completed;
		d->tasks_failed += p->failed;
		if (p->ring[1].valid) {
			d->mem_used += p->ring[1].in_use;
			d->mem_total += p->ring[1].size;
		} else if (p->have_mem) {
			d->mem_used += p->mem_heap + p->mem_window;
		}
	}
}

/* ---- rates -------------------------------------------------------------- */

static const struct pt_proc *prev_proc(const struct pt_sample *prev,
				       const char *key)
{
	int i;

	for (i = 0; i < prev->nprocs; i++)
		if (!strcmp(prev->procs[i].key, key))
			return &prev->procs[i];
	return NULL;
}

static double clamp01(double v)
{
	return v < 0 ? 0 : v > 1 ? 1 : v;
}

static void proc_rates(struct pt_proc *p, const struct pt_proc *o,
		       double dt)
{
	int t;

	if (!o || dt <= 0)
		return;
	if (p->completed >= o->completed)
		p->tasks_per_s = (p->completed - o->completed) / dt;
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		if (!p->cores[t] || p->busy_ns[t] < o->busy_ns[t])
			continue;
		p->util[t] = clamp01((p->busy_ns[t] - o->busy_ns[t]) /
				     (dt * 1e9 * p->cores[t]));
	}
}

/*
 * Device utilisation = Δbusy / (Δwall × cores).  Devices with sysfs count
 * their own busy time; for the others sum the Δbusy of the processes seen
 * in both samples, so a runtime that comes or goes makes no jump.
 */
static void device_rates(struct pt_state *st, struct pt_device *d,
			 double dt)
{
	const struct pt_sample *prev = &st->prev;
	uint64_t delta[PTO_UAPI_NUM_WORKER_TYPES] = { 0 };
	const struct pt_device *od = NULL;
	int i, t;

	if (!st->have_prev || dt <= 0)
		return;
	for (i = 0; i < prev->ndevs; i++)
		if (!strcmp(prev->devs[i].name, d->name))
			od = &prev->devs[i];
	if (d->have_sysfs) {
		if (!od || !od->have_sysfs)
			return;
		for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
			if (d->busy_ns[t] >= od->busy_ns[t])
				delta[t] = d->busy_ns[t] - od->busy_ns[t];
	} else {
		for (i = 0; i < st->cur.nprocs; i++) {
			const struct pt_proc *p = &st->cur.procs[i], *o;

			if (strcmp(p->device, d->name))
				continue;
			o = prev_proc(prev, p->key);
			for (t = 0; o && t < PTO_UAPI_NUM_WORKER_TYPES; t++)
				if (p->busy_ns[t] >= o->busy_ns[t])
					delta[t] += p->busy_ns[t] -
						    o->busy_ns[t];
		}
	}
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		if (d->cores[t])
			d->util[t] = clamp01(delta[t] /
					     (dt * 1e9 * d->cores[t]));
}

static struct pt_hist_entry *hist_get(struct pt_state *st, const char *name)
{
	struct pt_hist_entry *h;
	int i;

	for (i = 0; i < st->nhist; i++)
		if (!strcmp(st->hist[i].name, name))
			return &st->hist[i];
	h = realloc(st->hist, (st->nhist + 1) * sizeof(*h));
	if (!h)
		return NULL;
	st->hist = h;
	h = &st->hist[st->nhist++];
	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", name);
	return h;
}

static void device_history(struct pt_state *st, struct pt_device *d)
{
	struct pt_hist_entry *h = hist_get(st, d->name);
	int t;

	if (!h)
		return;
	if (!isnan(d->util[0]) || !isnan(d->util[1]) ||
	    !isnan(d->util[2]) || !isnan(d->util[3])) {
		if (h->len == PT_HIST) {
			for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
				memmove(h->v[t], h->v[t] + 1,
					(PT_HIST - 1) * sizeof(float));
			h->len--;
		}
		for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
			h->v[t][h->len] = isnan(d->util[t]) ? 0 : d->util[t];
		h->len++;
	}
	d->hist_len = h->len;
	memcpy(d->hist, h->v, sizeof(d->hist));
}

/* ---- the sample ---------------------------------------------------------- */

int pt_collect(struct pt_state *st)
{
	struct pt_sample *s;
	double dt = 0;
	int i;

	if (st->iteration > 0) {
		pt_sample_free(&st->prev);
		st->prev = st->cur;
		st->have_prev = true;
		memset(&st->cur, 0, sizeof(st->cur));
	}
	s = &st->cur;
	s->mono_ns = pt_now_ns(CLOCK_MONOTONIC);
	s->real_ns = pt_now_ns(CLOCK_REALTIME);

	scan_sysfs(st, s);
	scan_fdinfo(st, s);
	scan_pages(st, s);
	devices_from_procs(s);

	if (st->have_prev)
		dt = (s->mono_ns - st->prev.mono_ns) / 1e9;
	s->interval_s = dt;
	for (i = 0; i < s->nprocs; i++)
		proc_rates(&s->procs[i], st->have_prev ?
			   prev_proc(&st->prev, s->procs[i].key) : NULL, dt);
	for (i = 0; i < s->ndevs; i++) {
		device_rates(st, &s->devs[i], dt);
		device_history(st, &s->devs[i]);
	}
	st->iteration++;
	pt_sort_procs(st);
	return 0;
}

/* ---- views --------------------------------------------------------------- */

bool pt_proc_visible(const struct pt_state *st, const struct pt_proc *p)
{
	int i;

	if (st->device_filter[0] && strcmp(st->device_filter, p->device))
		return false;
	if (!st->npids)
		return true;
	for (i = 0; i < st->npids; i++)
		if (st->pids[i] == p->pid)
			return true;
	return false;
}

bool pt_device_visible(const struct pt_state *st, const struct pt_device *d)
{
	return !st->device_filter[0] || !strcmp(st->device_filter, d->name);
}

/* Occupancy of a ring in [0, 1], or NAN when not known. */
double pt_ring_occupancy(const struct pt_proc *p, int ring)
{
	const struct pt_ring *r = &p->ring[ring];

	if (!r->valid || !r->size)
		return NAN;
	return (double)r->in_use / r->size;
}

static int cmp_num(double a, double b)
{
	/* unknown sorts as lowest */
	if (isnan(a))
		a = -1;
	if (isnan(b))
		b = -1;
	return a < b ? -1 : a > b;
}

static enum pt_sort sort_key;
static bool sort_reverse;

/* Natural order: numbers descending (busiest first), text ascending. */
static int proc_cmp(const void *pa, const void *pb)
{
	const struct pt_proc *a = pa, *b = pb;
	int r = 0;

	switch (sort_key) {
	case PT_SORT_PID:
		r = (a->pid > b->pid) - (a->pid < b->pid);
		break;
	case PT_SORT_TASKS:
		r = -cmp_num(a->tasks_per_s, b->tasks_per_s);
		break;
	case PT_SORT_INFLIGHT:
		r = -cmp_num(a->in_flight, b->in_flight);
		break;
	case PT_SORT_STALLS:
		r = -cmp_num(a->stalls, b->stalls);
		break;
	case PT_SORT_FAILED:
		r = -cmp_num(a->failed, b->failed);
		break;
	case PT_SORT_DEVICE:
		r = strcmp(a->device, b->device);
		break;
	case PT_SORT_COMMAND:
		r = strcmp(a->command, b->command);
		break;
	case PT_SORT_USER:
		r = strcmp(a->user, b->user);
		break;
	default:
		break;
	}
	if (!r)
		r = (a->pid > b->pid) - (a->pid < b->pid);
	if (!r)
		r = strcmp(a->key, b->key);
	return sort_reverse ? -r : r;
}

void pt_sort_procs(struct pt_state *st)
{
	sort_key = st->sort;
	sort_reverse = st->reverse;
	if (st->cur.nprocs > 1)
		qsort(st->cur.procs, st->cur.nprocs, sizeof(*st->cur.procs),
		      proc_cmp);
}
