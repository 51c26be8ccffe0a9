/* SPDX-License-Identifier: BSD-3-Clause */
/* bcp on one GPU: the CUDA backend's device engine.  Plain C interface.
 * A rank's block of the tensor goes to the device once (as doubles, C
 * order) and stays, and so do the factors (every row of every mode) from
 * the start to the end of a fit: a sweep sends only R x R matrices up
 * and down.  The dimension tree of bcp_backend.h runs there: a
 * contraction of the block with one half's Khatri-Rao product is one
 * cuBLAS DGEMM (the block read once), each mode's MTTKRP a kernel over
 * the small intermediate of its half; the means' update a DGEMM, the Gram
 * matrices a kernel with a fixed order of summation, so that every rank
 * gets the same bits from the same rows.  Calls queue on one stream and
 * return without waiting unless they hand data to the host. */
#ifndef FD_BCP_GPU_H
#define FD_BCP_GPU_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bcp_gpu bcp_gpu;

/* x: the block (dims[0] x ... x dims[order-1], C order) at lo of a tensor
 * of full dims; h: the tree's split (bcp_tree_split); Rmax: the largest
 * rank the calls will use. */
fd_status bcp_gpu_create(bcp_gpu **out, int device, const double *x, uint32_t order, const uint64_t *dims,
                         const uint64_t *lo, const uint64_t *full, uint32_t h, uint32_t Rmax);
void bcp_gpu_destroy(bcp_gpu **g);
/* The factors (A[n]: full[n] x R, row-major, host) up, and down at the
 * current rank. */
fd_status bcp_gpu_put(bcp_gpu *g, const double *const *A, uint32_t R);
fd_status bcp_gpu_get(bcp_gpu *g, double *const *A);
/* The intermediate of side 0 (modes [0, h)) or 1 (modes [h, N)): the
 * block times the other side's Khatri-Rao product. */
fd_status bcp_gpu_contract(bcp_gpu *g, int side);
/* The device's M (full[n] x R) from the intermediate of n's side, in the
 * block's rows, zero elsewhere. */
fd_status bcp_gpu_mttkrp(bcp_gpu *g, uint32_t n);
/* Rows [o0, o1) of A(n) = tau M Sigma (Sigma: R x R, host, symmetric),
 * projected on >= 0 with nonneg. */
fd_status bcp_gpu_update(bcp_gpu *g, uint32_t n, const double *Sigma, double tau, int nonneg, uint64_t o0,
                         uint64_t o1);
/* G (R x R, host) = A(n)^T A(n) over all rows and, with v, *v = <M,
 * A(n)> over rows [o0, o1); waits. */
fd_status bcp_gpu_gram(bcp_gpu *g, uint32_t n, uint64_t o0, uint64_t o1, double *G, double *v);
/* A sweep's modes with no wait for the host between them (the backend's
 * sweep_modes, bcp_backend.h), at ranks up to BCP_GPU_SWEEP_RMAX:
 * bcp_gpu_sweep_begin takes every mode's E[A^T A] (R x R, host) and
 * lambda up; then, for each mode in turn, after its contraction and
 * MTTKRP (and the MTTKRP's sum over the GPUs), bcp_gpu_sweep_mode queues
 * Sigma_n = (tau Psi_n + diag(lambda))^-1, A(n) = tau M Sigma_n (projected
 * on >= 0 with nonneg), A(n)^T A(n) and E[A(n)^T A(n)], and with the last
 * mode <M, A(n)>; bcp_gpu_sweep_end brings every mode's Sigma, A^T A,
 * E[A^T A] and ln det Sigma down, and *yx, and waits.  *bad = n + 1: mode
 * n's matrix was not positive definite (0: none).  Up to the covariance
 * kernel's limit (K_SIGMA_RMAX): on one H100 the sweep's A/B gained 10 %
 * at R = 16, 4 % at R = 32 and tied at R = 64 (bench/results/
 * bcp-gpu-history.txt, step 10); above it the host inverts. */
#define BCP_GPU_SWEEP_RMAX 64
fd_status bcp_gpu_sweep_begin(bcp_gpu *g, const double *const *EAA, const double *lambda);
fd_status bcp_gpu_sweep_mode(bcp_gpu *g, uint32_t n, double tau, int nonneg);
fd_status bcp_gpu_sweep_end(bcp_gpu *g, double *const *Sigma, double *const *AA, double *const *EAA, double *logdet,
                            double *yx, uint32_t *bad);
/* Column r of A(n) times s[n R + r]. */
fd_status bcp_gpu_scale(bcp_gpu *g, const double *s);
/* Only columns keep[0 .. K), packed at rank K. */
fd_status bcp_gpu_keep(bcp_gpu *g, const uint32_t *keep, uint32_t K);

/* The SVD start's Gram of mode n, which the block holds whole: G (I x I,
 * host, row-major) = the block's mode-n unfolding times its transpose,
 * by DGEMMs on the resident block (a mode in the middle in slabs of
 * slices, permuted into a scratch matrix of at most 256 MB); waits.
 * *done = 0 (and G untouched) where the sizes are past cuBLAS's ints. */
fd_status bcp_gpu_mode_gram(bcp_gpu *g, uint32_t n, double *G, int *done);

/* For the collectives between the ranks (bcp_cuda.c): the rank now, the
 * device arrays of M and of A(n) (full[n] x R each), the stream (a
 * cudaStream_t), and copies between them and the host that wait. */
uint32_t bcp_gpu_rank(const bcp_gpu *g);
double *bcp_gpu_M(bcp_gpu *g);
double *bcp_gpu_A(bcp_gpu *g, uint32_t n);
void *bcp_gpu_stream(bcp_gpu *g);
fd_status bcp_gpu_copy(bcp_gpu *g, double *dst, const double *src, uint64_t count, int to_host);

#ifdef __cplusplus
}
#endif

#endif
