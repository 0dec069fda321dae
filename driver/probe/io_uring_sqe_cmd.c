// SPDX-License-Identifier: GPL-2.0
/* Compile probe: a command's payload is io_uring_sqe_cmd(cmd->sqe) (6.6). */
#include <linux/io_uring.h>
#ifdef PTO_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#endif

const void *pto_probe(struct io_uring_cmd *c);
const void *pto_probe(struct io_uring_cmd *c)
{
	return io_uring_sqe_cmd(c->sqe);
}
