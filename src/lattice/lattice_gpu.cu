/* SPDX-License-Identifier: BSD-3-Clause */
/* FCbO on the GPU (see lattice_gpu.h and docs/algorithms.md, "FCbO on the GPU").
 *
 * One step over a chunk of k nodes popped from the top of the stack:
 *
 *   node_scan   warp per node: the candidate attributes U (j >= y, not in
 *               the intent, held by some object of the extent), the sum of
 *               their extent sizes (an upper bound on the children's extent
 *               ids), the intent's size, and the one empty-extent child that
 *               can be canonical (the bottom concept, at j*)
 *   scans       CUB exclusive sums give every node its range of (node, j)
 *               pairs and of output ids; one small read-back sizes buffers
 *   pairs       warp per node: writes its (node, j) pairs
 *   emit        warp per node: its concept in CSR form, intent ids in user
 *               order, into device buffers copied to pinned host memory
 *   closure     warp per pair: C = A ∩ col(j) and D = C↑ over the rows of
 *               C's objects, words below j first, or, for a bitset C, over
 *               the columns (m in D when C ⊆ col(m)) where that is less
 *               work; a canonical child takes a slot and an extent range
 *               with one 64-bit atomic (slot in the high bits, extent
 *               offset in the low), so slot order and extent order agree
 *               and the stack stays contiguous
 *   push        the children replace the chunk on top of the stack
 *
 * Every pass over an extent reads 32 object ids per iteration and each lane
 * the row of its object: the rows of a context (n_obj x aw words) stay in
 * L2 for every context we know of. */
#include "../cuda/check.cuh"
#include "lattice_gpu.h"

#include <cub/device/device_scan.cuh>

#include <stdlib.h>
#include <string.h>

#define FULL 0xffffffffu
#define BOTTOM_FLAG 0x80000000u
#define SLOT_SHIFT 40
#define EXT_MASK ((1ull << SLOT_SHIFT) - 1)
#define WARPS_PER_BLOCK 8
#define DEFAULT_CHUNK 32768u
#define NCTR 5

/* The node stack, or the staging area of a step's children: the same
 * layout, structure of arrays. */
struct nodes {
    uint64_t *intent; /* cap x aw */
    uint32_t *y, *size;
    uint64_t *eoff; /* where the extent starts in ext */
    uint32_t *ext;
    uint64_t cap, ecap;
};

struct dctx {
    const uint64_t *rows, *all;
    const uint64_t *cols; /* n_attr x ow: the context by attribute (bitset extents only) */
    uint32_t aw, n_attr, min_support;
    uint32_t ow, bits_min; /* extents of bits_min objects or more are bitsets of ow words */
    int closure;           /* lattice_gpu_closure: how bitset extents are closed */
};

struct totals {
    uint64_t pairs, ebound, nint, next, e0;
};

struct lattice_gpu {
    lattice_gpu_ctx c;
    int device;
    cudaStream_t stream;
    dctx d;
    uint64_t *rows, *all, *cols;
    uint32_t *rank_int, *rank_label;
    nodes st, sg;       /* stack, staging */
    uint64_t top, etop; /* nodes and extent ids on the stack */
    uint32_t kmax;
    /* per-chunk scratch, kmax entries */
    uint64_t *U; /* kmax x aw */
    uint32_t *cnt, *poff, *jbot;
    uint64_t *ebound, *eb_off, *nint, *ioff, *nx, *xoff;
    void *scan_tmp;
    size_t scan_bytes;
    /* pairs */
    uint32_t *pnode, *pj;
    uint64_t pcap; /* both pair arrays */
    /* the kernels for this context's intent width (pick_kernels) */
    void (*node_scan)(lattice_gpu *g, uint64_t c0, uint32_t k);
    void (*closure)(lattice_gpu *g, uint64_t c0, uint32_t P);
    /* emitted concepts on the device */
    uint32_t *e_supp, *e_int, *e_ext;
    uint64_t *e_int_end, *e_ext_end;
    uint64_t e_int_cap, e_ext_cap;
    /* counters: [0] child slot|offset, [1..4] closures, fails, below
     * support, closures by columns */
    unsigned long long *ctr;
    unsigned long long *h_ctr; /* pinned mirror */
    totals *h_tot, *d_tot;
    lattice_gpu_stats stats;
};

/* ---------------- warp helpers ---------------- */

__device__ __forceinline__ uint64_t warp_or64(uint64_t v)
{
    uint32_t lo = __reduce_or_sync(FULL, (uint32_t)v), hi = __reduce_or_sync(FULL, (uint32_t)(v >> 32));
    return (uint64_t)hi << 32 | lo;
}

__device__ __forceinline__ uint64_t warp_and64(uint64_t v)
{
    uint32_t lo = __reduce_and_sync(FULL, (uint32_t)v), hi = __reduce_and_sync(FULL, (uint32_t)(v >> 32));
    return (uint64_t)hi << 32 | lo;
}

__device__ __forceinline__ uint64_t warp_sum64(uint64_t v)
{
    for (int d = 16; d > 0; d >>= 1)
        v += __shfl_xor_sync(FULL, v, d);
    return v;
}

__device__ __forceinline__ uint32_t lanes_below(uint32_t lane) { return (1u << lane) - 1u; }

__device__ __forceinline__ uint32_t warp_incl_scan(uint32_t v, uint32_t lane)
{
    for (uint32_t d = 1; d < 32; d <<= 1) {
        const uint32_t u = __shfl_up_sync(FULL, v, d);
        if (lane >= d) v += u;
    }
    return v;
}

/* ---------------- extents ----------------
 *
 * A node's extent is an ascending list of object ids, or, from bits_min
 * objects on, a bitset of ow words (by default from the size where the
 * bitset is the smaller: chess keeps 400 bytes per node instead of 4 KB).
 * The size alone says which, so nodes carry no flag.  Every extent starts
 * at an even offset of the u32 extent array, so that bitsets are 8-byte
 * aligned: a list of n ids takes n rounded up to even. */
__host__ __device__ __forceinline__ bool ext_is_bits(uint32_t size, uint32_t bits_min) { return size >= bits_min; }

__host__ __device__ __forceinline__ uint64_t ext_units(uint32_t size, uint32_t bits_min, uint32_t ow)
{
    return ext_is_bits(size, bits_min) ? 2ull * ow : ((uint64_t)size + 1) & ~1ull;
}

/* Writes the ascending ids of the objects in a AND b (b NULL: a alone). */
__device__ void bits_to_ids(const uint64_t *a, const uint64_t *b, uint32_t ow, uint32_t *out, uint32_t lane)
{
    uint32_t pos = 0;
    for (uint32_t r = 0; r < ow; r += 32) {
        const uint32_t w = r + lane;
        uint64_t bits = w < ow ? a[w] & (b ? b[w] : ~0ull) : 0;
        const uint32_t n = __popcll(bits);
        const uint32_t incl = warp_incl_scan(n, lane);
        uint32_t p = pos + incl - n;
        while (bits) {
            out[p++] = w * 64u + (uint32_t)(__ffsll((long long)bits) - 1);
            bits &= bits - 1;
        }
        pos += __shfl_sync(FULL, incl, 31);
    }
}

/* C = A ∩ col(j) ⊆ col(m), one lane alone; most attributes fail within the
 * first words. */
