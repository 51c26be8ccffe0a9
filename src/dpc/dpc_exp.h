/* SPDX-License-Identifier: BSD-3-Clause */
/* exp(x) for x <= 0, the same bits on the CPU and the GPU.  The Gaussian
 * kernel's rho is a sum of exp(-d^2 / d_c^2); glibc's exp and CUDA's differ
 * in the last bit now and then, which is enough to break the ties in rho
 * that symmetric points have (equal sums on one backend, unequal on the
 * other) and so to change delta, parents and labels between backends.
 * Built from correctly rounded +, -, *, in a fixed order and without fused
 * multiply-add (on the GPU the _rn intrinsics, on the CPU -ffp-contract=off
 * for the files that include this), every step rounds the same on both.
 * Accuracy: within 2 ulp of exp (Cody-Waite reduction by ln 2, a degree-13
 * Taylor polynomial on |r| <= 0.35, whose truncation error is below
 * 1e-17, then an exact scaling by 2^k). */
#ifndef FD_DPC_EXP_H
#define FD_DPC_EXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define DPC_HD static __host__ __device__ __forceinline__
#else
#define DPC_HD static inline
#endif

#if defined(__CUDA_ARCH__)
#define DPC_ADD(a, b) __dadd_rn(a, b)
#define DPC_SUB(a, b) __dsub_rn(a, b)
#define DPC_MUL(a, b) __dmul_rn(a, b)
#else
#define DPC_ADD(a, b) ((a) + (b))
#define DPC_SUB(a, b) ((a) - (b))
#define DPC_MUL(a, b) ((a) * (b))
#endif

/* 2^k as a double, for -1022 <= k <= 1023 (exact). */
DPC_HD double dpc_pow2(int k)
{
    const uint64_t bits = (uint64_t)(k + 1023) << 52;
#if defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)bits);
#else
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
#endif
}

DPC_HD double dpc_exp_neg(double x)
{
    /* Below this exp(x) rounds to 0 (the smallest subnormal is 2^-1074). */
    if (!(x > -745.2)) return 0;
    if (x >= 0) return 1; /* only x = 0 (or -0) comes here */
    /* k = nearest integer to x / ln 2: adding 1.5 * 2^52 rounds it. */
    const double magic = 0x1.8p52;
    const double kd = DPC_SUB(DPC_ADD(DPC_MUL(x, 0x1.71547652b82fep+0), magic), magic);
    /* r = x - k ln 2 with ln 2 in two parts; k * hi is exact (hi has 32
     * trailing zero bits and |k| < 2^11). */
    const double r = DPC_SUB(DPC_SUB(x, DPC_MUL(kd, 0x1.62e42fee00000p-1)), DPC_MUL(kd, 0x1.a39ef35793c76p-33));
    /* Taylor to degree 13, Horner. */
    double p = 0x1.6124613a86d09p-33;
    p = DPC_ADD(DPC_MUL(p, r), 0x1.1eed8eff8d898p-29);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.ae64567f544e4p-26);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.27e4fb7789f5cp-22);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.71de3a556c734p-19);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.a01a01a01a01ap-16);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.a01a01a01a01ap-13);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.6c16c16c16c17p-10);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.1111111111111p-7);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.5555555555555p-5);
    p = DPC_ADD(DPC_MUL(p, r), 0x1.5555555555555p-3);
    p = DPC_ADD(DPC_MUL(p, r), 0.5);
    p = DPC_ADD(DPC_MUL(p, r), 1.0);
    p = DPC_ADD(DPC_MUL(p, r), 1.0);
    int k = (int)kd;
    /* Results below 2^-1022 are subnormal: scale in two steps, the first
     * exact, so that the only rounding is the last multiplication's. */
    if (k < -1000) {
        p = DPC_MUL(p, dpc_pow2(-600));
        k += 600;
    }
    return DPC_MUL(p, dpc_pow2(k));
}

#endif
