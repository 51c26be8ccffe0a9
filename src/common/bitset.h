/* SPDX-License-Identifier: BSD-3-Clause */
/* Fixed-width bitsets of 64-bit words: the set representation of the
 * lattice kernels.  All functions are inline because they sit in the
 * innermost loops; `w` is always the word count of the sets involved. */
#ifndef FD_BITSET_H
#define FD_BITSET_H

#include <stdint.h>
#include <string.h>

typedef uint64_t fd_word;

#define FD_WORD_BITS 64u
static inline uint32_t bs_words(uint32_t nbits) { return (nbits + 63u) / 64u; }

static inline int bs_test(const fd_word *s, uint32_t i) { return (int)((s[i >> 6] >> (i & 63u)) & 1u); }
static inline void bs_set(fd_word *s, uint32_t i) { s[i >> 6] |= (fd_word)1 << (i & 63u); }
static inline void bs_clear_bit(fd_word *s, uint32_t i) { s[i >> 6] &= ~((fd_word)1 << (i & 63u)); }
/* Sets the bits of n ids (each below the set's size). */
static inline void bs_set_ids(fd_word *s, const uint32_t *ids, size_t n)
{
    for (size_t k = 0; k < n; k++) bs_set(s, ids[k]);
}
static inline void bs_zero(fd_word *s, uint32_t w) { memset(s, 0, (size_t)w * sizeof *s); }
static inline void bs_copy(fd_word *d, const fd_word *s, uint32_t w) { memcpy(d, s, (size_t)w * sizeof *s); }

/* All bits 0..nbits-1 set, the rest of the last word clear. */
static inline void bs_fill(fd_word *s, uint32_t nbits)
{
    uint32_t w = bs_words(nbits);
    for (uint32_t i = 0; i < w; i++) s[i] = ~(fd_word)0;
    if (nbits & 63u) s[w - 1] = ((fd_word)1 << (nbits & 63u)) - 1;
}

static inline uint32_t bs_count(const fd_word *s, uint32_t w)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < w; i++) c += (uint32_t)__builtin_popcountll(s[i]);
    return c;
}

static inline int bs_equal(const fd_word *a, const fd_word *b, uint32_t w)
{
    for (uint32_t i = 0; i < w; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* d = a & b, returning |d|. */
static inline uint32_t bs_and_count(fd_word *restrict d, const fd_word *restrict a,
                                    const fd_word *restrict b, uint32_t w)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < w; i++) {
        d[i] = a[i] & b[i];
        c += (uint32_t)__builtin_popcountll(d[i]);
    }
    return c;
}

/* a ⊆ b */
static inline int bs_subset(const fd_word *a, const fd_word *b, uint32_t w)
{
    for (uint32_t i = 0; i < w; i++)
        if (a[i] & ~b[i]) return 0;
    return 1;
}

/* Mask of the bits below j inside word j/64. */
static inline fd_word bs_below_mask(uint32_t j) { return ((fd_word)1 << (j & 63u)) - 1; }

/* (a \ b) ∩ {0..j-1} = ∅ : "a ∩ Y_j ⊆ b ∩ Y_j" of FCbO. */
static inline int bs_prefix_subset(const fd_word *a, const fd_word *b, uint32_t j)
{
    uint32_t jw = j >> 6;
    for (uint32_t i = 0; i < jw; i++)
        if (a[i] & ~b[i]) return 0;
    return (a[jw] & ~b[jw] & bs_below_mask(j)) == 0;
}

/* a ∩ {0..j-1} = b ∩ {0..j-1} */
static inline int bs_prefix_equal(const fd_word *a, const fd_word *b, uint32_t j)
{
    uint32_t jw = j >> 6;
    for (uint32_t i = 0; i < jw; i++)
        if (a[i] != b[i]) return 0;
    return ((a[jw] ^ b[jw]) & bs_below_mask(j)) == 0;
}

/* The set bits of s (w words) in ascending order into out; returns how
 * many.  Four words are tested at once: a small set in a long bitset (a
 * child's extent of a few hundred objects in 100,000) is mostly zero
 * words: T10I4D100K at support 5, 5,434 M to 5,365 M instructions (eight
 * words at once, not vectorised: 5,602 M). */
static inline uint32_t bs_to_list(const fd_word *s, uint32_t w, uint32_t *out)
{
    uint32_t n = 0, i = 0;
    for (; i + 4 <= w; i += 4) {
        if (!(s[i] | s[i + 1] | s[i + 2] | s[i + 3])) continue;
        for (uint32_t k = i; k < i + 4; k++)
            for (fd_word x = s[k]; x; x &= x - 1) out[n++] = k * 64u + (uint32_t)__builtin_ctzll(x);
    }
    for (; i < w; i++)
        for (fd_word x = s[i]; x; x &= x - 1) out[n++] = i * 64u + (uint32_t)__builtin_ctzll(x);
    return n;
}

/* Calls body with `var` bound to each set bit of s (w words), ascending. */
#define BS_FOREACH(var, s, w, body)                                           \
    do {                                                                      \
        for (uint32_t bs_i_ = 0; bs_i_ < (w); bs_i_++) {                      \
            fd_word bs_x_ = (s)[bs_i_];                                       \
            while (bs_x_) {                                                   \
                uint32_t var = bs_i_ * 64u + (uint32_t)__builtin_ctzll(bs_x_);\
                bs_x_ &= bs_x_ - 1;                                           \
                body                                                          \
            }                                                                 \
        }                                                                     \
    } while (0)

#endif
