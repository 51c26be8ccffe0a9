/* SPDX-License-Identifier: BSD-3-Clause */
/* Choosing a backend by name at run time: each workload keeps a table of
 * the backends compiled in (cpu first, faster ones after) and asks here
 * for "cpu", "cuda" or "auto" (the last one that can run). */
#ifndef FD_BACKEND_H
#define FD_BACKEND_H

#include "status.h"

#include <stddef.h>

/* What every backend table starts with, whatever the workload: its name,
 * whether it can run here, and its devices.  A workload's table of
 * functions is `struct W_ops { fd_device_ops dev; ...its own... }`, so
 * that the registry, the placement of ranks on GPUs and the job skeleton
 * (job/job.h) treat every backend alike. */
typedef struct fd_device_ops {
    const char *name;
    int (*available)(void);                /* 1 when it can run here (built in, device present); NULL: always */
    int (*devices)(void);                  /* GPUs it can use on this node; NULL: it runs on the CPU */
    fd_status (*open_device)(int device);  /* the rank's device context; NULL: nothing to open */
    void (*warm_device)(int device);       /* the same early, reporting nothing (mpi/device_warm.h); NULL: none */
    void (*release_device)(int device);    /* ends the context, on a thread, once the workload is done with it
                                              (fd_job_device_done); NULL: it ends with the process */
    int (*present)(void);                  /* a guess that does not start the driver: 0 when no device can be
                                              here; NULL: may be (the job's late device, job.h) */
} fd_device_ops;

/* 1 when the backend can run here. */
int fd_backend_available(const fd_device_ops *b);
/* 0 when the backend's present() rules a device out (it does not start
 * the driver); 1 when a device may be here, or it runs on the CPU. */
int fd_backend_present(const fd_device_ops *b);
/* FD_ERR_UNAVAILABLE: "backend 'NAME' cannot run here (no usable device)". */
fd_status fd_backend_refuse(const fd_device_ops *b);

/* The table of a workload's backends is an array of pointers to the
 * dev member of each one's ops, CPU first, faster ones after.  *chosen:
 * the one named ("auto": the last that can run).  FD_ERR_UNAVAILABLE
 * naming the built backends when name is unknown, or when that backend
 * cannot run here. */
fd_status fd_backend_get(const fd_device_ops *const *table, size_t n, const char *workload, const char *name,
                         const fd_device_ops **chosen);
/* The same without asking whether a named backend can run here (asking
 * starts a GPU's driver, 0.1 s): the job asks later, beside the read
 * (job.c).  "auto" asks, as fd_backend_get does. */
fd_status fd_backend_find(const fd_device_ops *const *table, size_t n, const char *workload, const char *name,
                          const fd_device_ops **chosen);
/* The name a command uses when the user gives none: $FD_BACKEND when set,
 * else "auto". */
const char *fd_backend_default(void);
/* Defines W_backend_get(name, &ops) over the array `backends` (the dev
 * members of workload W's tables) in the file that uses it: the table of
 * the backend fd_backend_get chose. */
#define FD_BACKEND_REGISTRY(W, OPS)                                                                  \
    fd_status W##_backend_get(const char *name, const OPS **ops)                                     \
    {                                                                                                \
        const fd_device_ops *dev = NULL;                                                             \
        FD_TRY(fd_backend_get(backends, sizeof backends / sizeof *backends, #W, name, &dev));        \
        *ops = (const OPS *)dev; /* dev is the table's first member */                               \
        return FD_OK;                                                                                \
    }
/* "cpu, cuda": the names in the table, into buf. */
const char *fd_backend_names(const fd_device_ops *const *table, size_t n, char *buf, size_t cap);

#endif
