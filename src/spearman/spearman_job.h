/* SPDX-License-Identifier: BSD-3-Clause */
/* Runs `fcbo-dist spearman` on this rank, as one of all ranks: every rank
 * reads and ranks the matrix, rank 0 hands out tiles of the pair matrix
 * (src/mpi/taskpool), pass 1 counts the selected pairs and the rho
 * histogram (reduced over ranks), pass 2 writes the pairs to each rank's
 * part, rank 0 writes the master (docs/architecture.md, docs/formats.md). */
#ifndef FD_SPEARMAN_JOB_H
#define FD_SPEARMAN_JOB_H

#include "../mpi/fdmpi.h"

#include <stdint.h>

typedef struct spearman_opts {
    const char *input, *y_input, *outdir, *backend, *command;
    int mode;                /* 'p' --pvalue, 'r' --rho, 'f' --fdr */
    double value;            /* alpha, R or Q */
    int count_only, drop_nan, force, quiet, stats;
    int header;              /* text inputs: FD_HEADER_AUTO, _YES or _NO (io/matrix_read.h) */
    int by_columns;          /* --by columns: the columns are the variables */
    int row_names;           /* --row-names: the first field of each text line names the row */
    int missing_drop;        /* --missing drop: observations with a NaN in any variable are dropped */
    int missing_pairwise;    /* --missing pairwise: each pair uses the observations both variables have */
    int kendall;             /* --method kendall: Kendall's tau-b instead of Spearman's rho */
    int no_hist;             /* --no-histogram: pass 1 bins nothing, the file has no /histogram */
    int check_input;         /* read and rank only, then report */
    int threads;             /* 0: from the placement */
    uint64_t max_output;     /* bytes */
    double checkpoint_seconds;  /* 0: no checkpoints */
    int resume;              /* --resume: outdir holds a checkpoint to finish */
} spearman_opts;

fd_status spearman_job_run(const spearman_opts *o);

#endif
