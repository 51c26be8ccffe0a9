/* SPDX-License-Identifier: BSD-3-Clause */
/* One `dpc` run on every rank: read (every rank holds every point), d_c,
 * rho over this rank's rows, all-gathered; delta and parent likewise;
 * centres, labels and the halo (the same on every rank); rank 0 writes
 * DIR/dpc.h5 (docs/formats.md). */
#ifndef FD_DPC_JOB_H
#define FD_DPC_JOB_H

#include "../mpi/fdmpi.h"
#include "dpc.h"

typedef struct dpc_opts {
    const char *input, *outdir, *backend, *command, *plot;
    const char *predict;  /* --predict FILE: new points to assign to the fit's clusters, or NULL */
    dpc_columns cols;
    int kernel;           /* DPC_CUTOFF or DPC_GAUSSIAN */
    int dc_rule;          /* 'x' --dc, 'p' --dc-percent, 'k' --neighbors */
    double dc, dc_percent, neighbors;
    uint64_t seed;
    dpc_centers_rule centers;
    int halo, force, stats, quiet, threads;
} dpc_opts;

/* The run on every rank (collective under MPI): the stages of the job
 * skeleton (job/job.h) with dpc's own. */
fd_status dpc_job_run(const dpc_opts *o);

#endif
