// SPDX-License-Identifier: GPL-2.0
/*
 * Round-trip latency and throughput of NOP tasks through /dev/ptoN with
 * three ways of waiting for completions: io_uring WAIT commands (the KICK
 * goes in the same submission, so one system call per round trip), the
 * blocking WAIT ioctl and poll() (KICK ioctl plus the wait: two).  The
 * modes run interleaved in rounds so a busy host slows all of them alike;
 * medians are printed as TAP comments and a final "ok" line per mode.
 *
 *   pto_wait_bench [rounds] [tasks-per-round]
 */
#include <liburing.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>

#include "pto_test_util.h"

#define PTO_MAX_CORES	64

enum { MODE_URING, MODE_IOCTL, MODE_POLL, NUM_MODES };
static const char * const mode_name[NUM_MODES] = {
	"io_uring", "ioctl", "poll",
};

struct bench {
	struct pto_t p;
	struct io_uring ring;
	bool kick_pending;	/* a KICK SQE waits for the next submit */
};

static int sleep_for_completion(struct bench *b, int mode)
{
	struct pto_t *p = &b->p;

	if (mode == MODE_IOCTL)
		return pto_t_wait(p, 5000000000ull) < 0 ? -1 : 0;
	if (mode == MODE_POLL) {
		struct pollfd pfd = { p->fd, POLLIN, 0 };

		return poll(&pfd, 1, 5000) == 1 ? 0 : -1;
	}
	{
		struct pto_uring_wait w = { .cring_head = p->head,
					    .timeout_ms = 5000 };
		struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);
		struct io_uring_cqe *cqe;
		int res;

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, p->fd, NULL, 0, 0);
		sqe->cmd_op = PTO_URING_CMD_WAIT;
		memcpy(sqe->cmd, &w, sizeof(w));
		/* one system call submits a pending KICK and this WAIT */
		b->kick_pending = false;
		if (io_uring_submit_and_wait(&b->ring, 1) < 1 ||
		    io_uring_wait_cqe(&b->ring, &cqe))
			return -1;
		res = cqe->res;	/* a failed KICK's CQE shows up here too */
		io_uring_cqe_seen(&b->ring, cqe);
		return res < 0 ? -1 : 0;
	}
}

/*
 * io_uring: the KICK is only queued (its CQE skipped on success) and goes
 * to the kernel with the next WAIT, or by flush() if none follows.
 */
static int kick(struct bench *b, int mode, uint32_t core)
{
	struct pto_kick k = { .core = core };
	struct io_uring_sqe *sqe;

	if (mode != MODE_URING)
		return pto_t_kick(&b->p, core);
	if (b->kick_pending)
		return 0;
	sqe = io_uring_get_sqe(&b->ring);
	if (!sqe)
		return -1;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, b->p.fd, NULL, 0, 0);
	sqe->cmd_op = PTO_URING_CMD_KICK;
	sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	memcpy(sqe->cmd, &k, sizeof(k));
	b->kick_pending = true;
	return 0;
}

static void flush(struct bench *b)
{
	if (b->kick_pending) {
		io_uring_submit(&b->ring);
		b->kick_pending = false;
	}
}

static double fail(struct bench *b, const char *what, int v)
{
	printf("# %s failed (%d, errno %d), cring tail %llu head %llu\n",
	       what, v, errno, (unsigned long long)b->p.cring->tail,
	       (unsigned long long)b->p.head);
	return -1;
}

/* One task at a time: queue, kick, sleep, reap.  Returns ns per task. */
static double latency(struct bench *b, int mode, int n)
{
	struct pto_completion c;
	uint64_t t0 = pto_t_now_ns();
	int i;

	for (i = 0; i < n; i++) {
		pto_t_queue(&b->p, 0, 0, NULL, 0);
		if (kick(b, mode, 0))
			return -1;
		while (!pto_t_reap(&b->p, &c))
			if (sleep_for_completion(b, mode))
				return fail(b, "latency: sleep", mode);
		flush(b);
		if (c.status)
			return fail(b, "latency: task status", c.status);
	}
	return (double)(pto_t_now_ns() - t0) / n;
}

