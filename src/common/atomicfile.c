/* SPDX-License-Identifier: BSD-3-Clause */
#include "atomicfile.h"

#include "writeback.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *fd_tmp_name(const char *path)
{
    size_t n = strlen(path) + 32;
    char *t = malloc(n);
    if (t) snprintf(t, n, "%s.tmp.%ld", path, (long)getpid());
    return t;
}

fd_status fd_afile_open(fd_afile *a, const char *path)
{
    memset(a, 0, sizeof *a);
    a->path = strdup(path);
    a->tmp = fd_tmp_name(path);
    if (!a->path || !a->tmp) {
        fd_afile_abort(a);
        return fd_fail(FD_ERR_NOMEM, "out of memory");
    }
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        fd_status st = fd_fail(FD_ERR_IO, "%s: cannot create: %s", a->tmp, strerror(errno));
        fd_afile_abort(a);
        return st;
    }
    a->writeback = fd_writeback_start(a->tmp, a->path);
    return FD_OK;
}

fd_status fd_afile_commit(fd_afile *a)
{
    fd_status st = FD_OK;
    fd_writeback_stop(a->writeback);
    a->writeback = NULL;
    int bad = ferror(a->f) | fflush(a->f);
    int err = errno;
    if (fclose(a->f) != 0 && !bad) { bad = 1; err = errno; }
    a->f = NULL;
    if (bad) st = fd_fail(FD_ERR_IO, "%s: write failed: %s", a->tmp, strerror(err));
    else if (rename(a->tmp, a->path) != 0)
        st = fd_fail(FD_ERR_IO, "%s: cannot rename to %s: %s", a->tmp, a->path, strerror(errno));
    else {
        free(a->tmp);
        a->tmp = NULL;
    }
    fd_afile_abort(a);
    return st;
}

void fd_afile_abort(fd_afile *a)
{
    fd_writeback_stop(a->writeback);
    if (a->f) fclose(a->f);
    if (a->tmp) unlink(a->tmp);
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof *a);
}
