// SPDX-License-Identifier: GPL-2.0
/* Compile probe: struct io_uring_cmd lives in <linux/io_uring/cmd.h> (6.7). */
#include <linux/io_uring/cmd.h>

u32 pto_probe(struct io_uring_cmd *c);
u32 pto_probe(struct io_uring_cmd *c)
{
	return c->cmd_op;
}
