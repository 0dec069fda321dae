// SPDX-License-Identifier: GPL-2.0
/*
 * Compile probe: struct io_uring_task counts cancellations in in_idle
 * (6.1; renamed in_cancel later, when commands became cancelable).
 */
#include <linux/io_uring_types.h>

int pto_probe(struct io_uring_task *t);
int pto_probe(struct io_uring_task *t)
{
	return atomic_read(&t->in_idle);
}
