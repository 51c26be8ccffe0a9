/* SPDX-License-Identifier: BSD-3-Clause */
/* Bayesian CP of a tensor with missing entries: BCPF's completion variant
 * (Zhao, Zhang & Cichocki, TPAMI 37(9), 2015, the model of bcp.h with the
 * likelihood over the observed entries only).  Every row of every factor
 * then has a covariance of its own, from the entries observed in its
 * slice, so the dense fit's shared Sigma_n and dimension-tree MTTKRP do
 * not apply: each sweep passes over the observed entries once per mode
 * (O(|Omega| N^2 R^2)), on the CPU, the rows shared among the ranks
 * (docs/algorithms.md). */
#ifndef FD_BCP_MASKED_H
#define FD_BCP_MASKED_H

#include "bcp.h"

/* t->observed marks the observed entries (t->x is 0 elsewhere); the
 * model as bcp_fit's, with Sigma[n] the mean of mode n's rows'
 * covariances and the fit 1 - ||Y - X|| / ||Y|| over observed entries.
 * With several ranks (comm's share, gather_rows, bcast and agree), every
 * rank holds the whole tensor and updates its share of each mode's rows;
 * the rows are gathered and the rest is computed alike everywhere, so
 * the model has the bits of one rank's (rank 0's start, at its threads).
 * comm NULL: one rank. */
fd_status bcp_fit_masked(const bcp_tensor *t, const bcp_opts *o, const bcp_comm *comm, bcp_model *m,
                         fd_progress *prog);

/* The model's prediction at entry e (C order) of a tensor of m's dims:
 * sum_r prod_n A(n)[i_n, r]. */
double bcp_model_at(const bcp_model *m, uint64_t e);
/* The same at the entry of index idx[n] in each mode n. */
double bcp_model_entry(const bcp_model *m, const uint64_t *idx);

#endif
