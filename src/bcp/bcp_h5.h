/* SPDX-License-Identifier: BSD-3-Clause */
/* The bcp result file DIR/bcp.h5 (docs/formats.md): attributes (what was
 * run, the rank found, fit, tau, bound, timings), /dims, /lambda,
 * /factors/A1..AN (I_n x R) and Sigma1..SigmaN (R x R), /trace/{lower_bound,
 * fit,rank} per sweep; and what `fcbo-dist info` prints of it. */
#ifndef FD_BCP_H5_H
#define FD_BCP_H5_H

#include "bcp_job.h"
#include "bcp_predict.h"

#include <hdf5.h>
#include <stdio.h>

/* --starts S: each start's end (its final lower bound, fit, rank and
 * sweeps) and the one kept, the best bound (0-based). */
typedef struct bcp_starts {
    uint32_t n, best;
    double *lb, *fit;
    uint32_t *rank, *iters;
    /* The masked fit's check of its rank by the bound (fit_best): the
     * rank and bound it began from and ended at, and, where a refit
     * with one component fewer lowered the bound, that bound (else NaN);
     * tried 0: no check. */
    uint32_t tried, rank0, rank1;
    double lb0, lb1, lb_lower;
} bcp_starts;

/* t: the tensor or rank 0's block of it (its full shape is written);
 * starts: NULL, or written as /starts when there were several; at:
 * --predict-at's entries, or NULL. */
fd_status bcp_h5_write(const char *path, const bcp_job_opts *o, const bcp_tensor *t, const bcp_model *m, int ranks,
                       double t_load, double t_fit, uint32_t fuse_iters, uint64_t fuse_observed,
                       const bcp_starts *starts, const bcp_entries *at);
fd_status bcp_h5_info(hid_t f, const char *path, FILE *out);
/* "mode row value..." per factor row. */
fd_status bcp_h5_text(hid_t f, const char *path, FILE *out);

#endif
