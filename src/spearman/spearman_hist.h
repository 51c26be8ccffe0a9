/* SPDX-License-Identifier: BSD-3-Clause */
/* The rho histogram's bin, the one definition that tile.c (scalar and
 * AVX2) and the GPU kernel (src/cuda/spearman_gpu.cu) share, so that every
 * backend fills the same bins.
 *
 * The bin of a pair is floor(u) + 1000, clamped to [0, 2000), for
 * u = 1000 rho computed in single precision as
 *     u = ((float)S_ij * k_i) * (1/sqrt(S_jj)),
 *     k_i = 1000 (1/sqrt(S_ii)) rounded to 22 significant bits,
 * two products, each rounded to float.  u is within 5e-7 of itself of
 * 1000 rho.
 *
 * Why k_i has 22 bits: the GPU holds S_ij + 1.5 2^23 as a float (the
 * tensor cores add S_ij to those bits for free) and forms S_ij k_i with
 * one fused multiply-add, (S_ij + 1.5 2^23) k_i - 1.5 2^23 k_i.  That is
 * S_ij k_i rounded once, the same product as the CPU's, only if
 * 1.5 2^23 k_i = 3 2^22 k_i is itself a float: 3 m fits in 24 bits when
 * k_i's significand m has at most 22. */
#ifndef FD_SPEARMAN_HIST_H
#define FD_SPEARMAN_HIST_H

#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define FD_HIST_FN __host__ __device__ __forceinline__
#else
#define FD_HIST_FN static inline
#endif

#define SPEARMAN_HIST_BINS 2000

/* Which definition of the bins this is, for the checkpoints
 * (spearman_ckpt.c): a resumed run must not add counts binned another way
 * to its own.  Raise it whenever some pair's bin may change.  1: k_i not
 * rounded; 2: k_i rounded to 22 bits (2026-11-30). */
#define SPEARMAN_HIST_DEFINITION 2

/* k_i from 1/sqrt(S_ii): 1000 times it, rounded to nearest (ties away
 * from zero) at 22 significant bits.  A carry into the exponent gives the
 * next power of two, which is exact too. */
FD_HIST_FN float spearman_hist_factor(float inv_root)
{
    float k = inv_root * (float)(SPEARMAN_HIST_BINS / 2);
    uint32_t b;
    memcpy(&b, &k, sizeof b);
    b = (b + 2u) & ~3u;
    memcpy(&k, &b, sizeof k);
    return k;
}

/* u of a pair, the scalar reference the AVX2 and GPU kernels match. */
FD_HIST_FN float spearman_hist_u(int32_t s, float k_i, float inv_root_j) { return ((float)s * k_i) * inv_root_j; }

FD_HIST_FN int spearman_hist_bin(int32_t s, float k_i, float inv_root_j)
{
    const float u = spearman_hist_u(s, k_i, inv_root_j);
    /* floor without libm; |u| <= 1000 (1 + 5e-7) fits an int */
    int b = (int)u;
    b -= (float)b > u;
    b += SPEARMAN_HIST_BINS / 2;
    return b < 0 ? 0 : b >= SPEARMAN_HIST_BINS ? SPEARMAN_HIST_BINS - 1 : b;
}

#endif
