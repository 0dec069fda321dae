// SPDX-License-Identifier: MIT
/*
 * Publish a runtime's counters in a small shared-memory file that monitors
 * (ptotop) map read-only.  See <pto/pto_statspage.h> for the format.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "statspage.h"

/*
 * The path of each page, kept out of the shared format so that destroy
 * can unlink it.  Runtimes are few and long-lived: a list is enough.
 */
struct page_entry {
	struct pto_statspage *page;
	struct page_entry *next;
	char path[];
};

static pthread_mutex_t pages_lock = PTHREAD_MUTEX_INITIALIZER;
static struct page_entry *pages;
static unsigned int page_seq;	/* under pages_lock */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void page_init(struct pto_statspage *page, const char *device)
{
	memset(page, 0, sizeof(*page));
	page->magic = PTO_STATSPAGE_MAGIC;
	page->version = PTO_STATSPAGE_VERSION;
	page->size = sizeof(*page);
	page->pid = getpid();
	page->start_ns = now_ns(CLOCK_REALTIME);
	page->update_ns = now_ns(CLOCK_MONOTONIC);
	snprintf(page->device, sizeof(page->device), "%s",
		 device ? device : "sim");
}

/*
 * Build the page under a hidden temporary name and rename it into place,
 * so a monitor never sees a file that is still empty or half filled.
 */
static struct pto_statspage *page_publish(const char *tmp, const char *path,
					  const char *device)
{
	struct pto_statspage *page;
	int fd;

	fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, sizeof(*page)) < 0) {
		close(fd);
		unlink(tmp);
		return NULL;
	}
	page = mmap(NULL, sizeof(*page), PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
	close(fd);
	if (page == MAP_FAILED) {
		unlink(tmp);
		return NULL;
	}
	page_init(page, device);
	if (rename(tmp, path) < 0) {
		munmap(page, sizeof(*page));
		unlink(tmp);
		return NULL;
	}
	return page;
}

/*
 * The pid in a page's name (PREFIX<pid>.<n>, or the temporary
 * .PREFIXnew.<pid>.<n> of a writer killed before its rename); 0 if none.
 */
static pid_t page_pid(const char *name)
{
	static const char tmp[] = "." PTO_STATSPAGE_PREFIX "new.";
	const char *p;
	char *end;
	long pid;

	if (!strncmp(name, tmp, sizeof(tmp) - 1))
		p = name + sizeof(tmp) - 1;
	else if (!strncmp(name, PTO_STATSPAGE_PREFIX,
			  sizeof(PTO_STATSPAGE_PREFIX) - 1))
		p = name + sizeof(PTO_STATSPAGE_PREFIX) - 1;
	else
		return 0;
	pid = strtol(p, &end, 10);
	return end != p && *end == '.' && pid > 0 && pid <= INT_MAX ?
	       (pid_t)pid : 0;
}

/*
 * Remove the pages of our user's processes that are gone: a runtime
 * killed (SIGKILL, a crash) cannot unlink its own, and ptotop removes
 * them only when the same user runs it.  A page whose pid was reused is
 * left to ptotop, which can tell by the process's mappings.
 */
static void tidy_dead_pages(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat sb;
	pid_t pid;

	if (!d)
		return;
	while ((de = readdir(d))) {
		pid = page_pid(de->d_name);
		if (!pid || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb,
			    AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(sb.st_mode) && sb.st_uid == geteuid())
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

static bool said_bad_dir;

struct pto_statspage *pto_statspage_create(const char *device)
{
	const char *env = getenv(pto_env_name(PTO_ENV_STATS));
	const char *dir = pto_statspage_dir();
	char tmp[PATH_MAX];
	struct page_entry *e;
	unsigned int seq;
	size_t len;

	if (env && !strcmp(env, "0"))
		return NULL;
	pthread_mutex_lock(&pages_lock);
	seq = page_seq++;
	pthread_mutex_unlock(&pages_lock);
	if (!seq)	/* once per process: runtimes may be made often */
		tidy_dead_pages(dir);

	len = strlen(dir) + sizeof("/" PTO_STATSPAGE_PREFIX) + 2 * 12;
	e = malloc(sizeof(*e) + len);
	if (!e)
		return NULL;
	snprintf(e->path, len, "%s/%s%d.%u", dir, PTO_STATSPAGE_PREFIX,
		 (int)getpid(), seq);
	snprintf(tmp, sizeof(tmp), "%s/.%snew.%d.%u", dir,
		 PTO_STATSPAGE_PREFIX, (int)getpid(), seq);
	e->page = page_publish(tmp, e->path, device);
	if (!e->page) {
		/* a directory the user named: say once why ptotop sees nothing */
		if (getenv("PTO_STATS_DIR") &&
		    !__atomic_exchange_n(&said_bad_dir, true, __ATOMIC_RELAXED))
			pto_log("stats page: cannot create it in %s (%s); "
				"ptotop will not see this process\n", dir,
				strerror(errno));
		free(e);
		return NULL;
	}
	pthread_mutex_lock(&pages_lock);
	e->next = pages;
	pages = e;
	pthread_mutex_unlock(&pages_lock);
	return e->page;
}

void pto_statspage_destroy(struct pto_statspage *page)
{
	struct page_entry **pp, *e = NULL;

	if (!page)
		return;
	pthread_mutex_lock(&pages_lock);
	for (pp = &pages; *pp; pp = &(*pp)->next) {
		if ((*pp)->page == page) {
			e = *pp;
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&pages_lock);
	/* A forked child must not unlink the page its parent still uses. */
	if (e && page->pid == getpid())
		unlink(e->path);
	munmap(page, sizeof(*page));
	free(e);
}

void pto_statspage_begin(struct pto_statspage *page)
{
	uint64_t seq;

	if (!page)
		return;
	/* Single writer: a plain read-modify-write of seq is enough. */
	seq = __atomic_load_n(&page->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&page->seq, seq + 1, __ATOMIC_RELAXED);
	/*
	 * Readers must see the odd seq before any of the field stores that
	 * follow (the kernel's write_seqcount_begin: smp_wmb()).  TSan does
	 * not model fences; a seq_cst no-op RMW is a full barrier on the
	 * CPUs we build for and keeps TSan builds quiet.
	 */
#ifdef __SANITIZE_THREAD__
	__atomic_fetch_add(&page->seq, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

void pto_statspage_end(struct pto_statspage *page)
{
	uint64_t seq;

	if (!page)
		return;
	page->update_ns = now_ns(CLOCK_MONOTONIC);
	seq = __atomic_load_n(&page->seq, __ATOMIC_RELAXED);
	/* release: every field store is visible before the even seq */
	__atomic_store_n(&page->seq, seq + 1, __ATOMIC_RELEASE);
}
