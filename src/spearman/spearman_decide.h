/* SPDX-License-Identifier: BSD-3-Clause */
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
 *    within 3e-7 of the exact value, with pre and post: the same margins.
 * And --fdr's bin of a kept pair's x, from double or from float, where
 * either settles it (spearman_decide_xbin, spearman_decide_xbin_f). */
#ifndef FD_SPEARMAN_DECIDE_H
#define FD_SPEARMAN_DECIDE_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define FD_DECIDE_FN __host__ __device__ __forceinline__
#else
#define FD_DECIDE_FN static inline
#endif
/* float products and sums rounded one by one (nvcc would fuse them) */
#ifdef __CUDA_ARCH__
#define FD_FMUL(a, b) __fmul_rn(a, b)
#define FD_FADD(a, b) __fadd_rn(a, b)
#define FD_FSUB(a, b) __fsub_rn(a, b)
#else
#define FD_FMUL(a, b) ((a) * (b))
#define FD_FADD(a, b) ((a) + (b))
#define FD_FSUB(a, b) ((a) - (b))
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

/* The --fdr bin of a kept pair's x, as spearman_xbin (tile.c) gives it for
 * pair_x: min(max(floor(x xscale), 0), xbins - 1), or -1 where the bin is
 * not certain.  pair_x divides in 80 bits and rounds to double (two
 * roundings, within 2^-53 + 2^-64 of x); here the exact integers divide
 * in double (one rounding, 2^-53), and each side rounds its product by
 * xscale once more (2^-53).  The two values of x xscale are thus within
 * 5 2^-53 of it, under 4e-11 below 2^16 bins: 1e-9 from an edge between
 * two bins, both floor to the same one.  About 2e-9 of the pairs fall
 * nearer; the host bins them. */
FD_DECIDE_FN int spearman_decide_xbin(int32_t s, int64_t sii, int64_t sjj, double xscale, int xbins)
{
    const int64_t pint = sii * sjj;
    const double b = (double)(pint - (int64_t)s * s) / (double)pint * xscale;
    if (b <= 1 - 1e-9) return 0;
    if (b >= xbins - 1 + 1e-9) return xbins - 1;
    const double f = floor(b);
    if (b - f < 1e-9 || f + 1 - b < 1e-9) return -1;
    return (int)f;
}

/* The same bin from a float a = c |rho| within rel of itself (c = 1: the
 * kernel's |rho|, |S| times the two 1/sqrt(S_jj) of rankmat.c, rel 3e-7;
 * c = 1000: the histogram's |u|, rel 5e-7, spearman_hist.h), with xs =
 * (float)xscale and xa = (float)(xscale / c^2), or -1 where float does not
 * settle it (then spearman_decide_xbin).  u = xa a^2 is within 2 rel +
 * 1.8e-7 of xscale rho^2 (three roundings), and b = xs - u within 1.2e-7
 * of xs (xs rounded, the subtraction) plus that: a margin of (4 rel +
 * 4e-7) u + 2e-7 xs (and 1e-6 for the host's double) leaves the bin
 * certain.  It is a few hundredths of a bin at the rho of most kept pairs,
 * so that some 1 in 10 needs the division in double.  Every product and
 * sum is rounded on its own (no fused multiply-add), so that the kernel's
 * screen and its closer look, which both ask, get the same answer. */
FD_DECIDE_FN int spearman_decide_xbin_f(float a, float xs, float xa, int xbins, float rel)
{
    const float u = FD_FMUL(xa, FD_FMUL(a, a)), b = FD_FSUB(xs, u);
    const float e = FD_FADD(FD_FADD(FD_FMUL(4 * rel + 4e-7f, u), FD_FMUL(2e-7f, xs)), 1e-6f);
    if (b <= 1 - e) return 0;
    if (b >= (float)(xbins - 1) + e) return xbins - 1;
    const float f = floorf(b);
    if (b - f < e || f + 1 - b < e) return -1;
    return (int)f;
}

/* Whether the float keep bound may be used: below q = 1e-6 its margin is
 * no longer far from the band where p-value mode compares p itself (1e-12
 * of S_ii S_jj); mode x bounds x from both sides, which it does not. */
FD_DECIDE_FN int spearman_post_usable(int mode, double q) { return (mode == 'p' || mode == 'r') && q > 1e-6; }

/* The GPU's band screens: the band around the keep's boundary sqrt(q), of
 * SPEARMAN_BAND of it each way (seven times the float rho's error, four
 * times u's), and its top, past which a pair is a keep for certain
 * (src/cuda/spearman_gpu.cu, screen_bounds; a unit test checks it). */
#define SPEARMAN_BAND 2e-6
FD_DECIDE_FN float spearman_post(double q) { return (float)(sqrt(q) * (1 + SPEARMAN_BAND)); }

#endif