__device__ __forceinline__ bool col_holds(const uint64_t *A, const uint64_t *cj, const uint64_t *cm, uint32_t ow)
{
    for (uint32_t w = 0; w < ow; w++)
        if (A[w] & cj[w] & ~cm[w]) return false;
    return true;
}

/* Bits of word w that stand for attributes >= y. */
__device__ __forceinline__ uint64_t from_y(uint32_t w, uint32_t y)
{
    if ((w + 1) * 64u <= y) return 0;
    if (w * 64u >= y) return ~0ull;
    return ~0ull << (y & 63u);
}

/* ---------------- kernels ---------------- */

/* node_scan over a bitset extent: a candidate's extent size is a popcount
 * of A AND col(j), the same work with or without a minimum support.  e
 * comes out the same in every lane. */
__device__ void node_scan_bits(const dctx &c, const uint64_t *A, const uint64_t *B, uint32_t y, uint32_t js,
                               uint64_t *Ui, uint32_t lane, uint64_t &e, uint32_t &ucount, bool &jhit)
{
    const uint32_t keep = c.min_support > 1 ? c.min_support : 1;
    for (uint32_t w = y / 64u; w < c.aw; w++) {
        uint64_t m = c.all[w] & ~B[w] & from_y(w, y), u = 0;
        while (m) {
            const uint32_t b = (uint32_t)(__ffsll((long long)m) - 1);
            m &= m - 1;
            const uint32_t j = w * 64u + b;
            const uint64_t *col = c.cols + (uint64_t)j * c.ow;
            uint32_t n = 0;
            for (uint32_t t = lane; t < c.ow; t += 32)
                n += __popcll(A[t] & col[t]);
            n = __reduce_add_sync(FULL, n);
            if (n >= keep) {
                u |= 1ull << b;
                e += n;
            }
            if (j == js && n) jhit = true;
        }
        if (lane == 0) Ui[w] = u;
        ucount += __popcll(u);
    }
}

/* node_scan over a list extent: 32 objects at a time, each lane the row of
 * its own. */
template <uint32_t W, bool COUNT>
__device__ void node_scan_list(const dctx &c, const uint32_t *A, const uint64_t *B, uint32_t size, uint32_t y,
                               uint32_t js, uint64_t *Ui, uint32_t lane, uint64_t &e, uint32_t &ucount, bool &jhit)
{
    const uint32_t aw = c.aw;
    for (uint32_t g = y / 64u; g < aw; g += W) {
        const uint32_t nw = min((uint32_t)W, aw - g);
        uint64_t m[W], u[W];
#pragma unroll
        for (uint32_t t = 0; t < W; t++) {
            m[t] = t < nw ? c.all[g + t] & ~B[g + t] & from_y(g + t, y) : 0;
            u[t] = 0;
        }
        if constexpr (COUNT) {
            /* Lane l counts attributes 64(g+t) + l and 64(g+t) + 32 + l:
             * a ballot per bit that any object of the 32 has. */
            uint32_t clo[W], chi[W];
#pragma unroll
            for (uint32_t t = 0; t < W; t++)
                clo[t] = chi[t] = 0;
            for (uint32_t base = 0; base < size; base += 32) {
                const uint32_t idx = base + lane;
                const uint64_t *r = c.rows + (uint64_t)(idx < size ? A[idx] : 0) * aw + g;
#pragma unroll
                for (uint32_t t = 0; t < W; t++)
                    if (t < nw) {
                        const uint64_t v = idx < size ? r[t] & m[t] : 0;
                        const uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
                        if (__any_sync(FULL, lo != 0))
                            for (uint32_t b = 0; b < 32; b++) {
                                const uint32_t n = __popc(__ballot_sync(FULL, (lo >> b) & 1u));
                                clo[t] += lane == b ? n : 0;
                            }
                        if (__any_sync(FULL, hi != 0))
                            for (uint32_t b = 0; b < 32; b++) {
                                const uint32_t n = __popc(__ballot_sync(FULL, (hi >> b) & 1u));
                                chi[t] += lane == b ? n : 0;
                            }
                    }
            }
#pragma unroll
            for (uint32_t t = 0; t < W; t++)
                if (t < nw) {
                    const bool klo = clo[t] >= c.min_support, khi = chi[t] >= c.min_support;
                    const uint64_t v = (uint64_t)__ballot_sync(FULL, khi) << 32 | __ballot_sync(FULL, klo);
                    e += (klo ? clo[t] : 0) + (khi ? chi[t] : 0);
                    if (lane == 0) Ui[g + t] = v;
                    ucount += __popcll(v);
                }
        } else {
            /* Two objects per lane per iteration: twice the loads in flight. */
            for (uint32_t base = 0; base < size; base += 64) {
#pragma unroll
                for (uint32_t h = 0; h < 2; h++) {
                    const uint32_t idx = base + 32 * h + lane;
                    if (idx < size) {
                        const uint64_t *r = c.rows + (uint64_t)A[idx] * aw + g;
#pragma unroll
                        for (uint32_t t = 0; t < W; t++)
                            if (t < nw) {
                                uint64_t v = r[t] & m[t];
                                u[t] |= v;
                                e += __popcll(v);
                            }
                    }
                }
            }
#pragma unroll
            for (uint32_t t = 0; t < W; t++)
                if (t < nw) {
                    uint64_t v = warp_or64(u[t]);
                    if (lane == 0) Ui[g + t] = v;
                    ucount += __popcll(v);
                    if (js / 64u == g + t && ((v >> (js & 63u)) & 1u)) jhit = true;
                }
        }
    }
    e = warp_sum64(e);
}

/* COUNT (minimum support >= 2): also count each candidate's extent and
 * keep only those with enough objects, so that the closure kernel never
 * sees the (often billions of) candidates below the support. */
template <uint32_t W, bool COUNT>
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
    k_node_scan(dctx c, nodes s, uint64_t c0, uint32_t k, uint64_t *U, uint32_t *cnt, uint64_t *ebound, uint64_t *nint,
                uint64_t *nx, uint32_t *jbot)
{
    const uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) / 32u, lane = threadIdx.x & 31u;
    if (i >= k) return; /* warp-uniform */
    const uint32_t aw = c.aw;
    const uint64_t node = c0 + i;
    const uint64_t *B = s.intent + node * aw;
    const uint32_t y = s.y[node], size = s.size[node];
    const uint32_t *A = s.ext + s.eoff[node];
    uint64_t *Ui = U + (uint64_t)i * aw;

    uint32_t pb = 0, js = UINT32_MAX;
    for (uint32_t w = lane; w < aw; w += 32) {
        pb += __popcll(B[w]);
        uint64_t miss = c.all[w] & ~B[w];
        if (miss && js == UINT32_MAX) js = w * 64u + (uint32_t)(__ffsll((long long)miss) - 1);
        Ui[w] = 0;
    }
    pb = __reduce_add_sync(FULL, pb);
    js = __reduce_min_sync(FULL, js); /* j*: the first attribute not in B */
    __syncwarp();
    if (lane == 0) {
        nint[i] = pb;
        nx[i] = size;
    }
    if (js == UINT32_MAX || y >= c.n_attr) { /* B holds everything, or no attribute is left */
        if (lane == 0) {
            cnt[i] = 0;
            ebound[i] = 0;
            jbot[i] = UINT32_MAX;
        }
        return;
    }
    uint64_t e = 0;
    uint32_t ucount = 0;
    bool jhit = false;
    if (ext_is_bits(size, c.bits_min))
        node_scan_bits(c, (const uint64_t *)A, B, y, js, Ui, lane, e, ucount, jhit);
    else
        node_scan_list<W, COUNT>(c, A, B, size, y, js, Ui, lane, e, ucount, jhit);
    /* Room for the children's extents: at most their sizes, one pad each
     * (even offsets), and whole bitsets where a low bits_min makes them
     * larger than the sizes (a testing setting). */
    e += ucount;
    if (c.bits_min <= 2 * c.ow) e += (uint64_t)ucount * 2 * c.ow;
    /* The empty extent at j* is the one that can be canonical (its closure,
     * every attribute, agrees with B below j*); fcbo.c does the same. */
    const bool bottom = c.min_support == 0 && js >= y && !jhit;
    if (lane == 0) {
        cnt[i] = ucount + (bottom ? 1u : 0u);
        ebound[i] = e;
        jbot[i] = bottom ? js : UINT32_MAX;
    }
}

