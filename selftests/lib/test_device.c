// SPDX-License-Identifier: MIT
/*
 * What only a device shows, on /dev/ptoN (selftests/lib/vm-device.sh
 * runs it in the VM, as root; elsewhere it skips).
 *
 * - Two runtimes created at once: one takes device memory between the
 *   other's reading what is left and its SETUP, which the device then
 *   refuses.  The other reads what is left again and is created with a
 *   smaller arena, as it would have been a moment later.
 * - A tensor range that starts in the device's heap but runs past its
 *   end is refused with -EFAULT saying so, not as host memory.
 * - pto.ko fails a context for good when one of its tasks runs past
 *   task_timeout_ms: it runs no task again.  The run with the late task
 *   returns -ETIMEDOUT; every later run of that runtime must return -EIO
 *   at once, saying why, and run nothing.  It used to queue its tasks on
 *   the failed context and wait for their completions for ever, a
 *   pto_run_cancel() included.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.h"
#include "testlib.h"

#define TIMEOUT_PARAM "/sys/module/pto/parameters/task_timeout_ms"
#define K_SPIN 1
#define K_FILL 2
#define NS_PER_S 1000000000ull

/* What the child saw, in memory it shares with the parent. */
struct outcome {
	int create;
	int run[3];		/* the late task's run, then two more */
	uint64_t ns[3];
	uint32_t first_word;	/* of the buffer the later runs fill */
	int destroyed;
};

static struct outcome *out;
static uint32_t *buf;

static int orch_late(struct pto_runtime *rt, void *arg)
{
	(void)arg;
	/* 30 s: far past the 200 ms task_timeout_ms set meanwhile */
	return PTO_SUBMIT(rt, K_SPIN, PTO_WORKER_VECTOR,
			  PTO_SCALAR(30 * NS_PER_S)) < 0 ? -1 : 0;
}

static int orch_fill(struct pto_runtime *rt, void *arg)
{
	(void)arg;
	return PTO_SUBMIT(rt, K_FILL, PTO_WORKER_VECTOR,
			  PTO_OUT_EXISTING(buf, 0, 64), PTO_SCALAR(7),
			  PTO_SCALAR(64)) < 0 ? -1 : 0;
}

static int scenario(void *arg)
{
	int (*const fns[3])(struct pto_runtime *, void *) = {
		orch_late, orch_fill, orch_fill,
	};
	struct pto_runtime *rt = NULL;
	struct pto_config cfg;
	int i;

	(void)arg;
	pto_config_init(&cfg);
	out->create = pto_runtime_create(&cfg, &rt);
	if (out->create)
		return 1;
	if (pto_kernel_register_builtin(rt, K_SPIN, PTO_WORKER_VECTOR,
					PTO_OP_SPIN_NS) ||
	    pto_kernel_register_builtin(rt, K_FILL, PTO_WORKER_VECTOR,
					PTO_OP_FILL_U32))
		return 2;
	buf = pto_malloc(rt, 4096);
	if (!buf)
		return 3;
	memset(buf, 0, 4096);
	for (i = 0; i < 3; i++) {
		uint64_t t0 = tl_now_ns();

		out->run[i] = pto_run(rt, fns[i], NULL);
		out->ns[i] = tl_now_ns() - t0;
	}
	out->first_word = buf[0];
	pto_runtime_destroy(rt);
	out->destroyed = 1;
	return 0;
}

static int orch_past_end(struct pto_runtime *rt, void *arg)
{
	int64_t *ret = arg;

	/* 128 bytes from the heap's last 64 on */
	*ret = PTO_SUBMIT(rt, K_FILL, PTO_WORKER_VECTOR,
			  PTO_OUT_EXISTING(buf, 0, 128), PTO_SCALAR(7),
			  PTO_SCALAR(128));
	return 0;
}

/*
 * libpto's ioctl() calls land here (a static link): when armed, the next
 * SETUP first creates another runtime, which takes the memory the first
 * was told it had.
 */
