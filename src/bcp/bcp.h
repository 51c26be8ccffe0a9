/* SPDX-License-Identifier: BSD-3-Clause */
/* Bayesian CP factorisation of a dense tensor (Zhao, Zhang & Cichocki,
 * "Bayesian CP factorization of incomplete tensors with automatic rank
 * determination", IEEE TPAMI 37(9), 2015; their BCPF for a fully observed
 * tensor): Y = [[A(1), ..., A(N)]] + noise of precision tau, the rows of
 * every A(n) ~ N(0, diag(lambda)^-1), Gamma(1e-6, 1e-6) priors on every
 * lambda_r and on tau, fitted by variational Bayes (mean field), with the
 * components whose power vanishes pruned (docs/algorithms.md). */
#ifndef FD_BCP_H
#define FD_BCP_H

#include "../common/clock.h" /* fd_rng */
#include "../common/progress.h"
#include "tensor.h"

enum { BCP_INIT_SVD = 0, BCP_INIT_RANDOM = 1 };

typedef struct bcp_opts {
    uint32_t rank;       /* initial rank R0, pruned down */
    uint32_t max_iter;
    double tol;          /* converged: relative change of the bound below tol */
    int init;            /* BCP_INIT_* */
    uint64_t seed;       /* random initial factors (and SVD padding) */
    int nonneg;          /* factors started and kept >= 0 (projected) */
    int threads;         /* for the MTTKRP; the result does not depend on it */
    /* The masked fit only (bcp_fit_masked): start from this model's means,
     * lambda and tau less its component `drop` (rank = from->R - 1), for
     * the check of the rank by the bound; NULL: as init says. */
    const struct bcp_model *from;
    uint32_t drop;
} bcp_opts;

typedef struct bcp_model {
    uint32_t order, R;
    uint64_t dims[BCP_MAX_ORDER];
    double *A[BCP_MAX_ORDER];     /* I_n x R, row-major: the factors' posterior means */
    double *Sigma[BCP_MAX_ORDER]; /* R x R: the posterior covariance of A(n)'s rows */
    double *lambda;               /* R: E[lambda_r] */
    double tau;                   /* E[tau] */
    /* Per iteration: the bound, the fit 1 - ||Y - [[A]]|| / ||Y||, the rank. */
    uint32_t iters, cap;
    double *lb, *fit;
    uint32_t *ranks;
    int converged;
    double *seconds;              /* per sweep: its wall time */
    /* The sweeps' wall time (the start left out), of it the backend's
     * products and the sums over ranks. */
    double sweep_seconds, product_seconds, sum_seconds;
} bcp_model;

/* Sums over the ranks that hold the tensor's blocks, with the same
 * result on every rank (the fit's decisions, as pruning, must agree).
 * sum NULL: one rank holds the whole tensor. */
typedef struct bcp_comm {
    fd_status (*sum)(void *ctx, double *v, uint64_t n);
    void *ctx;
    /* The rows of mode n's unfolding that other ranks hold: `mine` (this
     * block's t->dims[n] rows of `cols` doubles each) gathered from the
     * ranks that hold the same blocks of every other mode, into all (the
     * full t->full[n] rows, in order).  The SVD start needs whole columns
     * of the unfolding.  NULL: one rank, or no split of any mode. */
    fd_status (*gather)(void *ctx, uint32_t n, const double *mine, uint64_t cols, double *all);
    /* The MTTKRP's rows shared out (PLANC's and SPLATT's layout): M (rows
     * x R, each rank's part) summed over the ranks into this rank's share
     * of the rows [*o0, *o1) only (reduce-scatter); after the update of
     * those rows of the factor, gather_rows gives every rank all of them
     * (all-gather), so the I_n x R^2 work is split among the ranks.  NULL:
     * one rank, which owns every row. */
    fd_status (*sum_rows)(void *ctx, double *M, uint64_t rows, uint32_t R, uint64_t *o0, uint64_t *o1);
    fd_status (*gather_rows)(void *ctx, double *A, uint64_t rows, uint32_t R);
    /* The masked fit (bcp_masked.h), every rank holding the whole
     * tensor: this rank's share [*o0, *o1) of `rows` rows (the shares
     * gather_rows gathers); rank 0's n values to every rank; and every
     * rank's status agreed (fd_mpi_agree), before each collective step.
     * NULL: one rank. */
    void (*share)(void *ctx, uint64_t rows, uint64_t *o0, uint64_t *o1);
    fd_status (*bcast)(void *ctx, double *v, uint64_t n);
    fd_status (*agree)(void *ctx, fd_status local);
} bcp_comm;

struct bcp_ops;

/* t: the whole tensor or this rank's block of it (tensor.h); ops and
 * state: the backend that computes the block's MTTKRP (bcp_backend.h);
 * every rank ends with the same model. */
fd_status bcp_fit(const bcp_tensor *t, const bcp_opts *o, const bcp_comm *comm, const struct bcp_ops *ops, void *state,
                  bcp_model *m, fd_progress *prog);
void bcp_model_free(bcp_model *m);

/* What the dense fit and the fit with missing entries (bcp_masked.h)
 * share. */
/* Sweeps with the rank unchanged before the scales are balanced (bcp.c,
 * rebalance). */
#define BCP_BALANCE_AFTER 5
/* The components whose power (sum over the modes of ||a_r(n)||^2) is
 * above BCPF's tolerance for `rows` rows in all: their indices into keep,
 * increasing; returns how many. */
uint32_t bcp_components_kept(const double *power, uint32_t R, uint64_t rows, uint32_t *keep);
/* lambda and tau from E[A(n)^T A(n)] (EAA[n], R x R) and E||Y - X||^2 =
 * ee over M fitted entries; returns the lower bound, logdet[n] being the
 * mean over mode n's rows of ln det of their covariance. */
double bcp_update_precisions(bcp_model *m, double *const *EAA, const double *logdet, double M, double ee);
/* The scales s_nr (sc[n R + r]) that balance each component across the
 * modes with their product 1, maximising the bound (bcp.c, rebalance),
 * from E[A(n)^T A(n)] and lambda. */
void bcp_balance_scales(const bcp_model *m, double *const *EAA, double *sc);
/* One sweep's bound, fit, rank (m->R) and seconds onto the traces. */
fd_status bcp_trace_push(bcp_model *m, double lb, double fit, double seconds);
/* The SVD start of mode n (t on one rank): the leading R eigenvectors of
 * the unfolding's Gram matrix scaled to the data, Gaussian of scale sd
 * past its rows or for modes of over 2,048 rows (as bcp_fit starts). */
fd_status bcp_svd_factor(const bcp_tensor *t, uint32_t n, uint32_t R, double sd, int threads, fd_rng *rng, double *A);

/* The SVD start's Gram of mode n of a whole mode (t->dims[n] ==
 * t->full[n]): G (I x I, row-major) = the unfolding times its transpose,
 * its upper triangle (the lower is 0), by BLAS on `threads` threads in
 * column blocks of buf / I and waves of parts / I^2 of them (0: the
 * defaults), the bits fixed by those and the shape alone.  Exposed for
 * the tests, which shrink the blocks; FD_ERR_INTERNAL without BLAS. */
fd_status bcp_gram_by_columns(const bcp_tensor *t, uint32_t n, int threads, uint64_t buf, uint64_t parts, double *G);

#endif
