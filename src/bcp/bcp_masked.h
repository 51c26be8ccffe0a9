/* SPDX-License-Identifier: BSD-3-Clause */
/* Bayesian CP of a tensor with missing entries: BCPF's completion variant
 * (Zhao, Zhang & Cichocki, TPAMI 37(9), 2015, the model of bcp.h with the
 * likelihood over the observed entries only).  Every row of every factor
 * then has a covariance of its own, from the entries observed in its
 * slice, so the dense fit's shared Sigma_n and dimension-tree MTTKRP do
 * not apply: each sweep passes over the observed entries once per mode
 * (O(|Omega| N^2 R^2)) on the CPU, or sums over the whole tensor with
 * the indicator as a weight on a device (bcp_masked_dev), the rows
 * shared among the ranks (docs/algorithms.md). */
#ifndef FD_BCP_MASKED_H
#define FD_BCP_MASKED_H

#include "bcp.h"

/* The sums of a sweep on a device (the CUDA backend's: bcp_masked_gpu.h),
 * where the host keeps the rest: the rows' solves, lambda, tau, the bound.
 * NULL: every sum on the host's threads (bcp_masked.c). */
typedef struct bcp_masked_dev {
    /* The whole tensor t (t->observed set) onto the device, room for ranks
     * up to R. */
    fd_status (*open)(void **state, const bcp_tensor *t, uint32_t R, int device);
    void (*close)(void *state);
    /* Mode n's means (I_n x R) and packed moments (I_n x R(R+1)/2) at rank
     * R; every mode is put at the rank of the next sums. */
    fd_status (*put)(void *state, uint32_t n, const double *A, const double *E, uint32_t R);
    /* Rows [i0, i1) of mode n, over each row's observed entries: B (I_n x
     * R(R+1)/2) the sums of the product of the other modes' moments, v
     * (I_n x R) of y times that of their means; outer: B from the means'
     * outer products a a^T instead, and no v.  Into rows [i0, i1). */
    fd_status (*sums)(void *state, uint32_t n, int outer, uint64_t i0, uint64_t i1, double *B, double *v);
} bcp_masked_dev;

/* t->observed marks the observed entries (t->x is 0 elsewhere); the
 * model as bcp_fit's, with Sigma[n] the mean of mode n's rows'
 * covariances and the fit 1 - ||Y - X|| / ||Y|| over observed entries.
 * With several ranks (comm's share, gather_rows, bcast and agree), every
 * rank holds the whole tensor and updates its share of each mode's rows;
 * the rows are gathered and the rest is computed alike everywhere, so
 * the model has the bits of one rank's (rank 0's start, at its threads).
 * comm NULL: one rank.  dev (and its open dev_state over t): the sums on
 * that device, within rounding of the host's; NULL: on the host. */
fd_status bcp_fit_masked(const bcp_tensor *t, const bcp_opts *o, const bcp_comm *comm, const bcp_masked_dev *dev,
                         void *dev_state, bcp_model *m, fd_progress *prog);

/* The model's prediction at entry e (C order) of a tensor of m's dims:
 * sum_r prod_n A(n)[i_n, r]. */
double bcp_model_at(const bcp_model *m, uint64_t e);
/* The same at the entry of index idx[n] in each mode n. */
double bcp_model_entry(const bcp_model *m, const uint64_t *idx);

#endif
