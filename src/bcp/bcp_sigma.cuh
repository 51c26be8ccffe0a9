/* SPDX-License-Identifier: BSD-3-Clause */
/* The VB covariance of one mode on the device (bcp_gpu.cu's sweep; and
 * bench/bcp_sigma.cu, its A/B against cuSOLVER). */
#ifndef FD_BCP_SIGMA_CUH
#define FD_BCP_SIGMA_CUH

#include <stdint.h>

/* Sigma_n = (tau Psi_n + diag(lambda))^-1 and *logdet = ln det Sigma_n,
 * Psi_n the Hadamard product of EAA[k] (R x R at k R^2) over the modes k
 * != n: the host's bcp_spd_inverse on the device, so that a sweep's modes
 * need no wait for the host between them.  One block; the R x R matrix
 * (and the inverse's diagonal) in shared memory.  Psi_n is formed as the
 * host forms it (the product in mode order, times tau, then lambda), with
 * no fused multiply-add; the factorisation is Cholesky's by columns
 * (right-looking), X = L^-1 a column per thread, Sigma = X^T X summed in
 * one order and mirrored, so exactly symmetric.  Not positive definite (a
 * pivot not > 0, or NaN): *bad = n + 1 unless an earlier mode set it, and
 * Sigma_n is left as it was.  LAPACK's dpotrf/dpotri are the same
 * method; cuSOLVER's are five launches with the kernels around them
 * (bench/gpu-bcp-sigma.sh times both). */
__global__ void k_sigma(const double *EAA, uint32_t N, uint32_t n, uint32_t R, double tau, const double *lambda,
                        double *Sigma, double *logdet, double *bad)
{
    extern __shared__ double sh[];
    double *const P = sh, *const dinv = sh + R * R;
    __shared__ int ok;
    const uint32_t t = threadIdx.x, T = blockDim.x, RR = R * R;
    if (t == 0) ok = 1;
    for (uint32_t e = t; e < RR; e += T) {
        double p = 1;
        for (uint32_t k = 0; k < N; k++)
            if (k != n) p = __dmul_rn(p, EAA[(uint64_t)k * RR + e]);
        p = __dmul_rn(p, tau);
        if (e / R == e % R) p = __dadd_rn(p, lambda[e / R]);
        P[e] = p;
    }
    __syncthreads();
    /* P = L L^T, L in the lower triangle. */
    for (uint32_t j = 0; j < R; j++) {
        if (t == 0) {
            const double d = P[j * R + j];
            if (d > 0) P[j * R + j] = sqrt(d);
            else ok = 0;
        }
        __syncthreads();
        if (!ok) break; /* the same for every thread: read after the barrier */
        const double d = P[j * R + j];
        for (uint32_t i = j + 1 + t; i < R; i += T) P[i * R + j] /= d;
        __syncthreads();
        const uint32_t m = R - j - 1;
        for (uint32_t e = t; e < m * m; e += T) {
            const uint32_t i = j + 1 + e / m, k = j + 1 + e % m;
            if (k <= i) P[i * R + k] -= P[i * R + j] * P[k * R + j];
        }
        __syncthreads();
    }
    if (!ok) {
        if (t == 0 && *bad == 0) *bad = n + 1;
        return;
    }
    if (t == 0) {
        double ld = 0;
        for (uint32_t i = 0; i < R; i++) ld += 2 * log(P[i * R + i]);
        *logdet = -ld;
    }
    /* X = L^-1 (lower): its diagonal in dinv, X[i][c] (i > c) at P[c R +
     * i], the upper triangle, which the factorisation left unused; thread
     * c writes only row c of it. */
    for (uint32_t c = t; c < R; c += T) {
        dinv[c] = 1 / P[c * R + c];
        for (uint32_t i = c + 1; i < R; i++) {
            double s = P[i * R + c] * dinv[c];
            for (uint32_t k = c + 1; k < i; k++) s += P[i * R + k] * P[c * R + k];
            P[c * R + i] = -s / P[i * R + i];
        }
    }
    __syncthreads();
    /* Sigma[p][q] = sum over i >= p of X[i][p] X[i][q], q <= p. */
    for (uint32_t e = t; e < RR; e += T) {
        const uint32_t p = e / R, q = e % R;
        if (q > p) continue;
        double s = dinv[p] * (p == q ? dinv[q] : P[q * R + p]);
        for (uint32_t i = p + 1; i < R; i++) s += P[p * R + i] * P[q * R + i];
        Sigma[p * R + q] = s;
        Sigma[q * R + p] = s;
    }
}

#endif
