// SPDX-License-Identifier: MIT
/*
 * ptotop's sources: libpto stats pages, the pto driver's fdinfo lines and
 * its per-device sysfs attributes, read into the raw records of sources.h.
 * See Documentation/ptotop.rst for what each source offers.
 */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sources.h"
#include "utf8.h"

/* ---- small file helpers -------------------------------------------------- */

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
static bool read_u64_per_type(const char *path,
			      uint64_t v[PTO_UAPI_NUM_WORKER_TYPES])
{
	char buf[256], *p = buf, *end;
	int t;

	if (read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		v[t] = strtoull(p, &end, 0);
		if (end == p)
			return false;
		p = end;
	}
	return true;
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

void pt_roots_from_env(struct pt_roots *roots)
{
	roots->stats_dir = pto_statspage_dir();
	roots->proc_root = env_or("PTOTOP_PROC_ROOT", "/proc");
	roots->sysfs_root = env_or("PTOTOP_SYSFS_ROOT", "/sys");
}

/* ---- processes ----------------------------------------------------------- */

static void read_user(const struct pt_roots *roots, int pid,
		      char user[PT_USER_LEN])
{
	char path[PATH_MAX];
	struct passwd *pw;
	struct stat sb;

	snprintf(user, PT_USER_LEN, "?");
	snprintf(path, sizeof(path), "%s/%d", roots->proc_root, pid);
	if (stat(path, &sb) < 0)
		return;
	pw = getpwuid(sb.st_uid);
	if (pw)
		snprintf(user, PT_USER_LEN, "%s", pw->pw_name);
	else
		snprintf(user, PT_USER_LEN, "%u", (unsigned int)sb.st_uid);
}

/*
 * argv is NUL-separated; show it space-separated, as UTF-8, which the
 * terminal and JSON take: a control character becomes a space, a byte
 * that starts no UTF-8 character a '?', and a character cut short by
 * the buffer's end is left out.  False if empty.
 */
static bool read_cmdline(const struct pt_roots *roots, int pid,
			 char command[PT_COMMAND_LEN])
{
	char path[PATH_MAX], buf[PT_COMMAND_LEN];
	ssize_t n, i, len, out = 0;

	snprintf(path, sizeof(path), "%s/%d/cmdline", roots->proc_root, pid);
	n = read_small(path, buf, sizeof(buf));
	if (n <= 0)
		return false;
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	for (i = 0; i < n; i += len ? len : 1) {
		unsigned char c = (unsigned char)buf[i];

		len = (ssize_t)pto_utf8_len(buf + i);
		if (!len && c >= 0xc2 && n == (ssize_t)sizeof(buf) - 1 &&
		    n - i < 4)
			break;	/* the read's end cut it */
		if (c < 0x20 || c == 0x7f) {
			command[out++] = ' ';
		} else if (len) {
			memcpy(command + out, buf + i, len);
			out += len;
		} else {
			command[out++] = '?';
		}
	}
	command[out] = '\0';
	return true;
}

/* Kernel threads and zombies have no cmdline: show [comm], as top does. */
static void read_comm(const struct pt_roots *roots, int pid,
		      char command[PT_COMMAND_LEN])
{
	char path[PATH_MAX], buf[64];

	snprintf(path, sizeof(path), "%s/%d/comm", roots->proc_root, pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return;
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(command, PT_COMMAND_LEN, "[%.64s]", buf);
}

void pt_read_identity(const struct pt_roots *roots, int pid,
		      char user[PT_USER_LEN], char command[PT_COMMAND_LEN])
{
	read_user(roots, pid, user);
	snprintf(command, PT_COMMAND_LEN, "?");
	if (!read_cmdline(roots, pid, command))
		read_comm(roots, pid, command);
}

/* ---- stats pages (sim and dev runtimes of libpto) ------------------------ */

/*
 * Does process pid map the file called name?  1 yes, 0 no, -1 cannot
 * tell (another user's process, or no /proc).  A live runtime keeps its
 * page mapped until it unlinks it, so "no" means the pid was reused.
 */
static int proc_maps_file(const struct pt_roots *roots, int pid,
			  const char *name)
{
	char path[PATH_MAX], line[PATH_MAX + 128];
	size_t len = strlen(name);
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/maps", roots->proc_root, pid);
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

static bool pid_gone(int pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/*
 * A page is stale when its process is gone, or when its pid now belongs to
 * a process that does not map it (pid reuse).  Time stamps are not used:
 * a clock step would make a live page look stale.
 */
static bool page_stale(const struct pt_roots *roots, int pid,
		       const char *name)
{
	if (pid <= 0 || pid_gone(pid))
		return true;
	return proc_maps_file(roots, pid, name) == 0;
}

/* The pid in a page's name, pto-stats.<pid>.<n>; -1 if there is none. */
static int name_pid(const char *name)
{
	const char *p = name + strlen(PTO_STATSPAGE_PREFIX);
	char *end;
	long pid;

	pid = strtol(p, &end, 10);
	return end != p && *end == '.' && pid > 0 && pid <= INT_MAX ?
	       (int)pid : -1;
}

/* What every version of the page starts with. */
struct page_header {
	uint64_t magic;
	uint32_t version;
	uint32_t size;
};

static_assert(offsetof(struct pto_statspage, version) ==
	      offsetof(struct page_header, version) &&
	      offsetof(struct pto_statspage, size) ==
	      offsetof(struct page_header, size),
	      "the header of every stats page version");

/*
 * Read the header before mapping anything: a page of another version may
 * be smaller than ours, and is reported rather than taken for a file that
 * is no page.  Returns 0 for a page of our version, -EPROTO for another
 * version (in *version), -EINVAL for anything else.
 */
static int page_check(int fd, const struct stat *sb, uint32_t *version)
{
	struct page_header h;

	if (!S_ISREG(sb->st_mode) ||
	    pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    h.magic != PTO_STATSPAGE_MAGIC)
		return -EINVAL;
	*version = h.version;
	if (h.version != PTO_STATSPAGE_VERSION)
		return -EPROTO;
	/* size is fixed at creation: no SIGBUS from a shrinking file */
	if (h.size < sizeof(struct pto_statspage) ||
	    sb->st_size < (off_t)sizeof(struct pto_statspage))
		return -EINVAL;
	return 0;
}

/*
 * Map and copy a checked page: 0, or -ESRCH for a stale one.  pid never
 * changes after creation, so it is checked before the seqlock read: a
 * runtime killed in mid-update leaves seq odd forever.
 */
static int page_copy(const struct pt_roots *roots, int fd, const char *name,
		     struct pto_statspage *out)
{
	const struct pto_statspage *map;
	int ret;

	map = mmap(NULL, sizeof(*map), PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	if (page_stale(roots, map->pid, name))
		ret = -ESRCH;
	else
		ret = pto_statspage_read(map, out);
	munmap((void *)map, sizeof(*map));
	out->device[sizeof(out->device) - 1] = '\0';
	return ret;
}

/*
 * Load one page: 0 on success, -ESRCH for a stale page, -EPROTO for a
 * live page of another version (*version), another negative errno for a
 * file that is not a page.  A stale page of another version is only left
 * out: what else it holds is not ours to judge.
 */
static int page_load(const struct pt_roots *roots, int dirfd,
		     const char *name, struct pto_statspage *out, uid_t *owner,
		     uint32_t *version)
{
	struct stat sb;
	int fd, ret;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0) {
		ret = -errno;
	} else {
		*owner = sb.st_uid;
		ret = page_check(fd, &sb, version);
		if (!ret)
			ret = page_copy(roots, fd, name, out);
		else if (ret == -EPROTO &&
			 page_stale(roots, name_pid(name), name))
			ret = -EINVAL;
	}
	close(fd);
	return ret;
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
	if (pid <= 0 || !pid_gone(pid))
		return;
	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(sb.st_mode) && sb.st_uid == geteuid())
		unlinkat(dirfd, name, 0);
}

/* Note a live page of another version; false when out of memory. */
static bool add_skipped(struct pt_sources *src, const char *name,
			uint32_t version)
{
	struct pt_skipped_page *skipped, *sp;

	skipped = pt_grow(src->skipped, src->nskipped, &src->skipped_cap,
			  sizeof(*skipped), 4);
	if (!skipped)
		return false;
	src->skipped = skipped;
	sp = &skipped[src->nskipped++];
	snprintf(sp->file, sizeof(sp->file), "%s", name);
	sp->pid = name_pid(name);
	sp->version = version;
	return true;
}

/* Add the page called name if it is a live one; false when out of memory. */
static bool add_page(const struct pt_roots *roots, struct pt_sources *src,
		     int dirfd, const char *name)
{
	struct pt_stats_page *pages, *pg;
	uid_t owner = (uid_t)-1;
	uint32_t version = 0;
	int ret;

	pages = pt_grow(src->pages, src->npages, &src->pages_cap,
			sizeof(*pages), 8);
	if (!pages)
		return false;
	src->pages = pages;
	pg = &pages[src->npages];
	ret = page_load(roots, dirfd, name, &pg->page, &owner, &version);
	if (ret == -ESRCH && owner == geteuid()) {
		/* a crashed runtime's leftover: tidy up our own */
		unlinkat(dirfd, name, 0);
	}
	if (ret == -EPROTO)
		return add_skipped(src, name, version);
	if (ret)
		return true;
	snprintf(pg->file, sizeof(pg->file), "%s", name);
	src->npages++;
	return true;
}

static void read_pages(const struct pt_roots *roots, struct pt_sources *src)
{
	size_t prefix_len = strlen(PTO_STATSPAGE_PREFIX);
	struct dirent *de;
	DIR *dir;

	dir = opendir(roots->stats_dir);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			tidy_temp(dirfd(dir), de->d_name);
		if (strncmp(de->d_name, PTO_STATSPAGE_PREFIX, prefix_len))
			continue;
		if (!add_page(roots, src, dirfd(dir), de->d_name))
			break;
	}
	closedir(dir);
}

/* ---- /dev/ptoN clients through fdinfo ------------------------------------ */

/* The pto driver's character major from /proc/devices, or -1. */
static int pto_major(const struct pt_roots *roots)
{
	char path[PATH_MAX], buf[4096], *line, *save;
	int major;

	snprintf(path, sizeof(path), "%s/devices", roots->proc_root);
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
	int t;

	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		if (!strcmp(name, pt_type_name(t)))
			return t;
	return -1;
}

/* The per-type lines: pto-engine-<type> and pto-engine-capacity-<type>. */
static void fdinfo_engine(struct pt_fd_client *c, const char *key,
			  const char *val)
{
	static const char capacity[] = "pto-engine-capacity-";
	static const char engine[] = "pto-engine-";
	int t;

	if (!strncmp(key, capacity, sizeof(capacity) - 1)) {
		t = type_index(key + sizeof(capacity) - 1);
		if (t >= 0)
			c->cores[t] = field_u64(val);
	} else {
		t = type_index(key + sizeof(engine) - 1);
		if (t >= 0)
			c->busy_ns[t] = field_u64(val);
	}
}

/* Parse one "pto-<key>:\t<value>" line of the driver into c. */
static void fdinfo_line(struct pt_fd_client *c, const char *key,
			const char *val)
{
	if (!strcmp(key, "pto-device")) {
		snprintf(c->device, sizeof(c->device), "%s", val);
	} else if (!strcmp(key, "pto-client-id")) {
		c->have_client_id = true;
		c->client_id = field_u64(val);
	} else if (!strncmp(key, "pto-engine-", 11)) {
		fdinfo_engine(c, key, val);
	} else if (!strcmp(key, "pto-memory-heap")) {
		c->have_mem = true;
		c->mem_heap = field_u64(val) * 1024;	/* KiB */
	} else if (!strcmp(key, "pto-memory-window")) {
		c->have_mem = true;
		c->mem_window = field_u64(val) * 1024;
	} else if (!strcmp(key, "pto-task-window")) {
		c->task_window = field_u64(val);
	} else if (!strcmp(key, "pto-tasks-in-flight")) {
		c->in_flight = field_u64(val);
	} else if (!strcmp(key, "pto-tasks-done")) {
		c->done = field_u64(val);
	} else if (!strcmp(key, "pto-tasks-failed")) {
		c->failed = field_u64(val);
	} else if (!strcmp(key, "pto-state")) {
		snprintf(c->state, sizeof(c->state), "%s", val);
	}
}

/* Parse an fdinfo file (buf is modified); true if it is a pto client. */
static bool fdinfo_parse(char *buf, struct pt_fd_client *c)
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
			fdinfo_line(c, line, val);
	}
	return is_pto && c->device[0];
}

