/* SPDX-License-Identifier: MIT */
/*
 * Descriptors libpto keeps open stay off 0, 1 and 2.  A program started
 * with one of those closed would otherwise get a trace file or the device
 * there, and then its own output and libpto's messages went into it
 * (ptorun >&- -t FILE wrote the sample's output into the trace, and 2>&-
 * a deadlock report, and exited 0).
 */
#ifndef PTO_LIB_FD_H
#define PTO_LIB_FD_H

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* fd, moved to 3 or above (close-on-exec) if below; -1 if that fails. */
static inline int pto_fd_above_stdio(int fd)
{
	int moved, err;

	if (fd < 0 || fd > 2)
		return fd;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	err = errno;
	close(fd);
	errno = err;
	return moved;
}

#endif /* PTO_LIB_FD_H */
