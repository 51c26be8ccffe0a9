/* SPDX-License-Identifier: BSD-3-Clause */
/* Libraries that only some commands need, loaded by dlopen when one first
 * does rather than linked: every linked library is loaded, relocated and
 * initialised at every start, whatever the subcommand.  cairo (with its
 * X11, font and PNG libraries), OpenBLAS (which starts a thread per core
 * as it loads) and NCCL took 7.8 MB of resident memory and 11 ms of each
 * start of a 20 ms `fcbo-dist version` on the dev VM, cuBLAS 90 ms on
 * the GPU machine (bench/startup.sh, startup.csv).
 *
 * A library is a table: its soname, the folder the build found it in
 * (tried when the loader's search misses it), what needs it (for the
 * message), and the symbols to resolve into function pointers.  It is
 * loaded once, under a lock, and kept to the end (handles and threads
 * made from it may outlive any caller). */
#ifndef FD_DYNLIB_H
#define FD_DYNLIB_H

#include "status.h"

#include <pthread.h>
#include <stddef.h>

typedef struct {
    const char *name;
    void **slot;
    int optional;           /* 1: NULL in slot where the library lacks it */
} fd_dynsym;

typedef struct fd_dynlib {
    const char *soname;     /* e.g. "libcairo.so.2": the loader's search (LD_LIBRARY_PATH, its cache) */
    const char *dir;        /* the build's folder of it, tried next; NULL: none */
    const char *need;       /* what needs it, e.g. "dpc --plot" */
    fd_status err;          /* the status a failure is (FD_ERR_UNAVAILABLE, FD_ERR_CUDA) */
    const fd_dynsym *syms;  /* ends with a NULL name */
    void (*loaded)(void *handle); /* NULL, or run once right after the load, under the lock */
    /* state: zero-initialised with FD_DYNLIB_STATE */
    pthread_mutex_t lock;
    int state;              /* 0 not tried, 1 loaded, -1 failed (why says why) */
    void *handle;           /* dlopen's, once loaded */
    char why[512];
} fd_dynlib;

#define FD_DYNLIB_STATE PTHREAD_MUTEX_INITIALIZER, 0, NULL, ""

/* Loads lib and fills its symbols' slots on the first call (thread-safe);
 * a library that cannot be loaded or lacks a symbol is lib->err with a
 * message that names it and what needs it, each time it is asked for. */
fd_status fd_dynlib_load(fd_dynlib *lib);
/* The same load without a word: for a thread that loads a library early,
 * beside other work (the error buffer is the process's), leaving any
 * failure to the fd_dynlib_load that follows. */
void fd_dynlib_preload(fd_dynlib *lib);

#endif
