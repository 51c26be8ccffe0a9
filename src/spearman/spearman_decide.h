/* The selection where floating point settles it beyond doubt, for the GPU
 * kernel's epilogue (src/cuda/spearman_gpu.cu), which has no 80-bit
 * arithmetic.  C and CUDA both compile it; the unit tests check it on the
 * CPU against spearman_keep (tile.c), the exact test it must agree with.
 *
 * Three outcomes per pair (rows both varying, n <= 128 so that S^2 and
 * S_ii S_jj are exact integers below 2^53):
 *  - spearman_decide: d = S^2 - q S_ii S_jj in double is off by a few ulps
 *    of q S_ii S_jj, so |d| > 1e-9 S_ii S_jj decides; mode x (FDR passes)
 *    compares x = (S_ii S_jj - S^2) / (S_ii S_jj), from the exact integer
 *    difference, with 1e-12 margins to x_lo and x_hi.  Inside the margins:
 *    undecided, for spearman_keep on the host.
 *  - the float bounds of the common path, which never reach double:
 *    |S| < pre sqrt(S_ii) sqrt(S_jj) drops (tile.c's prefilter, pre =
 *    sqrt(q)(1 - 1e-5)), |S| >= post sqrt(S_ii) sqrt(S_jj) keeps (post =
 *    sqrt(q)(1 + 1e-5)); float rounding of the product is below 1e-6.
 *    The GPU compares |rho| = |S| (1/sqrt(S_ii)) (1/sqrt(S_jj)) in float,
 *    within 3e-7 of the exact value, with pre and post: the same margins. */
#ifndef FD_SPEARMAN_DECIDE_H
#define FD_SPEARMAN_DECIDE_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define FD_DECIDE_FN __host__ __device__ __forceinline__
#else
#define FD_DECIDE_FN static inline
#endif

enum { SPEARMAN_DROP = 0, SPEARMAN_UNDECIDED = 1, SPEARMAN_KEEP = 2 };

/* mode 'p', 'r', 'a' or 'x' with q, x_lo, x_hi as in spearman_sel. */
FD_DECIDE_FN int spearman_decide(int mode, double q, double x_lo, double x_hi, int32_t s, int64_t sii, int64_t sjj)
{
    if (mode == 'a') return SPEARMAN_KEEP;
    const int64_t pint = sii * sjj;
    if (mode == 'x') {
        const double x = (double)(pint - (int64_t)s * s) / (double)pint;
        if (x >= x_lo + 1e-12 && x <= x_hi - 1e-12) return SPEARMAN_KEEP;
        if (x < x_lo - 1e-12 || x > x_hi + 1e-12) return SPEARMAN_DROP;
        return SPEARMAN_UNDECIDED;
    }
    const double p = (double)pint, d = (double)s * (double)s - q * p;
    if (d > 1e-9 * p) return SPEARMAN_KEEP;
    if (d < -1e-9 * p) return SPEARMAN_DROP;
    return SPEARMAN_UNDECIDED;
}

/* Whether the float keep bound may be used: below q = 1e-6 its margin is
 * no longer far from the band where p-value mode compares p itself (1e-12
 * of S_ii S_jj); mode x bounds x from both sides, which it does not. */
FD_DECIDE_FN int spearman_post_usable(int mode, double q) { return (mode == 'p' || mode == 'r') && q > 1e-6; }

FD_DECIDE_FN float spearman_post(double q) { return (float)(sqrt(q) * (1 + 1e-5)); }

#endif
