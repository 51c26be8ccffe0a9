/* SPDX-License-Identifier: BSD-3-Clause */
/* Every input path is checked here before it is opened: a directory, a
 * FIFO, a device (/dev/zero) or a socket is refused with a message that
 * says what it is, rather than blocking, reading without end or failing
 * with a confusing message later (docs/running.md, "Inputs"). */
#ifndef FD_INPUTFILE_H
#define FD_INPUTFILE_H

#include "status.h"

/* FD_OK when path names a readable regular file (through symbolic links);
 * else FD_ERR_INPUT: "PATH: cannot open: REASON" or "PATH: is a
 * directory / FIFO / device, not a file". */
fd_status fd_input_check(const char *path);

#endif
