/* SPDX-License-Identifier: BSD-3-Clause */
/* A GPU rank's device context, made on a thread of its own while the rank
 * reads its input.  Making it is a fixed cost of 0.1 to 0.3 s on an H200
 * (bench/results/spearman-gpu-history.txt) that otherwise runs before or
 * after the read, one after the other (dpc and bcp runs 0.07 to 0.09 s
 * shorter with it: bench/results/startup.csv); the workload's own
 * open_device then finds it made.
 *
 * fd_warm_start is collective (it places the rank): every rank calls it
 * under the same conditions.  With place_now it counts the GPUs first
 * and returns placement's status (fd_place_device: more ranks than GPUs
 * on a node), its message recorded, so that a job can stop before a
 * large read.  Without, the thread counts them too (the driver's start,
 * 0.1 s, then beside the read as well) and starts the GPU the rank would
 * be placed on if there is one; the job places the rank after the read
 * (fd_place_device, which then reports a shortage).  A device that does
 * not start is not reported here: open_device says so.  A backend
 * without devices (the CPU) places nothing and starts nothing: FD_OK,
 * device -1. */
#ifndef FD_DEVICE_WARM_H
#define FD_DEVICE_WARM_H


#include "../common/backend.h"
#include "fdmpi.h"

/* The thread's own (on the heap: an abandoned thread outlives the job). */
typedef struct fd_warm_state fd_warm_state;

typedef struct fd_warm {
    int device;        /* placement's (place_now), or -1 */
    int index;         /* the device the thread starts */
    fd_warm_state *s;  /* the thread, NULL when none runs */
} fd_warm;

/* dev: the backend's device part (common/backend.h). */
fd_status fd_warm_start(fd_warm *w, const fd_mpi *m, const fd_device_ops *dev, int place_now);

/* Waits for the context; a no-op when nothing was started, or again. */
void fd_warm_join(fd_warm *w);

/* Whether fd_warm_join would return at once (the thread is done, or
 * none was started); it does not wait.  Thread-safe. */
int fd_warm_ready(fd_warm *w);

/* The job needs no device after all (the lattice's host threads finished
 * the search first): a start-up still running is left to itself instead
 * of waited for (up to 0.3 s), and the job no longer refers to it.  The
 * process must then end with fd_warm_exit. */
void fd_warm_abandon(fd_warm *w);

/* The process's end, with code: exit's, unless a start-up left by
 * fd_warm_abandon is still running in the driver, where exit's handlers
 * (the CUDA runtime's among them) would run beside it: then _exit, once
 * standard output and error are flushed.  Everything the process wrote
 * must be closed before. */
int fd_warm_exit(int code);

#endif