static bool thief_armed;
static struct pto_config thief_cfg;
static struct pto_runtime *thief;
static int thief_ret = 1;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (req == PTO_IOCTL_SETUP && thief_armed) {
		thief_armed = false;
		thief_ret = pto_runtime_create(&thief_cfg, &thief);
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

static uint64_t sysfs_u64(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	if (f && fscanf(f, "%llu", &v) != 1)
		v = 0;
	if (f)
		fclose(f);
	return v;
}

/* The default configuration's heap rings on the default pto.ko. */
#define RINGS_MIB 192ull

static void test_created_at_once(void)
{
	uint64_t total = sysfs_u64("/sys/class/pto/pto0/mem_total");
	uint64_t used = sysfs_u64("/sys/class/pto/pto0/mem_used");
	uint64_t mib = 1ull << 20, avail = total - used;
	struct pto_runtime *rt = NULL;
	int ret;

	if (!total || total < used || avail < (RINGS_MIB + 96) * mib) {
		skip("created at once: needs %llu MiB of device memory left",
		     RINGS_MIB + 96);
		return;
	}
	/* the thief leaves the victim its rings and 40 MiB */
	pto_config_init(&thief_cfg);
	thief_cfg.heap_size = 65536;
	thief_cfg.arena_size = avail - (RINGS_MIB + 40) * mib;
	thief_armed = true;
	ret = pto_runtime_create(NULL, &rt);
	ok(!thief_armed && thief_ret == 0,
	   "created at once: the other runtime took %llu MiB first (%d)",
	   (unsigned long long)(thief_cfg.arena_size / mib), thief_ret);
	ok_eq(ret, 0, "created at once: the runtime told of more memory than "
	      "is left is created all the same");
	if (rt)
		ok(rt->be.geo.heap_size >= RINGS_MIB * mib &&
		   rt->be.geo.heap_size < (RINGS_MIB + 40) * mib,
		   "created at once: with its rings and a smaller arena "
		   "(%llu MiB of heap)",
		   (unsigned long long)(rt->be.geo.heap_size / mib));
	else
		ok(0, "created at once: with its rings and a smaller arena");
	if (rt)
		pto_runtime_destroy(rt);
	if (thief)
		pto_runtime_destroy(thief);
}

/* A range from the heap's last bytes on: refused, and named as such. */
static void test_past_end(void)
{
	struct pto_runtime *rt = tl_runtime(NULL);
	struct tl_capture cap;
	int64_t id = 0;
	char *text;
	int ret;

	if (pto_kernel_register_builtin(rt, K_FILL, PTO_WORKER_VECTOR,
					PTO_OP_FILL_U32))
		bail_out("cannot register FILL_U32");
	/* the arena's last 64 bytes (it ends the heap region) */
	buf = (uint32_t *)(void *)(rt->be.heap + rt->be.heap_size - 64);
	tl_capture_begin(&cap);
	ret = pto_run(rt, orch_past_end, &id);
	text = tl_capture_end(&cap);
	ok(ret == 0 && id == -EFAULT &&
	   strstr(text, "starts in device memory but its 128 bytes"),
	   "a range running past the heap's end: -EFAULT, said as such "
	   "(%lld)", (long long)id);
	diag("stderr: %s", text);
	free(text);
	pto_runtime_destroy(rt);
}

static int write_param(const char *val)
{
	FILE *f = fopen(TIMEOUT_PARAM, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(val, f) < 0;
	return fclose(f) || ret ? -1 : 0;
}

static void count_said(const char *text, const char *want, int n,
		       const char *what)
{
	const char *p = text;
	int seen = 0;

	while ((p = strstr(p, want))) {
		seen++;
		p++;
	}
	ok(seen == n, "%s (said %d times, want %d)", what, seen, n);
}

int main(void)
{
	const char *dev = getenv("PTO_DEVICE");
	char old[32] = "5000", text[16384] = "", why[64];
	FILE *f;
	int status;

	if (!dev || strncmp(dev, "/dev/pto", 8)) {
		skip("device checks: need PTO_DEVICE=/dev/ptoN");
		return tap_done();
	}
	test_past_end();
	test_created_at_once();
	if (access(TIMEOUT_PARAM, W_OK)) {
		skip("device context failure: needs write access to %s",
		     TIMEOUT_PARAM);
		return tap_done();
	}
	f = fopen(TIMEOUT_PARAM, "r");
	if (!f || !fgets(old, sizeof(old), f))
		bail_out("cannot read %s", TIMEOUT_PARAM);
	fclose(f);
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (out == MAP_FAILED)
		bail_out("mmap: %s", strerror(errno));
	memset(out, 0x55, sizeof(*out));
	out->destroyed = 0;
	if (write_param("200"))
		bail_out("cannot write %s", TIMEOUT_PARAM);
	status = tl_in_child(scenario, NULL, 60, text, sizeof(text));
	write_param(old);

	ok(status == 0, "the program ends, no run hanging (%s)",
	   tl_status_text(status, why, sizeof(why)));
	ok_eq(out->create, 0, "created on %s", dev);
	ok_eq(out->run[0], -ETIMEDOUT, "the run of a task past "
	      "task_timeout_ms returns -ETIMEDOUT");
	ok(out->run[0] == -ETIMEDOUT && out->ns[0] < 20 * NS_PER_S,
	   "within 20 s of its start (%llu ms)",
	   (unsigned long long)(out->ns[0] / 1000000));
	ok_eq(out->run[1], -EIO, "the next run returns -EIO");
	ok_eq(out->run[2], -EIO, "and so does the one after it");
	ok(out->ns[1] < 5 * NS_PER_S && out->ns[2] < 5 * NS_PER_S,
	   "both at once (%llu and %llu ms)",
	   (unsigned long long)(out->ns[1] / 1000000),
	   (unsigned long long)(out->ns[2] / 1000000));
	ok_eq(out->first_word, 0, "their task did not run");
	count_said(text, "this runtime's device context has failed", 2,
		   "each refused run says why");
	ok_eq(out->destroyed, 1, "the runtime is destroyed afterwards");
	if (status)
		diag("stderr: %s", text);
	return tap_done();
}
