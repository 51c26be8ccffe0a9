/* SPDX-License-Identifier: BSD-3-Clause */
#include "status.h"

#include "interrupt.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char errbuf[2048];
static int errset;
static pthread_mutex_t errlock = PTHREAD_MUTEX_INITIALIZER;

static void record(const char *prefix, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&errlock);
    if (!errset) {
        size_t n = 0;
        if (prefix) n = (size_t)snprintf(errbuf, sizeof errbuf, "%s", prefix);
        if (n < sizeof errbuf) vsnprintf(errbuf + n, sizeof errbuf - n, fmt, ap);
        errset = 1;
    }
    pthread_mutex_unlock(&errlock);
}

fd_status fd_fail(fd_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(NULL, fmt, ap);
    va_end(ap);
    return st;
}

fd_status fd_fail_at(fd_status st, const char *file, int line, const char *fmt, ...)
{
    char prefix[256];
    const char *src = strstr(file, "src/");
    snprintf(prefix, sizeof prefix, "%s:%d: ", src ? src : file, line);
    va_list ap;
    va_start(ap, fmt);
    record(prefix, fmt, ap);
    va_end(ap);
    return st;
}

const char *fd_errmsg(void) { return errset ? errbuf : ""; }

void fd_errclear(void)
{
    pthread_mutex_lock(&errlock);
    errset = 0;
    errbuf[0] = 0;
    pthread_mutex_unlock(&errlock);
}

const char *fd_status_name(fd_status st)
{
    switch (st) {
    case FD_OK: return "ok";
    case FD_ERR_USAGE: return "usage";
    case FD_ERR_INPUT: return "input";
    case FD_ERR_NOMEM: return "memory";
    case FD_ERR_IO: return "io";
    case FD_ERR_HDF5: return "hdf5";
    case FD_ERR_MPI: return "mpi";
    case FD_ERR_CUDA: return "cuda";
    case FD_ERR_UNAVAILABLE: return "unavailable";
    case FD_ERR_INTERNAL: return "internal";
    case FD_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown";
}

int fd_exit_code(fd_status st)
{
    switch (st) {
    case FD_OK: return 0;
    case FD_ERR_USAGE:
    case FD_ERR_INPUT:
    case FD_ERR_NOMEM:
    case FD_ERR_UNAVAILABLE: return 2;
    /* As a shell reports a process the signal ended: SLURM and scripts
     * read 143 as "stopped by SIGTERM".  A rank told by another is 143. */
    case FD_ERR_INTERRUPTED: return 128 + (fd_interrupted() ? fd_interrupted() : SIGTERM);
    default: return 1;
    }
}

void *fd_calloc(size_t count, size_t size)
{
    if (count == 0 || size == 0) return calloc(1, 1);
    if (count > SIZE_MAX / size) return NULL;
    return calloc(count, size);
}

void *fd_malloc(size_t bytes) { return malloc(bytes ? bytes : 1); }

void *fd_realloc(void *p, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) return NULL;
    size_t bytes = count * size;
    return realloc(p, bytes ? bytes : 1);
}

fd_status fd_grow(void **p, size_t *cap, size_t need, size_t elsize)
{
    if (need <= *cap) return FD_OK;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) return fd_fail(FD_ERR_NOMEM, "out of memory: %zu elements", need);
        ncap *= 2;
    }
    void *q = fd_realloc(*p, ncap, elsize);
    if (!q) return fd_fail(FD_ERR_NOMEM, "out of memory growing a buffer to %zu x %zu bytes", ncap, elsize);
    *p = q;
    *cap = ncap;
    return FD_OK;
}
