/* SPDX-License-Identifier: BSD-3-Clause */
/* The job skeleton: what every workload's run does on every rank, in one
 * place (docs/architecture.md, "The job skeleton").  A workload gives its
 * stages as a table of functions; the skeleton runs them in order between
 * the machinery they share, and ends every stage in an agreement of all
 * ranks (fd_mpi_agree), so that a failure anywhere, or a signal to stop,
 * stops every rank at the same point and leaves nothing behind:
 *
 *   output     the result directory (job/resultdir.h): made, locked, the
 *              run's id; an existing result refused without --force
 *   size       ops->backend_by_size: the backend the input's size calls
 *              for, with the rank's threads known (a GPU not worth its
 *              start-up is never started)
 *   read       ops->read, every rank, while the backend's device context
 *              is made on a thread of its own (mpi/device_warm.h)
 *   check      ops->check_input (collective): every rank read the same
 *   place      the backend for what was read (ops->backend_for: a
 *              fallback to the CPU); the rank's GPU (more ranks than GPUs
 *              on a node is refused) and its context
 * The rank's threads (--threads, else its share of the node's cores) are
 * known from the read on.
 *   setup      ops->setup: the run's state (writers, device state,
 *              checkpoint)
 *   run        ops->run (collective, agreements of its own inside)
 *   commit     ops->commit (collective): parts and master, or the file
 *   report     ops->report, rank 0, unless --quiet
 *   close      ops->close, every rank, always; then the directory's
 *              end (rd_close: the replaced result's parts removed after a
 *              success, this run's own after a failure)
 *
 * Each stage runs only if every earlier one succeeded on every rank. */
#ifndef FD_JOB_H
#define FD_JOB_H

#include "../common/backend.h"
#include "../mpi/device_warm.h"
#include "../mpi/fdmpi.h"
#include "resultdir.h"

#include <pthread.h>
#include <stdio.h>

typedef struct fd_job_opts {
    const char *workload;   /* "lattice": DIR/lattice.h5, DIR/lattice.checkpoint */
    const char *outdir;     /* NULL: no output */
    int force, resume, quiet, stats;
    int threads;            /* --threads; 0: the rank's share of its node's cores */
    int parts;              /* every rank writes a part and rank 0 a master; else rank 0 writes W.h5 */
    int place_first;        /* refuse more ranks than GPUs before reading (the input is large) */
} fd_job_opts;

typedef struct fd_job fd_job;

/* A workload's stages.  Each returns this rank's status; the skeleton
 * agrees on it (run's and commit's own agreements end on an agreed one).
 * NULL: no such stage. */
typedef struct fd_job_ops {
    /* Before anything, with the ranks known: options that depend on them. */
    fd_status (*validate)(fd_job *j);
    /* Before the read (and the device's start-up beside it), with the
     * rank's threads known: the backend for an input of this size, the
     * same on every rank (collective). */
    const fd_device_ops *(*backend_by_size)(fd_job *j);
    fd_status (*read)(fd_job *j);
    /* Collective: every rank read the same (fd_mpi_same_hash). */
    fd_status (*check_input)(fd_job *j);
    /* The backend that takes what was read, the same on every rank: the
     * chosen one, or the CPU's for input its device does not take. */
    const fd_device_ops *(*backend_for)(fd_job *j);
    fd_status (*setup)(fd_job *j);
    /* Asked before the read: whether this run can start without its GPU.
     * Then the device's start-up (the driver, the context) goes on beside
     * setup and into run, and the workload calls fd_job_device_open
     * before its first device call, asking fd_job_device_ready meanwhile
     * (lattice: the host's threads take the top of the tree).  NULL or 0:
     * the device is open before setup.  Asked only when the job has one
     * rank: the late open is not agreed across ranks. */
    int (*device_late)(fd_job *j);
    fd_status (*run)(fd_job *j);
    fd_status (*commit)(fd_job *j);
    void (*report)(fd_job *j);
    void (*close)(fd_job *j, fd_status st);
} fd_job_ops;

struct fd_job {
    const fd_job_opts *o;
    const fd_job_ops *ops;
    fd_mpi mpi;
    resultdir out;             /* out.result: DIR/W.h5; out.part: this rank's part */
    const fd_device_ops *dev;  /* the backend */
    int threads;               /* the rank's worker threads */
    int device;                /* the rank's GPU, -1 on the CPU */
    double t0;                 /* the start */
    double read_s, setup_s;    /* the read; everything before run (read included) */
    /* Of read_s: the workload's read of its input, and then the wait for
     * the GPU's start-up that ran beside it (fd_warm_start). */
    double input_s, warm_wait_s;
    double run_s, commit_s;    /* the stages' wall times, this rank's */
    void *w;                   /* the workload's own state */
    pthread_t release;         /* fd_job_device_done's thread */
    int releasing;
    fd_warm warm;              /* the device's start-up beside the read */
    int device_late;           /* ops->device_late said yes */
    int device_pending;        /* late, and fd_job_device_open not yet called */
    double late_wait_s;        /* fd_job_device_open's wait for the start-up */
};

/* Runs the stages of ops for one job on every rank (collective when MPI
 * is active).  dev: the backend chosen by name.  w: the workload's state,
 * as j->w to every stage. */
fd_status fd_job_run(const fd_job_ops *ops, const fd_job_opts *o, const fd_device_ops *dev, void *w);

/* The workload is done with its device and has freed every buffer on
 * it: the context is ended on a thread of its own (dev->release_device)
 * while the rank writes its output, and joined when the job ends.  A
 * CUDA call after this would make a new context.  FD_GPU_RELEASE=exit
 * leaves the context to the process's end instead. */
void fd_job_device_done(fd_job *j);

/* With ops->device_late: whether the device's start-up is done (never
 * waits; thread-safe), and the device opened, after waiting for it
 * (this rank's status: the caller agrees).  Without, 1 and FD_OK. */
int fd_job_device_ready(fd_job *j);
fd_status fd_job_device_open(fd_job *j);

/* 1 on the rank that prints (rank 0, without --quiet). */
int fd_job_speaks(const fd_job *j);
/* The --stats line of the phases every workload has: read, setup, run,
 * output (rank 0's). */
void fd_job_print_phases(const fd_job *j, FILE *f);

#endif