/* Add the client behind descriptor fd of pid, if it is one. */
static bool add_client(const struct pt_roots *roots, struct pt_sources *src,
		       int pid, const char *fd, int major)
{
	char path[PATH_MAX], buf[4096];
	struct pt_fd_client *clients, *c;

	snprintf(path, sizeof(path), "%s/%d/fd/%s", roots->proc_root, pid, fd);
	if (!fd_is_pto(path, major))
		return true;
	snprintf(path, sizeof(path), "%s/%d/fdinfo/%s", roots->proc_root, pid,
		 fd);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return true;
	clients = pt_grow(src->clients, src->nclients, &src->clients_cap,
			  sizeof(*clients), 16);
	if (!clients)
		return false;
	src->clients = clients;
	c = &clients[src->nclients];
	memset(c, 0, sizeof(*c));
	if (!fdinfo_parse(buf, c))
		return true;
	c->pid = pid;
	c->fd = atoi(fd);
	src->nclients++;
	return true;
}

static void read_process_fds(const struct pt_roots *roots,
			     struct pt_sources *src, int pid, int major)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/fd", roots->proc_root, pid);
	dir = opendir(path);
	if (!dir)
		return;		/* gone, or another user's */
	while ((de = readdir(dir))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		if (!add_client(roots, src, pid, de->d_name, major))
			break;
	}
	closedir(dir);
}