__global__ void k_pairs(uint32_t aw, uint32_t k, const uint64_t *U, const uint32_t *poff, const uint32_t *jbot,
                        uint32_t *pnode, uint32_t *pj)
{
    const uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) / 32u, lane = threadIdx.x & 31u;
    if (i >= k) return;
    uint32_t out = poff[i];
    for (uint32_t r = 0; r < aw; r += 32) {
        const uint32_t w = r + lane;
        uint64_t bits = w < aw ? U[(uint64_t)i * aw + w] : 0;
        const uint32_t c = __popcll(bits);
        const uint32_t incl = warp_incl_scan(c, lane);
        uint32_t pos = out + incl - c;
        while (bits) {
            uint32_t b = (uint32_t)(__ffsll((long long)bits) - 1);
            bits &= bits - 1;
            pnode[pos] = i;
            pj[pos] = w * 64u + b;
            pos++;
        }
        out += __shfl_sync(FULL, incl, 31);
    }
    if (lane == 0 && jbot[i] != UINT32_MAX) {
        pnode[out] = i;
        pj[out] = jbot[i] | BOTTOM_FLAG;
    }
}

struct emitv {
    uint32_t *supp, *int_ids, *ext_ids;
    uint64_t *int_end, *ext_end;
};

__global__ void k_emit(dctx c, nodes s, uint64_t c0, uint32_t k, const uint32_t *rank_int, const uint32_t *rank_label,
                       const uint64_t *ioff, const uint64_t *xoff, emitv e)
{
    const uint32_t i = (blockIdx.x * blockDim.x + threadIdx.x) / 32u, lane = threadIdx.x & 31u;
    if (i >= k) return;
    const uint64_t node = c0 + i;
    const uint64_t *B = s.intent + node * c.aw;
    const uint32_t size = s.size[node];
    const uint64_t o = ioff[i];
    uint32_t cur = 0;
    /* Ascending user order: walk the attributes in that order and keep the
     * intent's, compacted with a ballot. */
    for (uint32_t r = 0; r < c.n_attr; r += 32) {
        const uint32_t rr = r + lane;
        bool has = false;
        if (rr < c.n_attr) {
            const uint32_t m = rank_int[rr];
            has = (B[m >> 6] >> (m & 63u)) & 1u;
        }
        const uint32_t mask = __ballot_sync(FULL, has);
        if (has) e.int_ids[o + cur + __popc(mask & lanes_below(lane))] = rank_label[rr];
        cur += __popc(mask);
    }
    if (lane == 0) {
        e.supp[i] = size;
        e.int_end[i] = o + cur;
    }
    if (xoff) {
        const uint32_t *A = s.ext + s.eoff[node];
        const uint64_t x = xoff[i];
        if (ext_is_bits(size, c.bits_min))
            bits_to_ids((const uint64_t *)A, NULL, c.ow, e.ext_ids + x, lane);
        else
            for (uint32_t t = lane; t < size; t += 32)
                e.ext_ids[x + t] = A[t];
        if (lane == 0) e.ext_end[i] = x + size;
    }
}

enum { R_CANON = 0, R_FAIL = 1, R_SUPPORT = 2, R_NONE = 3, R_BY_COLUMNS = 4 /* or'ed in */ };

/* Takes the next child slot and `units` of the children's extent array:
 * one 64-bit atomic for both, so that slot order and extent order agree. */
__device__ __forceinline__ unsigned long long take_slot(unsigned long long *slot_ctr, uint64_t units, uint32_t lane)
{
    unsigned long long old = 0;
    if (lane == 0) old = atomicAdd(slot_ctr, (1ull << SLOT_SHIFT) | units);
    return __shfl_sync(FULL, old, 0);
}

/* One candidate (node, j) of a node whose extent A is a bitset, by a whole
 * warp.  C = A ∩ col(j) is never stored: each pass recomputes its words.
 * D = C↑ by rows (AND the rows of C's objects) or by columns (m is in D
 * when C ⊆ col(m); most tests stop at the first words), whichever the
 * estimate says is less work, as fcbo.c chooses. */
