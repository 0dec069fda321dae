// SPDX-License-Identifier: GPL-2.0
/* Compile probe: io_uring_cmd_done() takes issue_flags (6.1.y backport). */
#include <linux/io_uring.h>
#ifdef PTO_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#endif

void pto_probe(struct io_uring_cmd *c);
void pto_probe(struct io_uring_cmd *c)
{
	io_uring_cmd_done(c, 0, 0, 0);
}
