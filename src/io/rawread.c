/* SPDX-License-Identifier: BSD-3-Clause */
/* Raw reads and their checks (rawread.h). */
#include "rawread.h"

#include <errno.h>
#include <math.h>
#include <unistd.h>

static int refused(double x, int how)
{
    return how == FD_REFUSE_NONFINITE ? !isfinite(x) : how == FD_REFUSE_INF ? isinf(x) : isnan(x);
}

/* Blocks of 256 are tested without branches (x - x is 0 for a finite x,
 * NaN otherwise; x != x only for NaN), so the loop vectorises; a block
 * with a bad element is then searched. */
uint64_t fd_first_refused(const double *x, uint64_t a, uint64_t b, int how)
{
    for (uint64_t s = a; s < b; s += 256) {
        const uint64_t e = s + 256 < b ? s + 256 : b;
        int bad = 0;
        if (how == FD_REFUSE_NONFINITE)
            for (uint64_t i = s; i < e; i++) bad |= !(x[i] - x[i] == 0);
        else if (how == FD_REFUSE_INF)
            for (uint64_t i = s; i < e; i++) bad |= fabs(x[i]) == INFINITY;
        else
            for (uint64_t i = s; i < e; i++) bad |= x[i] != x[i];
        for (uint64_t i = s; bad && i < e; i++)
            if (refused(x[i], how)) return i;
    }
    return UINT64_MAX;
}

ssize_t fd_pread_full(int fd, void *buf, size_t bytes, off_t off)
{
    size_t got = 0;
    while (got < bytes) {
        const ssize_t k = pread(fd, (char *)buf + got, bytes - got, off + (off_t)got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}
