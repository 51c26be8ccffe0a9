/* SPDX-License-Identifier: BSD-3-Clause */
/* Files that appear complete or not at all: written under "PATH.tmp.PID"
 * and renamed over PATH on commit; abandoned ones are unlinked. */
#ifndef FD_ATOMICFILE_H
#define FD_ATOMICFILE_H

#include "status.h"

#include <stdio.h>

typedef struct {
    FILE *f;
    char *path;
    char *tmp;
    struct fd_writeback *writeback; /* replacing a file: fd_writeback_start */
} fd_afile;

fd_status fd_afile_open(fd_afile *a, const char *path);
/* Flushes, checks for write errors (a full disk shows up here), renames. */
fd_status fd_afile_commit(fd_afile *a);
/* Closes and removes the temporary file; safe after commit or on NULL f. */
void fd_afile_abort(fd_afile *a);

/* "PATH.tmp.PID" in newly allocated memory, or NULL. */
char *fd_tmp_name(const char *path);

#endif