/*
 * The generic DRM tools only look at DRM majors, so walk /proc/<pid>/fd
 * ourselves; but not when no driver is loaded.
 */
static void read_fdinfo(const struct pt_roots *roots, struct pt_sources *src)
{
	char path[PATH_MAX];
	int major = pto_major(roots);
	struct dirent *de;
	struct stat sb;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/class/pto", roots->sysfs_root);
	if (major < 0 && stat(path, &sb) < 0)
		return;
	dir = opendir(roots->proc_root);
	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (isdigit((unsigned char)de->d_name[0]))
			read_process_fds(roots, src, atoi(de->d_name), major);
	closedir(dir);
}

/* ---- devices in sysfs ---------------------------------------------------- */

/* Read <sysfs>/class/pto/<dev>/<attr> as one number. */
static bool sysfs_u64(const struct pt_roots *roots, const char *dev,
		      const char *attr, uint64_t *v)
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/class/pto/%s/%s",
		     roots->sysfs_root, dev, attr);
	if (n < 0 || n >= (int)sizeof(path))
		return false;
	return read_u64(path, v);
}

/* Read <sysfs>/class/pto/<dev>/<attr> as a number per worker type. */
static bool sysfs_per_type(const struct pt_roots *roots, const char *dev,
			   const char *attr,
			   uint64_t v[PTO_UAPI_NUM_WORKER_TYPES])
{
	char path[PATH_MAX];
	int n;

	n = snprintf(path, sizeof(path), "%s/class/pto/%s/%s",
		     roots->sysfs_root, dev, attr);
	if (n < 0 || n >= (int)sizeof(path))
		return false;
	return read_u64_per_type(path, v);
}

