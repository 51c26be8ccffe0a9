/* SPDX-License-Identifier: BSD-3-Clause */
/* The VB covariance of one mode on the device (bcp_gpu.cu's sweep; and
 * bench/bcp_sigma.cu, its A/B against cuSOLVER). */
#ifndef FD_BCP_SIGMA_CUH
#define FD_BCP_SIGMA_CUH

#include <stdint.h>

/* The block's threads hold the matrix's entries in registers, EPT
 * each (a template argument, so that the loops over them unroll and
 * nothing spills), at most K_SIGMA_THREADS threads: so R <= 64. */
#define K_SIGMA_THREADS 512
#define K_SIGMA_RMAX 64

/* Sigma_n = (tau Psi_n + diag(lambda))^-1 and *logdet = ln det Sigma_n,
 * Psi_n the Hadamard product of EAA[k] (R x R at k R^2) over the modes k
 * != n: the host's bcp_spd_inverse on the device, so that a sweep's modes
 * need no wait for the host between them.  Launched by k_sigma_launch.
 *
 * Psi_n is formed as the host forms it (the product in mode order, times
 * tau, then lambda), with no fused multiply-add.  The inverse is the
 * sweep operator (Goodnight 1979, "A tutorial on the SWEEP operator",
 * The American Statistician 33(3)), Gauss-Jordan elimination without
 * pivoting, stable on a symmetric positive definite matrix, whose pivots
 * are those of Cholesky's factorisation squared (so ln det = -sum of
 * their logarithms, and a pivot not > 0 means not positive definite).
 * It replaced Cholesky's factor, its inverse and their product (LAPACK's
 * dpotrf and dpotri, and this kernel before) as each of its R steps
 * updates the whole matrix at once: one barrier a step, and no chain of
 * dependent steps on one thread.  One block of few warps has nothing to
 * hide latency behind, so a step's path is kept short: each entry's row
 * and column computed once, the pivot's reciprocal by __drcp_rn (the
 * rounded 1/d, without division's slow path).  A step needs only the
 * pivot's row (its column is the same, by symmetry), which its owners
 * publish in shared memory, two copies in turn so that the next step's
 * row never overwrites one still read.  A[i][j] - (A[i][k] A[k][j]) / d
 * and its mirror multiply the same two numbers, so the matrix stays
 * exactly symmetric.  Not positive definite (a pivot not > 0, or NaN;
 * every thread reads the same one): *bad = n + 1 unless an earlier mode
 * set it, and Sigma_n is left as it was. */
template <int EPT>
__global__ void __launch_bounds__(K_SIGMA_THREADS)
    k_sigma(const double *EAA, uint32_t N, uint32_t n, uint32_t R, double tau, const double *lambda, double *Sigma,
            double *logdet, double *bad)
{
    extern __shared__ double sh[];
    double *const row = sh, *const lg = sh + 2 * R;
    const uint32_t t = threadIdx.x, T = blockDim.x, RR = R * R;
    double a[EPT];
    uint32_t ri[EPT], ci[EPT]; /* the entry's row and column; R when none */
#pragma unroll
    for (int u = 0; u < EPT; u++) {
        const uint32_t e = t + u * T;
        ri[u] = ci[u] = R;
        a[u] = 0;
        if (e < RR) {
            ri[u] = e / R;
            ci[u] = e % R;
            double p = 1;
            for (uint32_t k = 0; k < N; k++)
                if (k != n) p = __dmul_rn(p, EAA[(uint64_t)k * RR + e]);
            p = __dmul_rn(p, tau);
            if (ri[u] == ci[u]) p = __dadd_rn(p, lambda[ri[u]]);
            a[u] = p;
        }
    }
    double pivot = 1; /* thread k's: step k's */
    for (uint32_t k = 0; k < R; k++) {
        double *const rk = row + (k & 1) * R;
#pragma unroll
        for (int u = 0; u < EPT; u++)
            if (ri[u] == k) rk[ci[u]] = a[u];
        __syncthreads();
        const double d = rk[k];
        if (!(d > 0)) {
            if (t == 0 && *bad == 0) *bad = n + 1;
            return;
        }
        if (t == k) pivot = d;
        const double r = __drcp_rn(d);
#pragma unroll
        for (int u = 0; u < EPT; u++) {
            if (ri[u] == R) continue;
            const double x = ri[u] == k ? 1 : rk[ri[u]], y = ci[u] == k ? 1 : rk[ci[u]];
            /* row and column k: A[k][j] / d; the pivot: -1 / d */
            if (ri[u] == k || ci[u] == k) a[u] = ri[u] == ci[u] ? -r : x * y * r;
            else a[u] -= x * y * r;
        }
    }
    if (t < R) lg[t] = log(pivot);
    __syncthreads();
    if (t == 0) {
        double ld = 0;
        for (uint32_t i = 0; i < R; i++) ld += lg[i];
        *logdet = -ld;
    }
    /* After every step the matrix is -A^-1. */
#pragma unroll
    for (int u = 0; u < EPT; u++)
        if (ri[u] < R) Sigma[(uint64_t)ri[u] * R + ci[u]] = -a[u];
}

/* k_sigma for rank R (1 to K_SIGMA_RMAX) on stream s: about four entries
 * a thread (whole warps, at least R threads: each pivot's logarithm has
 * one), eight past K_SIGMA_THREADS x 4 entries.  The launch's status is
 * the caller's to check (cudaGetLastError). */
static inline void k_sigma_launch(cudaStream_t s, const double *EAA, uint32_t N, uint32_t n, uint32_t R, double tau,
                                  const double *lambda, double *Sigma, double *logdet, double *bad)
{
    const uint32_t RR = R * R;
    uint32_t T = (RR + 3) / 4;
    T = T < 32 ? 32 : (T + 31) / 32 * 32;
    const size_t shared = (size_t)3 * R * sizeof(double);
    if (T <= K_SIGMA_THREADS) {
        k_sigma<4><<<1, T, shared, s>>>(EAA, N, n, R, tau, lambda, Sigma, logdet, bad);
    } else {
        T = ((RR + 7) / 8 + 31) / 32 * 32;
        k_sigma<8><<<1, T, shared, s>>>(EAA, N, n, R, tau, lambda, Sigma, logdet, bad);
    }
}

#endif
