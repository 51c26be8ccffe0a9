/* SPDX-License-Identifier: BSD-3-Clause */
/* A 64-bit hash of w words: each word xored in, then multiplied and
 * shifted in the manner of MurmurHash3's 64-bit finaliser.  One
 * definition for the host (lattice_edges.c: the covers' candidate sets)
 * and the device (lattice_covers_gpu.cu: the table of intents), so that
 * the two open-addressing tables probe alike. */
#ifndef FD_LATTICE_HASH_WORDS_H
#define FD_LATTICE_HASH_WORDS_H

#include <stdint.h>

#ifdef __CUDACC__
#define FD_HASH_FN static __host__ __device__ __forceinline__
#else
#define FD_HASH_FN static inline
#endif

FD_HASH_FN uint64_t fd_hash_words(const uint64_t *x, uint32_t w)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < w; i++) {
        h = (h ^ x[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

#undef FD_HASH_FN

#endif
