/* SPDX-License-Identifier: BSD-3-Clause */
/* Run-time CPU dispatch for the hot kernels: on x86-64, FD_HOT functions
 * are compiled twice (baseline x86-64, and x86-64-v3 with POPCNT, BMI and
 * AVX2) and the loader picks the best one the CPU has (GNU ifunc).  The
 * binary therefore runs on any x86-64 and still gets hardware popcount,
 * which is a third of the lattice's time when emulated.  Elsewhere, with
 * FD_NATIVE (-march=native), or in the ThreadSanitizer build
 * (FD_NO_CLONES: the resolvers would run before its runtime starts),
 * FD_HOT is empty. */
#ifndef FD_DISPATCH_H
#define FD_DISPATCH_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__AVX2__) && defined(__linux__) && \
    !defined(FD_NO_CLONES)
#define FD_HOT __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FD_HOT
#endif

#endif