static void read_sysfs_device(const struct pt_roots *roots,
			      struct pt_sysfs_device *d)
{
	uint64_t v[PTO_UAPI_NUM_WORKER_TYPES];
	int t;

	d->have_cores = sysfs_per_type(roots, d->name, "cores", v);
	for (t = 0; d->have_cores && t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		d->cores[t] = v[t];
	d->have_busy = sysfs_per_type(roots, d->name, "busy_ns", v);
	if (d->have_busy)
		memcpy(d->busy_ns, v, sizeof(v));
	sysfs_u64(roots, d->name, "contexts", &d->contexts);
	sysfs_u64(roots, d->name, "tasks_done", &d->tasks_done);
	sysfs_u64(roots, d->name, "tasks_failed", &d->tasks_failed);
	/* drivers before these attributes: the rows' memory, no total */
	d->have_mem = sysfs_u64(roots, d->name, "mem_used", &d->mem_used) &&
		      sysfs_u64(roots, d->name, "mem_total", &d->mem_total);
}

/* "pto" and a digit: the devices, not whatever else the class may hold. */
static bool is_device_name(const char *name)
{
	return !strncmp(name, "pto", 3) && isdigit((unsigned char)name[3]) &&
	       strlen(name) < PT_NAME_LEN;
}

static void read_sysfs(const struct pt_roots *roots, struct pt_sources *src)
{
	struct pt_sysfs_device *devs, *d;
	char path[PATH_MAX];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/class/pto", roots->sysfs_root);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (!is_device_name(de->d_name))
			continue;
		devs = pt_grow(src->devs, src->ndevs, &src->devs_cap,
			       sizeof(*devs), 8);
		if (!devs)
			break;
		src->devs = devs;
		d = &devs[src->ndevs++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", de->d_name);
		read_sysfs_device(roots, d);
	}
	closedir(dir);
}

/* ---- all of them --------------------------------------------------------- */

void pt_sources_read(const struct pt_roots *roots, struct pt_sources *src)
{
	read_sysfs(roots, src);
	read_fdinfo(roots, src);
	read_pages(roots, src);
}

void pt_sources_free(struct pt_sources *src)
{
	free(src->devs);
	free(src->clients);
	free(src->pages);
	free(src->skipped);
	memset(src, 0, sizeof(*src));
}