template <uint32_t W>
__device__ int closure_bits(const dctx &c, const uint64_t *B, const uint64_t *A, uint32_t j, const nodes &o,
                            unsigned long long *slot_ctr, uint32_t lane)
{
    const uint32_t aw = c.aw, ow = c.ow, jw = j >> 6;
    const uint64_t jb = 1ull << (j & 63u);
    const uint64_t *cj = c.cols + (uint64_t)j * ow;
    uint32_t n = 0, nb = 0;
    for (uint32_t t = lane; t < ow; t += 32)
        n += __popcll(A[t] & cj[t]);
    for (uint32_t w = lane; w < aw; w += 32)
        nb += __popcll(B[w]);
    const uint32_t count = __reduce_add_sync(FULL, n);
    if (count < c.min_support) return R_SUPPORT;
    nb = __reduce_add_sync(FULL, nb);
    const uint64_t left = c.n_attr - nb - 1;
    const bool by_rows =
        c.closure == FCA_GPU_CLOSE_ROWS || (c.closure == FCA_GPU_CLOSE_AUTO && (uint64_t)count * aw <= left * ow / 4);

    uint64_t djw = 0;
    if (by_rows) {
        for (uint32_t g = 0; g <= jw; g += W) {
            const uint32_t nw = min((uint32_t)W, jw + 1 - g);
            uint64_t d[W];
#pragma unroll
            for (uint32_t t = 0; t < W; t++)
                d[t] = ~0ull;
            for (uint32_t t = lane; t < ow; t += 32) {
                uint64_t bits = A[t] & cj[t];
                while (bits) {
                    const uint64_t *r = c.rows + (uint64_t)(t * 64u + (uint32_t)(__ffsll((long long)bits) - 1)) * aw;
                    bits &= bits - 1;
#pragma unroll
                    for (uint32_t u = 0; u < W; u++)
                        if (u < nw) d[u] &= r[g + u];
                }
            }
            bool bad = false;
#pragma unroll
            for (uint32_t u = 0; u < W; u++)
                if (u < nw) {
                    const uint64_t v = warp_and64(d[u]);
                    const uint32_t w = g + u;
                    const uint64_t below = w < jw ? ~0ull : jb - 1;
                    if ((v ^ B[w]) & below) bad = true;
                    if (w == jw) djw = v;
                }
            if (bad) return R_FAIL;
        }
    } else {
        /* Canonical unless some m < j outside B holds all of C. */
        for (uint32_t base = 0; base < j; base += 32) {
            const uint32_t m = base + lane;
            bool held = false;
            if (m < j && ((c.all[m >> 6] & ~B[m >> 6]) >> (m & 63u)) & 1u)
                held = col_holds(A, cj, c.cols + (uint64_t)m * ow, ow);
            if (__any_sync(FULL, held)) return R_FAIL | R_BY_COLUMNS;
        }
    }

    const bool cbits = ext_is_bits(count, c.bits_min);
    const unsigned long long old = take_slot(slot_ctr, ext_units(count, c.bits_min, ow), lane);
    const uint64_t slot = old >> SLOT_SHIFT, eo = old & EXT_MASK;
    uint64_t *D = o.intent + slot * aw;
    if (lane == 0) {
        o.y[slot] = j + 1;
        o.size[slot] = count;
        o.eoff[slot] = eo;
        if (!cbits && (count & 1u)) o.ext[eo + count] = 0; /* the pad: copied with the rest */
    }
    if (cbits) {
        uint64_t *X = (uint64_t *)(o.ext + eo);
        for (uint32_t t = lane; t < ow; t += 32)
            X[t] = A[t] & cj[t];
    } else {
        bits_to_ids(A, cj, ow, o.ext + eo, lane);
    }
    for (uint32_t w = lane; w < jw; w += 32)
        D[w] = B[w];
    if (by_rows) {
        if (lane == 0) D[jw] = djw;
        for (uint32_t g = jw + 1; g < aw; g += W) {
            const uint32_t nw = min((uint32_t)W, aw - g);
            uint64_t d[W];
#pragma unroll
            for (uint32_t t = 0; t < W; t++)
                d[t] = ~0ull;
            for (uint32_t t = lane; t < ow; t += 32) {
                uint64_t bits = A[t] & cj[t];
                while (bits) {
                    const uint64_t *r = c.rows + (uint64_t)(t * 64u + (uint32_t)(__ffsll((long long)bits) - 1)) * aw;
                    bits &= bits - 1;
#pragma unroll
                    for (uint32_t u = 0; u < W; u++)
                        if (u < nw) d[u] &= r[g + u];
                }
            }
#pragma unroll
            for (uint32_t u = 0; u < W; u++)
                if (u < nw) {
                    const uint64_t v = warp_and64(d[u]);
                    if (lane == 0) D[g + u] = v;
                }
        }
        return R_CANON;
    }
    /* Words jw and up, 32 attributes per ballot: below j D is B (the test
     * passed), j itself is in D, above j the columns decide. */
    uint32_t lo = 0;
    for (uint32_t base = jw * 64u; base < aw * 64u; base += 32) {
        const uint32_t m = base + lane;
        bool bit = false;
        if (m < c.n_attr) {
            const bool inB = (B[m >> 6] >> (m & 63u)) & 1u;
            bit = inB || m == j;
            if (!bit && m > j && ((c.all[m >> 6] >> (m & 63u)) & 1u))
                bit = col_holds(A, cj, c.cols + (uint64_t)m * ow, ow);
        }
        const uint32_t mask = __ballot_sync(FULL, bit);
        if (base & 32u) {
            if (lane == 0) D[base >> 6] = (uint64_t)mask << 32 | lo;
        } else {
            lo = mask;
        }
    }
    return R_CANON | R_BY_COLUMNS;
}

/* One candidate (node i, attribute j), by a whole warp. */
template <uint32_t W>
__device__ int closure_one(const dctx &c, const nodes &s, uint64_t c0, uint32_t i, uint32_t jraw, const nodes &o,
                           unsigned long long *slot_ctr, uint32_t lane)
{
    const uint32_t aw = c.aw;
    const uint64_t node = c0 + i;
    const uint64_t *B = s.intent + node * aw;
    const uint32_t size = s.size[node];
    const uint32_t *A = s.ext + s.eoff[node];

    if (jraw & BOTTOM_FLAG) { /* the bottom concept: empty extent, every attribute */
        const uint32_t j = jraw & ~BOTTOM_FLAG;
        const unsigned long long old = take_slot(slot_ctr, 0, lane);
        const uint64_t slot = old >> SLOT_SHIFT;
        for (uint32_t w = lane; w < aw; w += 32)
            o.intent[slot * aw + w] = c.all[w];
        if (lane == 0) {
            o.y[slot] = j + 1;
            o.size[slot] = 0;
            o.eoff[slot] = old & EXT_MASK;
        }
        return R_CANON;
    }

    if (ext_is_bits(size, c.bits_min)) return closure_bits<W>(c, B, (const uint64_t *)A, jraw, o, slot_ctr, lane);
    /* A list: so is every child's, being no larger. */
    const uint32_t j = jraw, jw = j >> 6;
    const uint64_t jb = 1ull << (j & 63u);
    uint32_t count = 0;
    uint64_t djw = 0;
    /* Words up to j's first: the canonicity test needs only D below j, and
     * most candidates fail it. */
    for (uint32_t g = 0; g <= jw; g += W) {
        const uint32_t nw = min((uint32_t)W, jw + 1 - g);
        uint64_t d[W];
#pragma unroll
        for (uint32_t t = 0; t < W; t++)
            d[t] = ~0ull;
        uint32_t cl = 0;
        for (uint32_t base = 0; base < size; base += 64) {
            const uint32_t i0 = base + lane, i1 = i0 + 32;
            const uint64_t *r0 = c.rows + (uint64_t)(i0 < size ? A[i0] : 0) * aw;
            const uint64_t *r1 = c.rows + (uint64_t)(i1 < size ? A[i1] : 0) * aw;
            const bool h0 = i0 < size && (r0[jw] & jb) != 0;
            const bool h1 = i1 < size && (r1[jw] & jb) != 0;
            if (g == 0) cl += __popc(__ballot_sync(FULL, h0)) + __popc(__ballot_sync(FULL, h1));
#pragma unroll
            for (uint32_t t = 0; t < W; t++)
                if (t < nw) {
                    if (h0) d[t] &= r0[g + t];
                    if (h1) d[t] &= r1[g + t];
                }
        }
        if (g == 0) {
            count = cl;
            if (count < c.min_support) return R_SUPPORT;
        }
        bool bad = false;
#pragma unroll
        for (uint32_t t = 0; t < W; t++)
            if (t < nw) {
                const uint64_t v = warp_and64(d[t]);
                const uint32_t w = g + t;
                const uint64_t below = w < jw ? ~0ull : jb - 1;
                if ((v ^ B[w]) & below) bad = true;
                if (w == jw) djw = v;
            }
        if (bad) return R_FAIL;
    }

    /* Canonical: D agrees with B below j, so only word jw (done) and the
     * words above it are new. */
    const unsigned long long old = take_slot(slot_ctr, ext_units(count, c.bits_min, c.ow), lane);
    const uint64_t slot = old >> SLOT_SHIFT, eo = old & EXT_MASK;
    uint64_t *D = o.intent + slot * aw;
    for (uint32_t w = lane; w < jw; w += 32)
        D[w] = B[w];
    if (lane == 0) {
        D[jw] = djw;
        o.y[slot] = j + 1;
        o.size[slot] = count;
        o.eoff[slot] = eo;
        if (count & 1u) o.ext[eo + count] = 0; /* the pad: copied with the rest */
    }
    /* The words above jw, and on the first pass the child's extent
     * (ascending like its parent's). */
    bool ext_done = false;
    for (uint32_t g = jw + 1; g < aw; g += W) {
        const uint32_t nw = min((uint32_t)W, aw - g);
        uint64_t d[W];
#pragma unroll
        for (uint32_t t = 0; t < W; t++)
            d[t] = ~0ull;
        uint32_t pos = 0;
        for (uint32_t base = 0; base < size; base += 32) {
            const uint32_t idx = base + lane;
            const uint32_t obj = idx < size ? A[idx] : 0;
            const uint64_t *r = c.rows + (uint64_t)obj * aw;
            const bool has = idx < size && (r[jw] & jb) != 0;
            if (!ext_done) {
                const uint32_t mask = __ballot_sync(FULL, has);
                if (has) o.ext[eo + pos + __popc(mask & lanes_below(lane))] = obj;
                pos += __popc(mask);
            }
            if (has) {
#pragma unroll
                for (uint32_t t = 0; t < W; t++)
                    if (t < nw) d[t] &= r[g + t];
            }
        }
        ext_done = true;
#pragma unroll
        for (uint32_t t = 0; t < W; t++)
            if (t < nw) {
                const uint64_t v = warp_and64(d[t]);
                if (lane == 0) D[g + t] = v;
            }
    }
    if (!ext_done) {
        uint32_t pos = 0;
        for (uint32_t base = 0; base < size; base += 32) {
            const uint32_t idx = base + lane;
            const uint32_t obj = idx < size ? A[idx] : 0;
            const bool has = idx < size && (c.rows[(uint64_t)obj * aw + jw] & jb) != 0;
            const uint32_t mask = __ballot_sync(FULL, has);
            if (has) o.ext[eo + pos + __popc(mask & lanes_below(lane))] = obj;
            pos += __popc(mask);
        }
    }
    return R_CANON;
}

