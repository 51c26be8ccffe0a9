/* SPDX-License-Identifier: BSD-3-Clause */
#include "inputfile.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

fd_status fd_input_check(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(sb.st_mode)) {
        const char *what = S_ISDIR(sb.st_mode)    ? "a directory"
                           : S_ISFIFO(sb.st_mode) ? "a FIFO (pipe)"
                           : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device"
                           : S_ISSOCK(sb.st_mode) ? "a socket"
                                                  : "not a regular file";
        return fd_fail(FD_ERR_INPUT, "%s: is %s, not a regular file (inputs are read in blocks and hashed: save it to a file first)",
                       path, what);
    }
    if (access(path, R_OK) != 0) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    return FD_OK;
}
