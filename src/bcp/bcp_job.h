/* SPDX-License-Identifier: BSD-3-Clause */
/* One bcp run: read the tensor (each rank its block), fit, rank 0 writes
 * DIR/bcp.h5 (docs/formats.md). */
#ifndef FD_BCP_JOB_H
#define FD_BCP_JOB_H

#include "../mpi/fdmpi.h"
#include "bcp.h"

typedef struct bcp_job_opts {
    const char *input, *outdir, *command, *backend;
    bcp_opts fit;
    uint64_t fuse[BCP_MAX_ORDER]; /* --fuse: sub-tensors per mode */
    uint32_t fuse_n;              /* modes given; 0: no --fuse */
    uint32_t starts;              /* --starts (0: 1, or 4 for --fuse's sub-tensors) */
    int missing;                  /* --missing: NaN is a missing entry */
    const char *mask;             /* --mask SPEC: 0 there is a missing entry (implies missing) */
    int completed;                /* --completed: the model's tensor into the file (/completed) */
    const char *predict_at;       /* --predict-at FILE: the model at the entries listed (/predictions) */
    int force, stats, quiet;
} bcp_job_opts;

/* The run on every rank (collective under MPI): the stages of the job
 * skeleton (job/job.h) with bcp's own. */
fd_status bcp_job_run(const bcp_job_opts *o);

#endif