template <uint32_t W>
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
    k_closure(dctx c, nodes s, uint64_t c0, uint32_t P, const uint32_t *pnode, const uint32_t *pj, nodes o,
              unsigned long long *ctr)
{
    __shared__ unsigned long long tally[4];
    if (threadIdx.x < 4) tally[threadIdx.x] = 0;
    __syncthreads();
    const uint32_t p = (blockIdx.x * blockDim.x + threadIdx.x) / 32u, lane = threadIdx.x & 31u;
    int res = R_NONE;
    if (p < P) res = closure_one<W>(c, s, c0, pnode[p], pj[p], o, ctr, lane);
    if (lane == 0) {
        const int r = res & ~R_BY_COLUMNS;
        if (r == R_CANON || r == R_FAIL) atomicAdd(&tally[0], 1ull);
        if (r == R_FAIL) atomicAdd(&tally[1], 1ull);
        if (r == R_SUPPORT) atomicAdd(&tally[2], 1ull);
        if (res & R_BY_COLUMNS) atomicAdd(&tally[3], 1ull);
    }
    __syncthreads();
    if (threadIdx.x < 4 && tally[threadIdx.x]) atomicAdd(&ctr[1 + threadIdx.x], tally[threadIdx.x]);
}

__global__ void k_totals(uint32_t k, const uint32_t *cnt, const uint32_t *poff, const uint64_t *ebound,
                         const uint64_t *eb_off, const uint64_t *nint, const uint64_t *ioff, const uint64_t *nx,
                         const uint64_t *xoff, const uint64_t *eoff_c0, totals *t)
{
    t->pairs = (uint64_t)poff[k - 1] + cnt[k - 1];
    t->ebound = eb_off[k - 1] + ebound[k - 1];
    t->nint = ioff[k - 1] + nint[k - 1];
    t->next = xoff[k - 1] + nx[k - 1];
    t->e0 = *eoff_c0;
}

__global__ void k_rebase(uint64_t *dst, const uint64_t *src, uint64_t n, uint64_t add)
{
    for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; t < n; t += (uint64_t)gridDim.x * blockDim.x)
        dst[t] = src[t] + add;
}

/* ---------------- host side ---------------- */

#define CK(call) CUDA_CHECK_GOTO(call, st, done)