/* Every core kept PTO_CORE_QUEUE_SLOTS deep.  Returns tasks per second. */
static double throughput(struct bench *b, int mode, int n)
{
	struct pto_t *p = &b->p;
	uint32_t cores = p->info.cores[0], out[PTO_MAX_CORES], core;
	/* every task in ring 0: handles are sequence numbers */
	uint64_t t0 = pto_t_now_ns(), oldest = p->next_seq[0];
	uint32_t tw = p->s.ring[0].task_window;
	int queued = 0, done = 0;
	struct pto_completion c;
	uint8_t *fin = calloc(tw, 1);

	if (!fin)
		return -1;
	if (cores > PTO_MAX_CORES)
		cores = PTO_MAX_CORES;
	memset(out, 0, sizeof(out));
	while (done < n) {
		int any = 0;

		for (core = 0; core < cores; core++) {
			/* ids in flight must fit the descriptor window */
			while (out[core] < PTO_CORE_QUEUE_SLOTS && queued < n &&
			       queued - done < (int)p->cring->size &&
			       p->next_seq[0] - oldest < tw) {
				pto_t_queue(p, core, 0, NULL, 0);
				out[core]++;
				queued++;
				any = 1;
			}
		}
		if (any && kick(b, mode, PTO_KICK_ALL)) {
			free(fin);
			return fail(b, "throughput: kick", mode);
		}
		if (!pto_t_reap(p, &c)) {
			if (sleep_for_completion(b, mode)) {
				free(fin);
				return fail(b, "throughput: sleep", mode);
			}
			continue;
		}
		flush(b);
		do {
			if (c.status) {
				free(fin);
				return fail(b, "throughput: task status",
					    c.status);
			}
			out[c.core]--;
			done++;
			fin[PTO_TASK_SEQ(c.task_id) & (tw - 1)] = 1;
		} while (pto_t_reap(p, &c));
		while (oldest < p->next_seq[0] && fin[oldest & (tw - 1)])
			fin[oldest++ & (tw - 1)] = 0;
	}
	free(fin);
	return n / ((double)(pto_t_now_ns() - t0) / 1e9);
}

#define MAX_ROUNDS	64

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	int n = argc > 2 ? atoi(argv[2]) : 2000;
	static double lat[NUM_MODES][MAX_ROUNDS], tput[NUM_MODES][MAX_ROUNDS];
	struct bench b = { 0 };
	int r, m, fails = 0;

	if (rounds < 1 || rounds > MAX_ROUNDS || n < 1)
		return 2;
	printf("1..%d\n", NUM_MODES);
	if (pto_t_open(&b.p, 1024, 1 << 20, 1024) ||
	    io_uring_queue_init(8, &b.ring, 0) || !b.p.info.cores[0]) {
		printf("Bail out! cannot open %s\n", pto_t_dev());
		return 1;
	}
	if (pto_t_bind(&b.p, 0, PTO_UAPI_WORKER_CUBE, PTO_OP_NOP))
		return 1;
	for (r = 0; r < rounds; r++)
		for (m = 0; m < NUM_MODES; m++) {
			lat[m][r] = latency(&b, m, n / 4);
			tput[m][r] = throughput(&b, m, n);
		}
	printf("# NOP tasks on %s, %u cube cores, %d rounds of %d tasks, medians\n",
	       pto_t_dev(), b.p.info.cores[0], rounds, n);
	printf("# %-9s %14s %14s\n", "wait", "latency (us)", "tasks/s");
	for (m = 0; m < NUM_MODES; m++) {
		int bad = 0;

		for (r = 0; r < rounds; r++)
			bad |= lat[m][r] < 0 || tput[m][r] < 0;
		qsort(lat[m], rounds, sizeof(double), cmp_double);
		qsort(tput[m], rounds, sizeof(double), cmp_double);
		printf("# %-9s %14.1f %14.0f\n", mode_name[m],
		       lat[m][rounds / 2] / 1e3, tput[m][rounds / 2]);
		printf("%sok %d - wait_bench %s\n", bad ? "not " : "", m + 1,
		       mode_name[m]);
		fails += bad;
	}
	io_uring_queue_exit(&b.ring);
	pto_t_close(&b.p);
	return fails ? 1 : 0;
}
