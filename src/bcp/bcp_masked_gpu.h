/* SPDX-License-Identifier: BSD-3-Clause */
/* The masked fit's (bcp_masked.h) sums on one GPU: the CUDA backend's
 * bcp_masked_dev.  The whole tensor goes to the device once, as two
 * arrays of doubles: W, 1 at an observed entry and 0 elsewhere, and Y,
 * the values with 0 where missing; so do the rows' means A(k) and packed
 * second moments E(k) of every mode, put again after each change.  For
 * mode n and its row i, over the row's observed entries e,
 *   B[i, p] = sum_e W_e prod_{k != n} E(k)[e_k, p]   (p < R(R+1)/2),
 *   v[i, r] = sum_e Y_e prod_{k != n} A(k)[e_k, r],
 * which is the unfolding of W (or Y) times the Khatri-Rao product of the
 * other modes' rows: one DGEMM with the product of the modes on one side
 * of n (the longer), then a kernel that multiplies in the other side's
 * and sums in a fixed order.  So a sweep reads the tensor twice per mode
 * in cuBLAS, where the CPU passes over its observed entries per row. */
#ifndef FD_BCP_MASKED_GPU_H
#define FD_BCP_MASKED_GPU_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bcp_mgpu bcp_mgpu;

/* x: dims[0] x ... x dims[order-1] (C order), 0 where observed[e] is 0;
 * Rmax: the largest rank the calls will use. */
fd_status bcp_mgpu_create(bcp_mgpu **out, int device, const double *x, const uint8_t *observed, uint32_t order,
                          const uint64_t *dims, uint32_t Rmax);
void bcp_mgpu_destroy(bcp_mgpu **g);
/* Mode n's means (dims[n] x R) and packed moments (dims[n] x R(R+1)/2),
 * row-major, host; every mode must be put at the rank of the next sums. */
fd_status bcp_mgpu_put(bcp_mgpu *g, uint32_t n, const double *A, const double *E, uint32_t R);
/* Rows [i0, i1) of mode n's B and v (above) into the same rows of B
 * (dims[n] x R(R+1)/2) and v (dims[n] x R); waits.  outer: B with each
 * row's a a^T (packed) in place of its moment E, and no v (NULL). */
fd_status bcp_mgpu_sums(bcp_mgpu *g, uint32_t n, int outer, uint64_t i0, uint64_t i1, double *B, double *v);

#ifdef __cplusplus
}
#endif

#endif