static unsigned warp_blocks(uint64_t warps) { return (unsigned)((warps + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK); }

static void nodes_free(nodes *n)
{
    cudaFree(n->intent);
    cudaFree(n->y);
    cudaFree(n->size);
    cudaFree(n->eoff);
    cudaFree(n->ext);
    memset(n, 0, sizeof *n);
}

/* Makes room for `need` nodes and `ecap` extent ids, keeping the first
 * `keep` nodes and `ekeep` ids. */
static fd_status nodes_reserve(lattice_gpu *g, nodes *n, uint64_t need, uint64_t eneed, uint64_t keep, uint64_t ekeep,
                               const char *what)
{
    fd_status st = FD_OK;
    const uint32_t aw = g->c.aw;
    if (need > n->cap) {
        uint64_t cap = n->cap * 2 > need ? n->cap * 2 : need;
        nodes m = *n;
        m.intent = NULL;
        m.y = m.size = NULL;
        m.eoff = NULL;
        FD_TRY(fd_cuda_alloc((void **)&m.intent, cap * aw * 8, what));
        st = fd_cuda_alloc((void **)&m.y, cap * 4, what);
        if (st == FD_OK) st = fd_cuda_alloc((void **)&m.size, cap * 4, what);
        if (st == FD_OK) st = fd_cuda_alloc((void **)&m.eoff, cap * 8, what);
        if (st != FD_OK) {
            cudaFree(m.intent);
            cudaFree(m.y);
            cudaFree(m.size);
            cudaFree(m.eoff);
            return st;
        }
        if (keep) {
            CK(cudaMemcpyAsync(m.intent, n->intent, keep * aw * 8, cudaMemcpyDeviceToDevice, g->stream));
            CK(cudaMemcpyAsync(m.y, n->y, keep * 4, cudaMemcpyDeviceToDevice, g->stream));
            CK(cudaMemcpyAsync(m.size, n->size, keep * 4, cudaMemcpyDeviceToDevice, g->stream));
            CK(cudaMemcpyAsync(m.eoff, n->eoff, keep * 8, cudaMemcpyDeviceToDevice, g->stream));
        }
        CK(cudaStreamSynchronize(g->stream));
        cudaFree(n->intent);
        cudaFree(n->y);
        cudaFree(n->size);
        cudaFree(n->eoff);
        n->intent = m.intent;
        n->y = m.y;
        n->size = m.size;
        n->eoff = m.eoff;
        n->cap = cap;
    }
    if (eneed > n->ecap) {
        uint64_t cap = n->ecap * 2 > eneed ? n->ecap * 2 : eneed;
        uint32_t *e = NULL;
        FD_TRY(fd_cuda_alloc((void **)&e, cap * 4, what));
        if (ekeep) CK(cudaMemcpyAsync(e, n->ext, ekeep * 4, cudaMemcpyDeviceToDevice, g->stream));
        CK(cudaStreamSynchronize(g->stream));
        cudaFree(n->ext);
        n->ext = e;
        n->ecap = cap;
    }
done:
    return st;
}

extern "C" void lattice_gpu_out_free(lattice_gpu_out *o)
{
    if (o->supp) cudaFreeHost(o->supp);
    if (o->int_end) cudaFreeHost(o->int_end);
    if (o->int_ids) cudaFreeHost(o->int_ids);
    if (o->ext_end) cudaFreeHost(o->ext_end);
    if (o->ext_ids) cudaFreeHost(o->ext_ids);
    memset(o, 0, sizeof *o);
}

static fd_status out_reserve(lattice_gpu_out *o, uint64_t n, uint64_t nint, uint64_t next, int ext)
{
    uint64_t cn = o->cap_n, cn2 = o->cap_n, cn3 = o->cap_n;
    FD_TRY(fd_cuda_host_grow((void **)&o->supp, &cn, n, 4));
    FD_TRY(fd_cuda_host_grow((void **)&o->int_end, &cn2, n, 8));
    if (ext) FD_TRY(fd_cuda_host_grow((void **)&o->ext_end, &cn3, n, 8));
    o->cap_n = cn;
    FD_TRY(fd_cuda_host_grow((void **)&o->int_ids, &o->cap_int, nint, 4));
    if (ext) FD_TRY(fd_cuda_host_grow((void **)&o->ext_ids, &o->cap_ext, next, 4));
    return FD_OK;
}

extern "C" void lattice_gpu_destroy(lattice_gpu **pg)
{
    lattice_gpu *g = *pg;
    if (!g) return;
    cudaSetDevice(g->device);
    if (g->stream) cudaStreamSynchronize(g->stream);
    nodes_free(&g->st);
    nodes_free(&g->sg);
    void *dev[] = {g->cols, g->rows,   g->all,    g->rank_int, g->rank_label, g->U,         g->cnt,       g->poff,     g->jbot,
                   g->ebound, g->eb_off, g->nint,     g->ioff,       g->nx,        g->xoff,      g->scan_tmp, g->pnode,
                   g->pj,     g->e_supp, g->e_int,    g->e_ext,      g->e_int_end, g->e_ext_end, g->ctr,      g->d_tot};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
        cudaFree(dev[i]);
    if (g->h_ctr) cudaFreeHost(g->h_ctr);
    if (g->h_tot) cudaFreeHost(g->h_tot);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
    *pg = NULL;
}

static void pick_kernels(lattice_gpu *g, uint32_t aw);

extern "C" fd_status lattice_gpu_create(lattice_gpu **out, const lattice_gpu_ctx *c)
{
    fd_status st = FD_OK;
    lattice_gpu *g = (lattice_gpu *)calloc(1, sizeof *g);
    if (!g) return fd_fail(FD_ERR_NOMEM, "out of memory");
    g->c = *c;
    g->device = c->device;
    const uint32_t aw = c->aw;
    /* (slot, extent offset) share one 64-bit counter: a step's pairs, at
     * most kmax * (n_attr + 1), must fit the slot's 24 bits. */
    uint64_t K = c->chunk ? c->chunk : DEFAULT_CHUNK;
    const uint64_t lim = ((1ull << (64 - SLOT_SHIFT)) - 1) / ((uint64_t)c->n_attr + 1);
    if (K > lim) K = lim;
    if (K < 1) K = 1;
    g->kmax = (uint32_t)K;
    pick_kernels(g, aw);
    CK(cudaSetDevice(c->device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->rows, (size_t)c->n_obj * aw * 8, "the context rows"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->all, (size_t)aw * 8, "the context"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->rank_int, (size_t)c->n_attr * 4 + 4, "the context"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->rank_label, (size_t)c->n_attr * 4 + 4, "the context"), st, done);
    CK(cudaMemcpy(g->rows, c->rows, (size_t)c->n_obj * aw * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->all, c->all, (size_t)aw * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->rank_int, c->rank_int, (size_t)c->n_attr * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->rank_label, c->rank_label, (size_t)c->n_attr * 4, cudaMemcpyHostToDevice));
    {
        /* Bitset extents need the context by attribute on the device too;
         * past 4 GiB of it (10^7 objects x 3,000 attributes) every extent
         * stays a list. */
        const uint64_t ow = c->n_obj ? (c->n_obj + 63) / 64 : 1, col_bytes = (uint64_t)c->n_attr * ow * 8;
        uint32_t bits_min = c->bits_min ? c->bits_min : (uint32_t)(2 * ow + 1 < UINT32_MAX ? 2 * ow + 1 : UINT32_MAX);
        if (c->bits_min == UINT32_MAX || col_bytes > (4ull << 30)) bits_min = UINT32_MAX;
        if (bits_min != UINT32_MAX) {
            FD_TRY_GOTO(fd_cuda_alloc((void **)&g->cols, col_bytes, "the context by attribute"), st, done);
            CK(cudaMemcpy(g->cols, c->cols, col_bytes, cudaMemcpyHostToDevice));
        }
        g->d = dctx{g->rows, g->all, g->cols, aw, c->n_attr, c->min_support, (uint32_t)ow, bits_min, c->closure};
    }

    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->U, K * aw * 8, "candidate sets"), st, done);
    {
        void **u32s[] = {(void **)&g->cnt, (void **)&g->poff, (void **)&g->jbot};
        void **u64s[] = {(void **)&g->ebound, (void **)&g->eb_off, (void **)&g->nint,
                         (void **)&g->ioff,   (void **)&g->nx,     (void **)&g->xoff};
        for (size_t i = 0; i < 3; i++)
            FD_TRY_GOTO(fd_cuda_alloc(u32s[i], K * 4, "chunk scratch"), st, done);
        for (size_t i = 0; i < 6; i++)
            FD_TRY_GOTO(fd_cuda_alloc(u64s[i], K * 8, "chunk scratch"), st, done);
    }
    {
        size_t b32 = 0, b64 = 0;
        CK(cub::DeviceScan::ExclusiveSum(NULL, b32, g->cnt, g->poff, (int)K, g->stream));
        CK(cub::DeviceScan::ExclusiveSum(NULL, b64, g->ebound, g->eb_off, (int)K, g->stream));
        g->scan_bytes = b32 > b64 ? b32 : b64;
        FD_TRY_GOTO(fd_cuda_alloc(&g->scan_tmp, g->scan_bytes, "scan scratch"), st, done);
    }
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->ctr, NCTR * sizeof(unsigned long long), "counters"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->d_tot, sizeof(totals), "counters"), st, done);
    CK(cudaMemset(g->ctr, 0, NCTR * sizeof(unsigned long long)));
    CK(cudaHostAlloc((void **)&g->h_ctr, NCTR * sizeof(unsigned long long), cudaHostAllocDefault));
    CK(cudaHostAlloc((void **)&g->h_tot, sizeof(totals), cudaHostAllocDefault));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->e_supp, K * 4, "emitted concepts"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->e_int_end, K * 8, "emitted concepts"), st, done);
    if (c->with_extents) FD_TRY_GOTO(fd_cuda_alloc((void **)&g->e_ext_end, K * 8, "emitted concepts"), st, done);
    FD_TRY_GOTO(nodes_reserve(g, &g->st, 4 * K, 16 * K, 0, 0, "the node stack"), st, done);
    *out = g;
    return FD_OK;
