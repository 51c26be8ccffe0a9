/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading an array's raw values straight into their place: pread until a
 * range is in, and the first value of a range a reader refuses.  Shared
 * by the .npy matrix reader (matrix_bin.c) and bcp's tensor reader
 * (bcp/tensor.c), which read their chunks on threads and check each as
 * soon as it is in (in cache). */
#ifndef FD_RAWREAD_H
#define FD_RAWREAD_H

#include <stdint.h>
#include <sys/types.h>

/* What a reader refuses: a value that is not finite, an infinity (NaN is
 * a missing value), or a NaN (a mask's). */
enum { FD_REFUSE_NONFINITE = 0, FD_REFUSE_INF = 1, FD_REFUSE_NAN = 2 };

/* The first index of x[a, b) that `how` refuses, or UINT64_MAX. */
uint64_t fd_first_refused(const double *x, uint64_t a, uint64_t b, int how);

/* Reads `bytes` at `off` into buf, as many preads as it takes (EINTR
 * retried): the bytes read, fewer at the file's end, or -1 with errno. */
ssize_t fd_pread_full(int fd, void *buf, size_t bytes, off_t off);

#endif
