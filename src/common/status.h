/* SPDX-License-Identifier: BSD-3-Clause */
/* Status codes and error reporting shared by every module.
 *
 * Contract: every fallible function returns fd_status; FD_OK is 0.  The
 * first failure records a message with fd_fail() (source file and line for
 * internal errors, the user's FILE:LINE for bad input); callers propagate
 * the status unchanged, and main() prints the message once and maps the
 * status to an exit code with fd_exit_code(). */
#ifndef FD_STATUS_H
#define FD_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {

#endif

typedef enum {
    FD_OK = 0,
    FD_ERR_USAGE,       /* bad command line                        -> exit 2 */
    FD_ERR_INPUT,       /* malformed or inconsistent input file    -> exit 2 */
    FD_ERR_NOMEM,       /* allocation failed or problem too large  -> exit 2 */
    FD_ERR_IO,          /* file system: open, write, rename        -> exit 1 */
    FD_ERR_HDF5,        /* an HDF5 call failed                     -> exit 1 */
    FD_ERR_MPI,         /* an MPI call failed                      -> exit 1 */
    FD_ERR_CUDA,        /* a CUDA or NCCL call failed              -> exit 1 */
    FD_ERR_UNAVAILABLE, /* feature not built or no device          -> exit 2 */
    FD_ERR_INTERNAL,    /* a bug: an invariant did not hold        -> exit 1 */
    FD_ERR_INTERRUPTED  /* SIGTERM or SIGINT asked us to stop      -> exit 128 + signal */
} fd_status;

/* Records "msg" (printf format) as the current error unless one is already
 * recorded, and returns st so that callers can write
 * `return fd_fail(FD_ERR_INPUT, "%s:%zu: ...", path, line);`.
 * Thread-safe: the first failure of any thread wins. */
fd_status fd_fail(fd_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Like fd_fail, prefixed with the source location of the failing call:
 * used by the check macros for failures that are not the user's fault. */
fd_status fd_fail_at(fd_status st, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The recorded message, or "" when none. */
const char *fd_errmsg(void);
/* Forgets the recorded message: tests that expect a failure, and a caller
 * that tried something optional and goes on without it. */
void fd_errclear(void);

const char *fd_status_name(fd_status st);
int fd_exit_code(fd_status st);

/* Propagate a failure to the caller. */
#define FD_TRY(call)                                                          \
    do {                                                                      \
        fd_status fd_try_st_ = (call);                                        \
        if (fd_try_st_ != FD_OK) return fd_try_st_;                           \
    } while (0)

/* Propagate a failure through the function's single cleanup label. */
#define FD_TRY_GOTO(call, st, label)                                          \
    do {                                                                      \
        (st) = (call);                                                        \
        if ((st) != FD_OK) goto label;                                        \
    } while (0)

/* Allocation that records where it failed. */
#define FD_ALLOC_GOTO(ptr, count, st, label)                                  \
    do {                                                                      \
        (ptr) = fd_calloc((count), sizeof *(ptr));                            \
        if (!(ptr)) {                                                         \
            (st) = fd_fail_at(FD_ERR_NOMEM, __FILE__, __LINE__,               \
                              "out of memory allocating %zu x %zu bytes",     \
                              (size_t)(count), sizeof *(ptr));                \
            goto label;                                                       \
        }                                                                     \
    } while (0)

/* calloc that treats count*size overflow as failure and never returns NULL
 * for a zero count. */
void *fd_calloc(size_t count, size_t size);
void *fd_malloc(size_t bytes);
/* realloc to count*size bytes; on failure the old block is left alone and
 * NULL is returned. */
void *fd_realloc(void *p, size_t count, size_t size);

/* Grow *p (holding *cap elements of elsize bytes) so that at least need
 * elements fit.  Doubles the capacity; returns FD_ERR_NOMEM on failure. */
fd_status fd_grow(void **p, size_t *cap, size_t need, size_t elsize);

#ifdef __cplusplus
}
#endif

#endif
