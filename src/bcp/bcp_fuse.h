/* SPDX-License-Identifier: BSD-3-Clause */
/* Partition and fuse (grid PARAFAC: Phan & Cichocki, "PARAFAC algorithms
 * for large-scale problems", Neurocomputing 74(11), 2011, section 4): a
 * tensor split into a grid of sub-tensors, each factorised on its own at
 * one common rank R, and the sub-factors fused into full factors.  The
 * fusion fits the full model to the sub-models, by ALS on
 *   sum over sub-tensors k of || [[U_k]] - [[A_k]] ||^2,
 * where U_k are sub-tensor k's factors and A_k the rows of the full
 * factors it covers; every term needs only R x R Gram products, never the
 * data, and the sub-factors' order and scaling of components do not
 * matter. */
#ifndef FD_BCP_FUSE_H
#define FD_BCP_FUSE_H

#include "tensor.h"

/* The sub-factors, sub-tensor by sub-tensor (C order over the grid), each
 * its modes' factors one after the other (cnt_n x R, row-major; cnt from
 * bcp_grid_block): sub_len(k) numbers at sub_off(k). */
uint64_t bcp_fuse_offset(uint32_t order, const uint64_t *dims, const uint64_t *grid, uint32_t R, uint64_t k);

/* The fusion's ALS sweeps at most. */
#define BCP_FUSE_ITERS 2000

/* A[n] (dims[n] x R, row-major, allocated by the caller) from the
 * sub-factors `sub`: ALS from the sub-factors aligned to sub-tensor 0's
 * until the relative change of the objective is below tol or after
 * max_iter sweeps (*iters: the sweeps done). */
fd_status bcp_fuse(uint32_t order, const uint64_t *dims, const uint64_t *grid, uint32_t R, const double *sub,
                   uint32_t max_iter, double tol, double **A, uint32_t *iters);

#endif