done:
    lattice_gpu_destroy(&g);
    return st;
}

extern "C" uint64_t lattice_gpu_pending(const lattice_gpu *g) { return g->top; }
extern "C" uint32_t lattice_gpu_chunk(const lattice_gpu *g) { return g->kmax; }

extern "C" void lattice_gpu_get_stats(const lattice_gpu *g, lattice_gpu_stats *s) { *s = g->stats; }

static void note_depth(lattice_gpu *g)
{
    if (g->top > g->stats.max_nodes) g->stats.max_nodes = g->top;
    if (g->etop > g->stats.max_ext) g->stats.max_ext = g->etop;
}

extern "C" fd_status lattice_gpu_push(lattice_gpu *g, uint32_t n, const uint64_t *intents, const uint32_t *y,
                                  const uint32_t *size, const uint32_t *ext, uint64_t n_ext)
{
    fd_status st = FD_OK;
    const uint32_t aw = g->c.aw, ow = g->d.ow, bmin = g->d.bits_min;
    uint64_t *eoff = NULL, units = 0;
    uint32_t *x = NULL; /* the extents in the device layout (ext_units) */
    if (n == 0) return FD_OK;
    CK(cudaSetDevice(g->device));
    for (uint32_t i = 0; i < n; i++)
        units += ext_units(size[i], bmin, ow);
    FD_TRY(nodes_reserve(g, &g->st, g->top + n, g->etop + units, g->top, g->etop, "the node stack"));
    eoff = (uint64_t *)malloc((size_t)n * sizeof *eoff);
    x = (uint32_t *)calloc(units ? units : 1, sizeof *x);
    if (!eoff || !x) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto done;
    }
    {
        uint64_t e = 0, from = 0;
        for (uint32_t i = 0; i < n; i++) {
            eoff[i] = g->etop + e;
            if (ext_is_bits(size[i], bmin)) {
                uint64_t *b = (uint64_t *)(x + e);
                for (uint32_t t = 0; t < size[i]; t++)
                    b[ext[from + t] >> 6] |= 1ull << (ext[from + t] & 63u);
            } else {
                memcpy(x + e, ext + from, (size_t)size[i] * sizeof *x);
            }
            e += ext_units(size[i], bmin, ow);
            from += size[i];
        }
        if (from != n_ext) {
            st = fd_fail(FD_ERR_INTERNAL, "lattice_gpu_push: %llu extent ids given, the sizes add up to %llu",
                         (unsigned long long)n_ext, (unsigned long long)from);
            goto done;
        }
    }
    CK(cudaMemcpyAsync(g->st.intent + g->top * aw, intents, (size_t)n * aw * 8, cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(g->st.y + g->top, y, (size_t)n * 4, cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(g->st.size + g->top, size, (size_t)n * 4, cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(g->st.eoff + g->top, eoff, (size_t)n * 8, cudaMemcpyHostToDevice, g->stream));
    if (units) CK(cudaMemcpyAsync(g->st.ext + g->etop, x, units * 4, cudaMemcpyHostToDevice, g->stream));
    /* Pageable sources: wait before they are freed or reused. */
    CK(cudaStreamSynchronize(g->stream));
    g->top += n;
    g->etop += units;
    note_depth(g);
done:
    free(eoff);
    free(x);
    return st;
}

extern "C" fd_status lattice_gpu_pop_all(lattice_gpu *g, lattice_gpu_nodes *out)
{
    fd_status st = FD_OK;
    const uint32_t aw = g->c.aw, ow = g->d.ow, bmin = g->d.bits_min;
    const uint64_t n = g->top, units = g->etop;
    uint64_t *eoff = NULL, n_ext = 0;
    uint32_t *x = NULL;
    memset(out, 0, sizeof *out);
    if (n == 0) return FD_OK;
    CK(cudaSetDevice(g->device));
    out->intents = (uint64_t *)malloc((size_t)n * aw * 8);
    out->y = (uint32_t *)malloc((size_t)n * 4);
    out->size = (uint32_t *)malloc((size_t)n * 4);
    eoff = (uint64_t *)malloc((size_t)n * 8);
    x = (uint32_t *)malloc(units ? (size_t)units * 4 : 4);
    if (!out->intents || !out->y || !out->size || !eoff || !x) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory for the %llu nodes of the GPU's stack", (unsigned long long)n);
        goto done;
    }
    CK(cudaMemcpyAsync(out->intents, g->st.intent, (size_t)n * aw * 8, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemcpyAsync(out->y, g->st.y, (size_t)n * 4, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemcpyAsync(out->size, g->st.size, (size_t)n * 4, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemcpyAsync(eoff, g->st.eoff, (size_t)n * 8, cudaMemcpyDeviceToHost, g->stream));
    if (units) CK(cudaMemcpyAsync(x, g->st.ext, (size_t)units * 4, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    for (uint64_t i = 0; i < n; i++) {
        if (eoff[i] + ext_units(out->size[i], bmin, ow) > units) {
            st = fd_fail(FD_ERR_INTERNAL, "the GPU's stack: node %llu's extent ends past its %llu words",
                         (unsigned long long)i, (unsigned long long)units);
            goto done;
        }
        n_ext += out->size[i];
    }
    out->ext = (uint32_t *)malloc(n_ext ? (size_t)n_ext * 4 : 4);
    if (!out->ext) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory for the extents of the GPU's stack");
        goto done;
    }
    /* Bitset extents become their ids: the push layout, which the host
     * encodes as tasks in whichever form it prefers. */
    for (uint64_t i = 0, e = 0; i < n; i++) {
        const uint32_t *src = x + eoff[i];
        if (ext_is_bits(out->size[i], bmin)) {
            const uint64_t *b = (const uint64_t *)src;
            uint32_t k = 0;
            for (uint32_t w = 0; w < ow; w++)
                for (uint64_t v = b[w]; v; v &= v - 1) {
                    if (k < out->size[i]) out->ext[e + k] = w * 64u + (uint32_t)__builtin_ctzll(v);
                    k++;
                }
            if (k != out->size[i]) {
                st = fd_fail(FD_ERR_INTERNAL, "the GPU's stack: node %llu holds %u objects, its size says %u",
                             (unsigned long long)i, k, out->size[i]);
                goto done;
            }
        } else {
            memcpy(out->ext + e, src, (size_t)out->size[i] * 4);
        }
        e += out->size[i];
    }
    out->n = n;
    out->n_ext = n_ext;
    g->top = g->etop = 0;
done:
    free(eoff);
    free(x);
    if (st != FD_OK) lattice_gpu_nodes_free(out);
    return st;
}

extern "C" void lattice_gpu_nodes_free(lattice_gpu_nodes *h)
{
    free(h->intents);
    free(h->y);
    free(h->size);
    free(h->ext);
    memset(h, 0, sizeof *h);
}

/* The kernels that keep intent words in registers come in widths of 1 to
 * 16 words: the narrowest that holds the whole intent, so that small
 * contexts pay neither registers nor occupancy for wide ones.  The pair
 * is chosen once, in lattice_gpu_create. */
template <uint32_t W> static void node_scan_w(lattice_gpu *g, uint64_t c0, uint32_t k)
{
    if (g->c.min_support >= 2)
        k_node_scan<W, true><<<warp_blocks(k), WARPS_PER_BLOCK * 32, 0, g->stream>>>(
            g->d, g->st, c0, k, g->U, g->cnt, g->ebound, g->nint, g->nx, g->jbot);
    else
        k_node_scan<W, false><<<warp_blocks(k), WARPS_PER_BLOCK * 32, 0, g->stream>>>(
            g->d, g->st, c0, k, g->U, g->cnt, g->ebound, g->nint, g->nx, g->jbot);
}

template <uint32_t W> static void closure_w(lattice_gpu *g, uint64_t c0, uint32_t P)
{
    k_closure<W>
        <<<warp_blocks(P), WARPS_PER_BLOCK * 32, 0, g->stream>>>(g->d, g->st, c0, P, g->pnode, g->pj, g->sg, g->ctr);
}

template <uint32_t W> static void pick_width(lattice_gpu *g)
{
    g->node_scan = node_scan_w<W>;
    g->closure = closure_w<W>;
}

static void pick_kernels(lattice_gpu *g, uint32_t aw)
{
    if (aw <= 1)
        pick_width<1>(g);
    else if (aw <= 2)
        pick_width<2>(g);
    else if (aw <= 4)
        pick_width<4>(g);
    else if (aw <= 8)
        pick_width<8>(g);
    else
        pick_width<16>(g);
}

extern "C" fd_status lattice_gpu_step(lattice_gpu *g, lattice_gpu_out *out)
{
    fd_status st = FD_OK;
    const uint32_t aw = g->c.aw;
    const int ext = g->c.with_extents;
    out->n = out->nint = out->next = 0;
    if (g->top == 0) return FD_OK;
    CK(cudaSetDevice(g->device));
    {
        const uint32_t k = (uint32_t)(g->top < g->kmax ? g->top : g->kmax);
        const uint64_t c0 = g->top - k;
        cudaStream_t s = g->stream;
        size_t tb;

        g->node_scan(g, c0, k);
        CK(cudaGetLastError());
        tb = g->scan_bytes;
        CK(cub::DeviceScan::ExclusiveSum(g->scan_tmp, tb, g->cnt, g->poff, (int)k, s));
        tb = g->scan_bytes;
        CK(cub::DeviceScan::ExclusiveSum(g->scan_tmp, tb, g->ebound, g->eb_off, (int)k, s));
        tb = g->scan_bytes;
        CK(cub::DeviceScan::ExclusiveSum(g->scan_tmp, tb, g->nint, g->ioff, (int)k, s));
        tb = g->scan_bytes;
        CK(cub::DeviceScan::ExclusiveSum(g->scan_tmp, tb, g->nx, g->xoff, (int)k, s));
        k_totals<<<1, 1, 0, s>>>(k, g->cnt, g->poff, g->ebound, g->eb_off, g->nint, g->ioff, g->nx, g->xoff,
                                 g->st.eoff + c0, g->d_tot);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(g->h_tot, g->d_tot, sizeof(totals), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        const totals T = *g->h_tot;
        if (T.ebound > EXT_MASK)
            return fd_fail(FD_ERR_NOMEM, "a chunk of %u nodes may produce %llu extent ids, more than 2^40", k,
                           (unsigned long long)T.ebound);

        if (T.pairs > g->pcap || !g->pnode) {
            uint64_t cap = g->pcap;
            FD_TRY(fd_cuda_grow((void **)&g->pnode, &cap, T.pairs, 4, "candidate pairs"));
            FD_TRY(fd_cuda_grow((void **)&g->pj, &g->pcap, T.pairs, 4, "candidate pairs"));
        }
        FD_TRY(nodes_reserve(g, &g->sg, T.pairs, T.ebound, 0, 0, "children"));
        FD_TRY(fd_cuda_grow((void **)&g->e_int, &g->e_int_cap, T.nint, 4, "emitted intents"));
        if (ext) FD_TRY(fd_cuda_grow((void **)&g->e_ext, &g->e_ext_cap, T.next, 4, "emitted extents"));
        FD_TRY(out_reserve(out, k, T.nint, T.next, ext));

        emitv ev = {g->e_supp, g->e_int, g->e_ext, g->e_int_end, g->e_ext_end};
        k_emit<<<warp_blocks(k), WARPS_PER_BLOCK * 32, 0, s>>>(g->d, g->st, c0, k, g->rank_int, g->rank_label, g->ioff,
                                                               ext ? g->xoff : NULL, ev);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(out->supp, g->e_supp, (size_t)k * 4, cudaMemcpyDeviceToHost, s));
        CK(cudaMemcpyAsync(out->int_end, g->e_int_end, (size_t)k * 8, cudaMemcpyDeviceToHost, s));
        if (T.nint) CK(cudaMemcpyAsync(out->int_ids, g->e_int, T.nint * 4, cudaMemcpyDeviceToHost, s));
        if (ext) {
            CK(cudaMemcpyAsync(out->ext_end, g->e_ext_end, (size_t)k * 8, cudaMemcpyDeviceToHost, s));
            if (T.next) CK(cudaMemcpyAsync(out->ext_ids, g->e_ext, T.next * 4, cudaMemcpyDeviceToHost, s));
        }

        CK(cudaMemsetAsync(g->ctr, 0, sizeof(unsigned long long), s));
        if (T.pairs) {
            k_pairs<<<warp_blocks(k), WARPS_PER_BLOCK * 32, 0, s>>>(aw, k, g->U, g->poff, g->jbot, g->pnode, g->pj);
            CK(cudaGetLastError());
            g->closure(g, c0, (uint32_t)T.pairs);
            CK(cudaGetLastError());
        }
        CK(cudaMemcpyAsync(g->h_ctr, g->ctr, NCTR * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        const uint64_t nchild = g->h_ctr[0] >> SLOT_SHIFT, echild = g->h_ctr[0] & EXT_MASK;
        g->stats.closures = g->h_ctr[1];
        g->stats.fails = g->h_ctr[2];
        g->stats.skipped_support = g->h_ctr[3];
        g->stats.by_columns = g->h_ctr[4];
        g->stats.steps++;

        /* The children replace the chunk on top of the stack. */
        FD_TRY(nodes_reserve(g, &g->st, c0 + nchild, T.e0 + echild, c0, T.e0, "the node stack"));
        if (nchild) {
            CK(cudaMemcpyAsync(g->st.intent + c0 * aw, g->sg.intent, nchild * aw * 8, cudaMemcpyDeviceToDevice, s));
            CK(cudaMemcpyAsync(g->st.y + c0, g->sg.y, nchild * 4, cudaMemcpyDeviceToDevice, s));
            CK(cudaMemcpyAsync(g->st.size + c0, g->sg.size, nchild * 4, cudaMemcpyDeviceToDevice, s));
            k_rebase<<<(unsigned)((nchild + 255) / 256 < 1024 ? (nchild + 255) / 256 : 1024), 256, 0, s>>>(
                g->st.eoff + c0, g->sg.eoff, nchild, T.e0);
            CK(cudaGetLastError());
            if (echild) CK(cudaMemcpyAsync(g->st.ext + T.e0, g->sg.ext, echild * 4, cudaMemcpyDeviceToDevice, s));
        }
        g->top = c0 + nchild;
        g->etop = T.e0 + echild;
        note_depth(g);
        out->n = k;
        out->nint = T.nint;
        out->next = ext ? T.next : 0;
    }
done:
    return st;
}
