// SPDX-License-Identifier: GPL-2.0
/*
 * Compile probe: io_uring's command API has a header of its own, which
 * defines IORING_URING_CMD_CANCELABLE on kernels that can cancel commands.
 */
#include <linux/io_uring/cmd.h>

void pto_probe(struct io_uring_cmd *c);
void pto_probe(struct io_uring_cmd *c)
{
}
