/* SPDX-License-Identifier: BSD-3-Clause */
/* Runs `fcbo-dist lattice` on this rank, as one of all ranks (see
 * lattice_job.c).  The command-line layer fills the options. */
#ifndef FD_LATTICE_JOB_H
#define FD_LATTICE_JOB_H

#include "../mpi/fdmpi.h"
#include "context.h"

#include <stdint.h>

typedef struct lattice_job_opts {
    int edges;               /* --edges: the covering relation into the result */
    const char *input, *outdir, *backend;
    const char *command;     /* the command line, recorded in the result */
    ctx_format fmt;
    uint64_t min_support;
    double min_support_pct;  /* < 0 when given as a count */
    int threads;             /* 0: from the placement */
    int extents, text, force, quiet, stats;
    double checkpoint_seconds;  /* with outdir; 0: no checkpoints */
    int resume;              /* --resume: outdir holds a checkpoint to finish */
} lattice_job_opts;

/* The run on every rank (collective under MPI; every rank returns the
 * same status): the stages of the job skeleton (job/job.h) with the
 * lattice's own. */
fd_status lattice_job_run(const lattice_job_opts *o);

#endif
