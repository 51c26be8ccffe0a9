/* SPDX-License-Identifier: BSD-3-Clause */
/* All-pairs Spearman on the int8 tensor cores (see spearman_gpu.h and
 * docs/algorithms.md, "Spearman on the GPU").
 *
 * A block takes 128 rows and a strip of column tiles of 128 rows: its own
 * rows stay in shared memory, the column tiles stream through two
 * buffers (cp.async: the next loads while this one is computed), rows
 * padded by 16 bytes so that the fragment loads of a warp hit 32
 * different banks (for kp = 32 a warp loads its rows' fragments once a
 * strip and keeps them in registers).  A warp takes 32 of the rows
 * against 64 columns at a time (in blocks of 4 warps, both halves of a
 * tile's columns in turn; in blocks of 8, one each; k_threads; with the
 * histogram and the max screen 64 rows against one half, k_row_chunks),
 * in halves of 16 rows: a half's sums by mma.sync m16n8k32 (8 accumulators
 * of 16 x 8, 32 int32 registers a thread; kp / 32 steps, one for
 * n <= 32), then its epilogue on the registers: validity (both rows vary, j > i in the triangle), the
 * rho histogram in shared memory, the float screen, the selection in
 * double where the margin makes it certain, and a warp-aggregated append
 * of the pairs the host must see.  Nothing of the tile is written but
 * those pairs; the common path is 3 instructions a pair (with the
 * histogram 6 for the max screen, 8 for the band screen), with no
 * conversion instruction and no branch (docs/performance.md). */
#include "../cuda/check.cuh"
#include "spearman_gpu.h"
#include "spearman_gpu_rows.cuh"
#include "../common/clock.h"
#include "spearman_decide.h"
#include "spearman_hist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FULL 0xffffffffu
#define TILE SPEARMAN_GPU_TILE_ROWS
#define BINS SPEARMAN_HIST_BINS
#define HBINS (BINS + 2) /* the shared histogram's slots (hist_bits) */

struct dmat {
    const uint32_t *a; /* rows x kp bytes, as 32-bit words */
    const long long *sii;
    const float *inv;
};

struct kparams {
    dmat x, y;
    uint64_t i0, i1, j0, j1;
    int upper, mode, hist, emit;
    double q, x_lo, x_hi;
    /* --fdr's pass 1: each kept pair's x into xhist_out (xbins bins of
     * width 1 / xscale, spearman_decide_xbin), or xbins 0. */
    int xbins;
    double xscale;
    float xscale_f, xscale_k; /* xscale as float, and divided by 1000^2 for the histogram's u */
    unsigned long long *xhist_out;
    /* |rho| < pre (float, as tile.c computes rho) is a certain drop and
     * |rho| >= post a certain keep (spearman_decide.h; post is infinite
     * where the mode has no such bound, and where every pair past pre
     * goes to the host).  Only pairs in the band between them need a
     * closer look: those within half of mid, a slightly wider band whose
     * test is one subtraction. */
    float pre, post, mid, half;
    float pre_lo; /* MAX: pre lowered by 1e-6 of itself, for rho in another order of products */
    float pre_lo_k; /* MAX with the histogram: pre_lo for u = 1000 rho, another product (spearman_hist_u) */
    /* The band screen with the histogram: the same bounds for |u| (post_k
     * a certain keep; lo_k, no higher than mid_k - half_k, where the band
     * that needs a closer look starts; mid_k and half_k that band for
     * --fdr's pass 1), so that the screen takes |u| from the histogram's
     * product instead of a product of its own. */
    float post_k, mid_k, half_k, lo_k;
    /* --top-k: each row's own pre, by which the MAX screen divides the
     * row's 1/sqrt(S_ii), so that its one bound, pre_lo, is just under 1
     * for every row (padded to whole tiles; NULL otherwise). */
    const float *row_pre;
    uint32_t strip; /* column tiles per block */
    unsigned long long *cnt; /* pairs, kept for certain, records, half warp tiles (16 x 64 pairs) that took a closer look */
    /* --top-k: records per row tile (blockIdx.y), each tile's in its own
     * segment of cap records, so that k_topk_merge's block of a tile
     * reads only its own (cnt[2] then unused). */
    unsigned long long *tile_cnt;
    unsigned long long *hist_out;
    spearman_gpu_pair *rec;
    unsigned long long cap;
};

struct dside {
    uint32_t *a;
    long long *sii;
    float *inv;
    uint64_t rows;
};

struct spearman_gpu {
    int device;
    cudaStream_t stream;
    uint32_t kp, strip;
    int screen;   /* SPEARMAN_GPU_SCREEN_* */
    bool use_max; /* the next launch screens by the largest |rho| */
    dside x, y; /* y.a == NULL: pairs within x */
    unsigned long long *d_cnt, *h_cnt, *d_hist, *h_hist; /* 4 counters, then --top-k's per row tile */
    unsigned long long *d_xhist, *h_xhist; /* --fdr's pass 1 */
    uint64_t cap_xhist, cap_hxhist;
    uint64_t cap_cnt, cap_hcnt;
    float *d_pre; /* --top-k: the rows' pre */
    uint64_t cap_pre;
    spearman_gpu_pair *d_rec, *h_rec;
    uint64_t cap_d, cap_h;
    /* --top-k's lists (spearman_gpu_topk_reset): rows x k entries and a
     * count per row, on the device and pinned; the merge's scratch, an
     * index per record of d_rec */
    spearman_gpu_topk_ent *d_list, *h_list;
    uint32_t *d_nlist, *h_nlist, *d_idx;
    uint64_t cap_list, cap_hlist, cap_nlist, cap_hnlist, cap_idx;
    uint64_t topk_i0;
    uint32_t topk_rows, topk_k;
    int topk_same, topk_on;
    spearman_gpu_stats stats;
};

/* ---------------- kernel ---------------- */

/* --fdr's pass 1 counts the x bins of its kept pairs in shared memory
 * for the top XWIN bins (x just below the cutoff of p <= Q, where the
 * pairs of no correlation fall: at n = 30 some 85% of them), and in
 * global memory for the others.  A block's strip is XSTRIP times as long
 * there, so that adding its window to global memory at the end is a small
 * part of its work. */
#define XWIN 8192
#define XSTRIP 2
/* Kept pairs of a warp's half whose bin float does not settle, queued for
 * the bin in double after the screen (about 4 of its 1,024 pairs at n =
 * 30, --fdr 0.05); past XQCAP the closer look takes the half instead. */
#define XQCAP 64
/* A thread's certain keeps of a half, staged by the screen for binning
 * after it (about 1.6 of its 32 pairs at n = 30, --fdr 0.05); past xscap
 * in any lane the closer look bins the warp's half instead.  Binning in
 * the screen's unrolled pair slots, divergent in each, took about 90
 * instructions a slot (cuobjdump -sass) and made --fdr's pass 1 eleven
 * times as slow as --count-only; staged, it takes three times as long
 * (spearman-gpu-history.txt).  8 for kp = 128, whose blocks of 8 warps
 * need 118 KB of shared memory with 16, so one block a multiprocessor;
 * with 8, 110 KB and two, as without --fdr: pass 1 at 1,000,000 rows of
 * 100 values in 0.65 of the time (spearman-gpu-ab.csv). */
template <int KP> __host__ __device__ constexpr int xscap() { return KP <= 96 ? 16 : 8; }

/* Threads a block: see k_row_chunks. */
template <int KP> __host__ __device__ constexpr uint32_t k_threads() { return KP <= 96 ? 128 : 256; }

/* Shared memory of one block, in 32-bit words: the block's rows (A), two
 * buffers of column rows (B: the next tile loads while this one is
 * computed), S_ii and 1/sqrt(S_ii) of each, the histogram, two counters
 * and, with XB, the window of x bins, each warp's queue (2 words an
 * entry) and each warp's staged keeps (xscap words a lane, lane-major so
 * that a warp's lanes write distinct banks).  With kp = 32, XB's three
 * blocks fit in a multiprocessor's 228 KB. */
template <int KP, bool XB = false> struct smem_layout {
    static constexpr int LD = KP / 4 + 4; /* row stride: conflict-free fragment loads */
    static constexpr int NW = (int)k_threads<KP>() / 32;
    static constexpr int A = 0, B = A + TILE * LD, SIIA = B + 2 * TILE * LD, SIIB = SIIA + 2 * TILE,
                         INVA = SIIB + 4 * TILE, INVB = INVA + TILE, HIST = INVB + 2 * TILE,
                         TALLY = HIST + HBINS + (HBINS & 1), XH = TALLY + 4, XQ = XH + (XB ? XWIN : 0),
                         XS = XQ + (XB ? NW * 2 * XQCAP : 0), WORDS = XS + (XB ? NW * 32 * xscap<KP>() : 0);
    static constexpr size_t BYTES = WORDS * 4;
};
/* a multiprocessor's 228 KB, 1 KB of it reserved for each block */
static_assert(3 * (smem_layout<32, true>::BYTES + 1024) <= 228 * 1024, "three --fdr blocks a multiprocessor, kp = 32");
static_assert(2 * (smem_layout<128, true>::BYTES + 1024) <= 228 * 1024, "two --fdr blocks a multiprocessor, kp = 128");

__device__ __forceinline__ void cp_async(void *smem, const void *gmem, int bytes)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    if (bytes == 16) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
    else if (bytes == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(gmem));
    else asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/* TILE rows of m from row r0 into shared memory, with their S_ii and
 * 1/sqrt(S_ii), without waiting (cp.async). */
template <int KP, uint32_t NT>
__device__ __forceinline__ void load_rows(uint32_t *rows, long long *sii, float *inv, const dmat &m, uint64_t r0,
                                          uint32_t t)
{
    constexpr int V = KP / 16, LD = smem_layout<KP>::LD; /* 16-byte vectors per row */
    const uint4 *g = (const uint4 *)m.a + r0 * V;
    for (uint32_t v = t; v < TILE * V; v += NT)
        cp_async(rows + (v / V) * LD + (v % V) * 4, g + v, 16);
    if (t < TILE) {
        cp_async(sii + t, m.sii + r0 + t, 8);
        cp_async(inv + t, m.inv + r0 + t, 4);
    }
    cp_commit();
}

/* A row fragment of m16n8k32 from the block's rows: rows row and row + 8,
 * 16 bytes each, from word ks. */
template <int LD>
__device__ __forceinline__ void load_a(uint32_t (&a)[4], const uint32_t *sA, uint32_t row, int ks, uint32_t tid)
{
    const uint32_t *r = sA + row * LD + ks;
    a[0] = r[tid];
    a[1] = r[8 * LD + tid];
    a[2] = r[4 + tid];
    a[3] = r[8 * LD + 4 + tid];
}

__device__ __forceinline__ void mma_s8(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Every lane calls this for each of its pairs in the same order: one
 * atomic per warp and pair slot.  TOPK: into the block's row tile's
 * segment. */
template <bool TOPK>
__device__ __forceinline__ void append(const kparams &P, bool want, uint32_t i, uint32_t j, int32_t s, uint32_t keep,
                                       uint32_t lane)
{
    const unsigned m = __ballot_sync(FULL, want);
    if (!m) return;
    const int leader = __ffs((int)m) - 1;
    unsigned long long base = 0;
    unsigned long long *const ctr = TOPK ? &P.tile_cnt[blockIdx.y] : &P.cnt[2];
    if ((int)lane == leader) base = atomicAdd(ctr, (unsigned long long)__popc(m));
    base = __shfl_sync(FULL, base, leader);
    if (want) {
        const unsigned long long pos = base + (unsigned long long)__popc(m & ((1u << lane) - 1u));
        spearman_gpu_pair *const rec = TOPK ? P.rec + (uint64_t)blockIdx.y * P.cap : P.rec;
        if (pos < P.cap) rec[pos] = spearman_gpu_pair{i, j, s, keep};
    }
}

/* The accumulators start at the bits of the float 1.5 2^23 (ACC0) rather
 * than 0: the tensor cores then leave 1.5 2^23 + S as a float in each,
 * with S in its low mantissa bits (exact for |S| < 2^22, which n <= 128
 * guarantees: |S| <= n (n - 1)^2).  S as a float is one subtraction away,
 * and S k_i of the histogram one fused multiply-add (spearman_hist.h);
 * no I2F (a quarter-rate instruction) and no integer add. */
#define ACC0 0x4B400000
#define ACC0F 12582912.0f

/* The bin, floor(u) + 1000 clamped to [0, BINS) for u = 1000 rho
 * (spearman_hist_u), as a slot of the shared histogram: floor(u) + 1001 in [0,
 * BINS + 1], by adding 1.5 2^23 + 1000 rounding down, which leaves
 * floor(u) + 1000 in the low bits of the float (ulp 1 there): the slot is
 * those bits - 0x4B400000 + 1.  Slot 0 (u < -1000 by rounding) is folded
 * into bin 0 and slot BINS + 1 (u >= 1000) into the last, as the clamp
 * does. */
__device__ __forceinline__ uint32_t hist_bits(float u)
{
    return (uint32_t)__float_as_int(__fadd_rd(u, 12582912.0f + (float)(BINS / 2)));
}

/* One shared-memory increment, at a byte address of the shared window,
 * when on: a predicated red (no branch, no return value). */
__device__ __forceinline__ void shared_inc_if(uint32_t addr, bool on)
{
    asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %1, 0;\n @p red.shared.add.u32 [%0], 1;\n}\n" ::"r"(addr),
                 "r"((uint32_t)on));
}

/* A kept pair of --fdr's pass 1 into x bin xb: the block's window in
 * shared memory, or global memory below it. */
__device__ __forceinline__ void count_x(const kparams &P, unsigned int *xwin, int xw0, int xb)
{
    if (xb >= xw0) atomicAdd(&xwin[xb - xw0], 1u);
    else atomicAdd(&P.xhist_out[xb], 1ull);
}

/* --fdr's pass 1 (XB): the block's window, the warp's queue of kept
 * pairs for the bin in double, qn entries (may pass XQCAP: then only the
 * count is kept), and where the thread's staged keeps of the half lie
 * (their count may pass xscap: then only the count is right). */
struct xbin_ctx {
    unsigned int *xwin;
    int xw0;
    uint2 *q; /* (row | column << 7, S) */
    uint32_t qn;
    /* the staged keeps: shared byte addresses of the lane's next entry,
     * of its entry xscap - 1 (derivable from s0, but kept: computing it in
     * stage_keep changed ptxas's schedule of the tested kernel), and of its
     * first (entry e at 128 e from it: the lanes' entries interleave, so a
     * warp's stores hit distinct banks); an entry is S << 5 | pair slot */
    uint32_t sa, slast, s0;
};

/* The bin of a certain keep from float (spearman_decide_xbin_f), as the
 * screen and the closer look both form it: from |u| with the histogram,
 * else from |rho|. */
template <bool HIST> __device__ __forceinline__ int xbin_float(const kparams &P, float a)
{
    return HIST ? spearman_decide_xbin_f(a, P.xscale_f, P.xscale_k, P.xbins, 5e-7f)
                : spearman_decide_xbin_f(a, P.xscale_f, P.xscale_f, P.xbins, 3e-7f);
}

/* A kept pair whose bin float did not settle, into the warp's queue;
 * every lane calls this for the same slots. */
__device__ __forceinline__ void xqueue_push(xbin_ctx &X, bool need, uint32_t rl, uint32_t cl, int32_t s, uint32_t lane)
{
    const unsigned m = __ballot_sync(FULL, need);
    if (!m) return;
    const uint32_t pos = X.qn + (uint32_t)__popc(m & ((1u << lane) - 1u));
    if (need && pos < XQCAP) X.q[pos] = make_uint2(rl | cl << 7, (uint32_t)s);
    X.qn += (uint32_t)__popc(m);
}

/* The block row of a thread's row slot r (0 .. 2 NH - 1) in a warp of
 * NH halves of 16 rows: rows gid and gid + 8 of half r / 2. */
template <int NH> __device__ __forceinline__ uint32_t warp_row(uint32_t wm, int r, uint32_t gid)
{
    return wm * (16 * NH) + (r >> 1) * 16 + gid + 8 * (r & 1);
}

/* A thread's 64 pairs of one tile, in registers: acc[mi][ni][e] is pair
 * slot r 16 + k with r = 2 mi + (e >> 1) (row gid + 8 (e >> 1) of the
 * 16 x 8 fragment) and k = 2 ni + (e & 1) (column 2 tid + (e & 1)).  Each
 * holds ACC0 + S. */
/* From an accumulator raw (ACC0 + S): S as a float (exact), and S k_i
 * rounded once, (ACC0F + S) k_i + (-ACC0F k_i), exact but for the one
 * rounding since -ACC0F k_i is a float (spearman_hist.h); hk = hist_k(k_i).
 * With acc_rho, the one definition of what the screens, the closer look
 * and --fdr's staged keeps test, so that they agree bit for bit. */
__device__ __forceinline__ float acc_f(int32_t raw) { return __fsub_rn(__int_as_float(raw), ACC0F); }
__device__ __forceinline__ float2 hist_k(float k_i) { return make_float2(k_i, -ACC0F * k_i); } /* exact: 22 bits */
__device__ __forceinline__ float acc_sk(int32_t raw, float2 hk) { return __fmaf_rn(__int_as_float(raw), hk.x, hk.y); }
/* |rho| in float from S, 1/sqrt(S_ii) and 1/sqrt(S_jj), rounded twice */
__device__ __forceinline__ float acc_rho(int32_t raw, float inv_i, float inv_j)
{
    return fabsf(__fmul_rn(__fmul_rn(acc_f(raw), inv_i), inv_j));
}

template <int NH> struct tile_pairs {
    int (&acc)[NH][8][4];
    __device__ __forceinline__ int32_t raw(int r, int k) const { return acc[r >> 1][k >> 1][2 * (r & 1) + (k & 1)]; }
    __device__ __forceinline__ int32_t s(int r, int k) const { return raw(r, k) - ACC0; }
    __device__ __forceinline__ float f(int r, int k) const { return acc_f(raw(r, k)); }
    __device__ __forceinline__ float sk(int r, int k, float2 hk) const { return acc_sk(raw(r, k), hk); }
};

/* The screen's part of --fdr's pass 1 (XB) for one pair slot (r - 2 h)
 * 16 + k of a half, whose accumulator is raw (ACC0 + S): a certain keep is
 * staged for xbin_staged to bin after the screen, by a predicated store
 * (6 instructions a slot, cuobjdump -sass).  Past xscap the last entry is written over;
 * the count tells the half to take the closer look, which ignores them.
 * Stores and loads of the entries are both volatile asm, which keeps
 * their order. */
__device__ __forceinline__ void stage_keep(xbin_ctx &X, bool kept, int32_t raw, uint32_t slot)
{
    const uint32_t w = ((uint32_t)raw << 5) + (slot - ((uint32_t)ACC0 << 5)); /* S << 5 | slot, one LEA */
    asm volatile("{\n .reg .pred p;\n setp.ne.u32 p, %2, 0;\n @p st.shared.u32 [%0], %1;\n}\n" ::"r"(min(X.sa, X.slast)),
                 "r"(w), "r"((uint32_t)kept));
    X.sa += kept ? 128u : 0u;
}

/* Bins the thread's keeps of half h that the screen staged (stage_keep),
 * a lane each in turn: from float where its margin settles the bin,
 * counted in *ns; the others into the warp's queue.  |u| (HIST) or |rho|
 * is formed again from S as the screen formed it, so the same keeps bin
 * the same.  Returns false, binning nothing, where a lane staged more
 * than CAP (xscap): the closer look then bins the half's keeps. */
template <bool HIST, int NH, int CAP>
__device__ __forceinline__ bool xbin_staged(const kparams &P, xbin_ctx &X, int h, const float (&inv_i)[2 * NH],
                                            const float (&k_i)[2 * NH], const float *invB, uint32_t wm,
                                            uint32_t wn, uint32_t gid, uint32_t tid, uint32_t lane, uint32_t *ns)
{
    const uint32_t nk = (X.sa - X.s0) >> 7, emax = __reduce_max_sync(FULL, nk);
    X.sa = X.s0;
    if (emax > CAP) return false;
    for (uint32_t e = 0; e < emax; e++) {
        const bool have = e < nk;
        uint32_t w = 0;
        if (have) asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(w) : "r"(X.s0 + 128 * e));
        const uint32_t rr = (w >> 4) & 1u, k = w & 15u;
        const int32_t s = (int32_t)w >> 5;
        const uint32_t rl = warp_row<NH>(wm, 2 * h + (int)rr, gid), cl = wn * 64 + (k >> 1) * 8 + tid * 2 + (k & 1);
        float a;
        if (HIST) {
            const float kf = rr ? k_i[2 * h + 1] : k_i[2 * h];
            a = fabsf(__fmul_rn(acc_sk(s + ACC0, hist_k(kf)), invB[cl]));
        } else {
            a = acc_rho(s + ACC0, rr ? inv_i[2 * h + 1] : inv_i[2 * h], invB[cl]);
        }
        const int xb = have ? xbin_float<HIST>(P, a) : -1;
        if (xb >= 0) {
            count_x(P, X.xwin, X.xw0, xb);
            (*ns)++;
        }
        xqueue_push(X, have && xb < 0, rl, cl, s, lane);
    }
    return true;
}

/* The common path of the epilogue: counts, bins and screens a thread's
 * 32 pairs of half h of the warp's rows (rows r = 2 h and 2 h + 1 of
 * tile_pairs) with a few instructions each.  ALL: every pair of the thread
 * is valid (the usual case; no per-pair test).  Two screens:
 *  - BAND (MAX false): counts the pairs kept for certain (|rho| >= post)
 *    in *ns and returns in *score the smallest distance of |rho| to mid,
 *    the middle of the band that needs a closer look; for thresholds that
 *    keep many pairs.
 *  - MAX: returns the largest |rho| in *score (with HIST, the largest |u|
 *    = 1000 |rho| of the histogram's product, which saves the product of
 *    rho) and counts nothing: any pair at or past pre sends the warp to
 *    the exact pass, which then also counts the certain keeps; for
 *    selective thresholds, where that is rare, it is the cheaper of the
 *    two.
 * With HIST both screens test |u|, which the histogram forms anyway,
 * instead of a float rho of their own: MAX against pre_lo_k, BAND
 * against post_k and lo_k, counting the pairs past each, and returning
 * in *score -infinity where the counts differ (XB: against mid_k and
 * half_k as without HIST); the closer look takes a certain keep by the
 * same test, so that the counts agree.
 * Counts valid pairs in *np. */
template <bool ALL, bool HIST, bool MAX, bool XB, int NH>
__device__ __forceinline__ void screen(const kparams &P, const tile_pairs<NH> &T, int h,
                                       const float (&inv_i)[2 * NH], const float (&k_i)[2 * NH],
                                       const float (&invj)[16], uint32_t rowbits, uint32_t b0, uint32_t b1,
                                       bool diag, int dj, uint32_t wm, uint32_t wn, uint32_t gid, uint32_t tid,
                                       uint32_t lane, uint32_t hoff, xbin_ctx &X, uint32_t *np, uint32_t *ns,
                                       float *score)
{
    uint32_t n = 0, sure = 0;
    uint32_t cband = 0, csure = 0, mk[4]; /* the band screen with the histogram */
    float sc = MAX ? 0.0f : INFINITY;
#pragma unroll
    for (int r = 2 * h; r < 2 * h + 2; r++) {
        const uint32_t rl = warp_row<NH>(wm, r, gid);
        float rmax = 0.0f; /* MAX without HIST: max |S / sqrt(S_jj)| of the row, times 1/sqrt(S_ii) after */
        float2 hk = make_float2(0.0f, 0.0f);
        if (HIST) hk = hist_k(k_i[r]);
#pragma unroll
        for (int k = 0; k < 16; k++) {
            bool v = true;
            if (!ALL) {
                const uint32_t lane_of_col = (k >> 1) * 4 + tid; /* the lane that checked this column */
                const int cl = (int)(wn * 64 + (k >> 1) * 8 + tid * 2 + (k & 1));
                v = ((rowbits >> r) & 1u) && ((((k & 1) ? b1 : b0) >> lane_of_col) & 1u) &&
                    !(diag && cl + dj <= (int)rl);
                n += v;
            }
            if (MAX && !HIST && ALL) {
                rmax = fmaxf(rmax, fabsf(__fmul_rn(T.f(r, k), invj[k])));
                continue;
            }
            float u = 0.0f;
            if (HIST) u = __fmul_rn(T.sk(r, k, hk), invj[k]); /* spearman_hist_u */
            if (MAX && HIST) {
                if (ALL || v) sc = fmaxf(sc, fabsf(u));
            } else if (HIST && !MAX && XB) {
                const float a = fabsf(u);
                if (ALL || v) sc = fminf(sc, fabsf(__fsub_rn(a, P.mid_k)));
                stage_keep(X, (ALL || v) && a >= P.post_k, T.raw(r, k), (r - 2 * h) * 16 + k);
            } else if (HIST && !MAX) {
                /* Two counts: pairs at or past the band's low end and pairs
                 * kept for certain, which differ where a pair is in the
                 * band.  Each pair is 1.0f or 0.0f by one compare (FSET),
                 * whose bits two pairs at a time add as integers (IADD3):
                 * 3 instructions a pair where the distance to mid and a
                 * float count took 4 (4% less time for --count-only,
                 * spearman-gpu-ab.csv).  A count c sums to 127 c 2^23 mod
                 * 2^32, one to one for c < 512. */
                const float a = fabsf(u);
                mk[k & 1] = __float_as_uint((ALL || v) && a >= P.lo_k ? 1.0f : 0.0f);
                mk[2 + (k & 1)] = __float_as_uint((ALL || v) && a >= P.post_k ? 1.0f : 0.0f);
                if (k & 1) {
                    cband += mk[0] + mk[1];
                    csure += mk[2] + mk[3];
                }
            } else {
                const float a = acc_rho(T.raw(r, k), inv_i[r], invj[k]);
                if (MAX) {
                    if (ALL || v) sc = fmaxf(sc, a);
                } else {
                    if (ALL || v) sc = fminf(sc, fabsf(__fsub_rn(a, P.mid)));
                    if (XB) stage_keep(X, (ALL || v) && a >= P.post, T.raw(r, k), (r - 2 * h) * 16 + k);
                    else
                        sure += (ALL || v) && a >= P.post;
                }
            }
            if (HIST) {
                const uint32_t addr = hist_bits(u) * 4u + hoff;
                if (ALL) asm volatile("red.shared.add.u32 [%0], 1;\n" ::"r"(addr));
                else shared_inc_if(addr, v);
            }
        }
        if (MAX && !HIST && ALL) sc = fmaxf(sc, __fmul_rn(rmax, inv_i[r]));
    }
    *np += ALL ? 32 : n;
    if (HIST && !MAX && !XB) {
        *ns = ((csure >> 23) * 383u) & 511u; /* 383 = 1 / 127 mod 512 */
        *score = cband != csure ? -INFINITY : INFINITY; /* as the closer look tests it: score <= half_k */
    } else {
        *ns = sure;
        *score = sc;
    }
}

/* k_threads: 4 warps, four blocks a multiprocessor, for kp <= 96;
 * 8 warps, two blocks, for kp = 128, whose four would not fit in shared
 * memory.  Each warp takes 32 rows of the block's 128; with 4 warps, a
 * warp takes both halves of 64 columns of each column tile in turn (but
 * see k_row_chunks).
 * In smaller blocks fewer warps wait for each other at a tile's barrier,
 * and four blocks a multiprocessor can be at different steps (products,
 * screens, histogram increments) more than two can: at 2,000,000 rows on
 * one H200, --count-only --pvalue 1e-12 took 5% less time than with
 * blocks of 8 warps, --no-histogram 11% less (bench/gpu-spearman.sh,
 * bench/results/spearman-gpu.csv against the eighth kernel's rows in
 * spearman-gpu-history.txt). */
/* With the histogram and the max screen, in blocks of 4 warps, a warp
 * takes 64 rows (two chunks of 32) against 64 columns rather than 32 rows
 * against both halves of the tile: it loads each column's fragments and
 * 1/sqrt(S_jj) once for twice the pairs, and those loads share the
 * shared-memory unit with the increments that bound the kernel.  The
 * rows' fragments and factors take 168 registers a thread, so three blocks
 * an SM rather than four (with four, the spills cost more than the loads
 * saved); 5% less time at 2,000,000 rows.  Not for the band screen:
 * its four halves unrolled took 69% more time (most likely its code
 * outgrew the instruction cache), and looping over its two chunks cost
 * more than the loads saved (5% more).  Nor without the histogram, where
 * the loads are not what bounds the kernel (6% more).  One-off A/Bs in
 * bench/results/spearman-gpu-history.txt. */
template <int KP, bool HIST, bool MAX> __host__ __device__ constexpr int k_row_chunks()
{
    return KP <= 96 && HIST && MAX ? 2 : 1;
}
/* XB: at kp = 32 three blocks fit beside their windows and queues (68 KB
 * each). */
template <int KP, bool HIST, bool MAX, bool XB> __host__ __device__ constexpr int k_min_blocks()
{
    return k_row_chunks<KP, HIST, MAX>() == 2 || (XB && KP <= 96) ? 3 : 512 / k_threads<KP>();
}

/* The thread's rows of the block (rows r of warp_row): 1/sqrt(S_ii) of
 * each (four, or eight with k_row_chunks 2) and, with the histogram, its
 * factor k_i, and which are real rows of the launch that vary (rowbits;
 * 1/sqrt(S_ii) = 0: constant).  The factors stay in registers for the
 * strip: loaded from shared memory for each row of each half, they queued
 * behind the last row's histogram increments (the load of a row came
 * after the increments of the row before), and the row's products waited
 * on them.  --top-k: a row whose list is not full yet (pre 0) needs every
 * pair, so its warp takes the closer look at every tile (the return
 * value, the same on the warp); its scaled factor is 0, which is how the
 * closer look knows it. */
template <int NH, bool HIST, bool TOPK>
__device__ __forceinline__ bool block_rows(const kparams &P, const float *invA, uint64_t ti, uint32_t wm, uint32_t gid,
                                           float (&inv_i)[2 * NH], float (&k_i)[2 * NH], uint32_t *rowbits)
{
#pragma unroll
    for (int r = 0; r < 2 * NH; r++) {
        const uint32_t rl = warp_row<NH>(wm, r, gid);
        inv_i[r] = invA[rl];
        k_i[r] = HIST ? spearman_hist_factor(inv_i[r]) : 0.0f;
        *rowbits |= (uint32_t)(ti + rl < P.i1 && inv_i[r] != 0.0f) << r;
    }
    bool force = false;
    if (TOPK) {
#pragma unroll
        for (int r = 0; r < 2 * NH; r++) {
            const uint32_t rl = warp_row<NH>(wm, r, gid);
            const float pre = (*rowbits >> r) & 1u ? P.row_pre[(uint64_t)blockIdx.y * TILE + rl] : 1.0f;
            force |= pre <= 0.0f;
            inv_i[r] = pre > 0.0f ? __fdiv_rn(inv_i[r], pre) : 0.0f;
        }
        force = __any_sync(FULL, force);
    }
    return force;
}

/* XB: a half's keeps into the FDR histogram: the staged ones binned from
 * float, then the queued ones, a lane each, in double (or to the host
 * undecided where even double cannot tell).  Past xscap (*xall) the
 * closer look bins all of the half's keeps, past XQCAP (*xover) the
 * queued ones. */
template <bool HIST, int NH, int KP>
__device__ __forceinline__ void xbin_half(const kparams &P, xbin_ctx &X, int h, const float (&inv_i)[2 * NH],
                                          const float (&k_i)[2 * NH], const float *invB, const long long *siiA,
                                          const long long *siiB, uint64_t ti, uint64_t tj, uint32_t wm, uint32_t wn,
                                          uint32_t gid, uint32_t tid, uint32_t lane, unsigned int *xwin, int xw0,
                                          uint32_t *ns, uint32_t *nsel, bool *xover, bool *xall)
{
    *xall = !xbin_staged<HIST, NH, xscap<KP>()>(P, X, h, inv_i, k_i, invB, wm, wn, gid, tid, lane, ns);
    *xover = *xall || X.qn > XQCAP;
    __syncwarp();
    for (uint32_t base = 0; !*xover && base < X.qn; base += 32) {
        const bool have = base + lane < X.qn;
        const uint2 e = have ? X.q[base + lane] : make_uint2(0u, 0u);
        const uint32_t rl = e.x & 127u, cl = e.x >> 7;
        const int32_t s = (int32_t)e.y;
        const int xb = have ? spearman_decide_xbin(s, siiA[rl], siiB[cl], P.xscale, P.xbins) : -1;
        if (xb >= 0) {
            count_x(P, xwin, xw0, xb);
            (*nsel)++;
        }
        append<false>(P, have && (xb < 0 || P.emit), (uint32_t)(ti + rl), (uint32_t)(tj + cl), s,
                      (uint32_t)(xb >= 0), lane);
    }
    __syncwarp(); /* the next half writes the queue again */
    X.qn = 0;
}

/* A block takes one tile of 128 rows (blockIdx.y) and a strip of P.strip
 * column tiles (blockIdx.x): the rows, the histogram and the counters stay
 * in shared memory across the strip, and the next column tile loads while
 * the current one is computed.  TOPK: --top-k.  XB: --fdr's pass 1, which
 * bins the x of each kept pair (band screen only: its certain keeps in
 * the screen, in float where float settles the bin, the others in double
 * from a queue).
 * Its later steps (the XB queue, the closer look, the block's flush) stay
 * inline: moved into inlined functions of their own, each changed the
 * machine code of 8 to 21 of the 28 instantiations, and one of them began
 * to spill (bench/gpu-sass-ab.sh), where block_rows moved out with every
 * kernel's code byte for byte the same; such a split lands with a GPU A/B
 * (bench/gpu-spearman-ab.sh) or not at all. */
template <int KP, bool HIST, bool MAX, bool TOPK, bool XB>
__global__ void __launch_bounds__(k_threads<KP>(), k_min_blocks<KP, HIST, MAX, XB>()) k_pairs(kparams P)
{
    constexpr uint32_t NT = k_threads<KP>(), NW = NT / 32;
    using L = smem_layout<KP, XB>;
    constexpr int KW = KP / 4, LD = L::LD;
    extern __shared__ __align__(16) uint32_t sm[];
    uint32_t *const sA = sm + L::A;
    long long *const siiA = (long long *)(sm + L::SIIA);
    float *const invA = (float *)(sm + L::INVA);
    unsigned int *const hist = sm + L::HIST;
    unsigned long long *const tally = (unsigned long long *)(sm + L::TALLY);
    unsigned int *const xwin = sm + L::XH;
    const int xw0 = P.xbins > XWIN ? P.xbins - XWIN : 0; /* the window's first bin */
    const uint32_t xs0 = (uint32_t)__cvta_generic_to_shared(sm + L::XS + (threadIdx.x >> 5) * 32 * xscap<KP>()) +
                         4 * (threadIdx.x & 31u);
    xbin_ctx X{xwin, xw0, (uint2 *)(sm + L::XQ) + (threadIdx.x >> 5) * XQCAP, 0u,
               xs0, xs0 + 128 * (xscap<KP>() - 1), xs0};

    const uint64_t ti = P.i0 + (uint64_t)blockIdx.y * TILE;
    const uint64_t ntiles = (P.j1 - P.j0 + TILE - 1) / TILE;
    uint64_t c = (uint64_t)blockIdx.x * P.strip, cend = c + P.strip;
    if (cend > ntiles) cend = ntiles;
    /* Tiles whose pairs all have j <= i are skipped. */
    if (P.upper && P.j0 + cend * TILE <= ti + 1) return;
    while (P.upper && P.j0 + (c + 1) * TILE <= ti + 1) c++;
    const uint32_t t = threadIdx.x;

    load_rows<KP, NT>(sA, siiA, invA, P.x, ti, t);
    load_rows<KP, NT>(sm + L::B, (long long *)(sm + L::SIIB), (float *)(sm + L::INVB), P.y, P.j0 + c * TILE, t);
    if (HIST)
        for (uint32_t b = t; b < HBINS; b += NT)
            hist[b] = 0;
    if (XB)
        for (uint32_t b = t; b < XWIN; b += NT)
            xwin[b] = 0;
    if (t < 2) tally[t] = 0;

    const uint32_t warp = t >> 5, lane = t & 31u, gid = lane >> 2, tid = lane & 3u;
    /* The warp's rows and columns of the tile: NH halves of 16 rows of
     * row group wm against CC chunks of 64 columns from wn0 CC. */
    constexpr int NH = 2 * k_row_chunks<KP, HIST, MAX>(), NR = 2 * NH, RG = 8 / NH, CC = 16 / (NW * NH);
    const uint32_t wm = warp % RG, wn0 = warp / RG;
    /* The byte address of the histogram slot of float bits f (hist_bits)
     * is f 4 + hoff, wrapping around in 32 bits. */
    const uint32_t hoff = (uint32_t)__cvta_generic_to_shared(hist) - (0x4B400000u - 1u) * 4u;

    cp_wait<1>();
    __syncthreads();
    float inv_i[NR], k_i[NR];
    uint32_t rowbits = 0;
    const bool force = block_rows<NH, HIST, TOPK>(P, invA, ti, wm, gid, inv_i, k_i, &rowbits);
    uint32_t npairs = 0, nsel = 0;
    /* With one step of k (kp = 32) the warp's row fragments, the same for
     * every column tile, stay in registers for the whole strip (AF; 8
     * registers).  Loaded again for each half, they queued behind the
     * last half's histogram increments in the shared-memory unit, and the
     * products waited on them (Nsight Compute: short-scoreboard stalls
     * the largest share, spearman-gpu-ncu.txt); kept, --no-histogram took
     * 7% less time and the histogram 1% less (the tenth kernel,
     * spearman-gpu-history.txt). */
    constexpr bool AF = KW == 8;
    uint32_t af[NH][4];
#pragma unroll
    for (int h = 0; h < NH; h++)
        if (AF) load_a<LD>(af[h], sA, warp_row<NH>(wm, 2 * h, gid), 0, tid);

    for (uint32_t buf = 0; c < cend; c++, buf ^= 1) {
        const uint64_t tj = P.j0 + c * TILE;
        uint32_t *const sB = sm + L::B + buf * TILE * LD;
        const long long *const siiB = (const long long *)(sm + L::SIIB) + buf * TILE;
        const float *const invB = (const float *)(sm + L::INVB) + buf * TILE;
        if (c + 1 < cend) {
            load_rows<KP, NT>(sm + L::B + (buf ^ 1) * TILE * LD, (long long *)(sm + L::SIIB) + (buf ^ 1) * TILE,
                              (float *)(sm + L::INVB) + (buf ^ 1) * TILE, P.y, tj + TILE, t);
            cp_wait<1>();
        } else {
            cp_wait<0>();
        }
        __syncthreads();

#pragma unroll 1
        for (int cc = 0; cc < CC; cc++) {
            const uint32_t wn = wn0 * CC + cc; /* the warp's 64 columns of the tile */
            /* Which of the warp's 64 columns are real and vary: lane L checks
             * columns 2 L and 2 L + 1, which are thread (L / 4, L % 4)'s
             * columns k = 2 (L / 4) and 2 (L / 4) + 1 of every thread with tid
             * = L % 4. */
            float invj[16];
#pragma unroll
            for (int k = 0; k < 16; k++)
                invj[k] = invB[wn * 64 + (k >> 1) * 8 + tid * 2 + (k & 1)];
            const uint32_t cw = wn * 64 + 2 * lane;
            const uint32_t b0 = __ballot_sync(FULL, invB[cw] != 0.0f && tj + cw < P.j1);
            const uint32_t b1 = __ballot_sync(FULL, invB[cw + 1] != 0.0f && tj + cw + 1 < P.j1);
            const bool diag = P.upper && tj < ti + TILE;
            const int dj = diag ? (int)((long long)tj - (long long)ti) : 0;

            /* The warp's pairs in halves of 16 rows x 64 columns, each from its
             * products to its last append before the next: 32 sums live at a
             * time leave registers for the epilogue's chains of several pairs
             * at once.  With one step of k (kp = 32), the column fragments stay
             * in registers for the halves after the first. */
            uint32_t bk[8][2];
#pragma unroll
            for (int h = 0; h < NH; h++) {
                int acc[NH][8][4];
#pragma unroll
                for (int ni = 0; ni < 8; ni++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        acc[h][ni][e] = ACC0;
#pragma unroll
                for (int ks = 0; ks < KW; ks += 8) {
                    uint32_t a[4];
                    if (AF) {
#pragma unroll
                        for (int q = 0; q < 4; q++)
                            a[q] = af[h][q];
                    } else {
                        load_a<LD>(a, sA, warp_row<NH>(wm, 2 * h, gid), ks, tid);
                    }
#pragma unroll
                    for (int ni = 0; ni < 8; ni++) {
                        if (h == 0 || KW > 8) {
                            const uint32_t *cb = sB + (wn * 64 + ni * 8 + gid) * LD + ks;
                            bk[ni][0] = cb[tid];
                            bk[ni][1] = cb[4 + tid];
                        }
                        mma_s8(acc[h][ni], a, bk[ni][0], bk[ni][1]);
                    }
                }
                const tile_pairs<NH> T{acc};
                uint32_t ns;
                float score;
                if (((rowbits >> (2 * h)) & 3u) == 3u && (b0 & b1) == FULL && !diag)
                    screen<true, HIST, MAX, XB>(P, T, h, inv_i, k_i, invj, rowbits, b0, b1, diag, dj, wm, wn, gid,
                                                tid, lane, hoff, X, &npairs, &ns, &score);
                else
                    screen<false, HIST, MAX, XB>(P, T, h, inv_i, k_i, invj, rowbits, b0, b1, diag, dj, wm, wn, gid,
                                                 tid, lane, hoff, X, &npairs, &ns, &score);

                /* XB: the staged keeps binned from float, then the queued
                 * ones, a lane each, in double (or to the host undecided
                 * where even double cannot tell).  Past xscap (xall) the
                 * closer look bins all of the half's keeps, past XQCAP
                 * (xover) the queued ones. */
                bool xover = false, xall = false;
                if (XB) {
                    xall = !xbin_staged<HIST, NH, xscap<KP>()>(P, X, h, inv_i, k_i, invB, wm, wn, gid, tid, lane,
                                                                &ns);
                    xover = xall || X.qn > XQCAP;
                    __syncwarp();
                    for (uint32_t base = 0; !xover && base < X.qn; base += 32) {
                        const bool have = base + lane < X.qn;
                        const uint2 e = have ? X.q[base + lane] : make_uint2(0u, 0u);
                        const uint32_t rl = e.x & 127u, cl = e.x >> 7;
                        const int32_t s = (int32_t)e.y;
                        const int xb = have ? spearman_decide_xbin(s, siiA[rl], siiB[cl], P.xscale, P.xbins) : -1;
                        if (xb >= 0) {
                            count_x(P, xwin, xw0, xb);
                            nsel++;
                        }
                        append<false>(P, have && (xb < 0 || P.emit), (uint32_t)(ti + rl), (uint32_t)(tj + cl), s,
                                      (uint32_t)(xb >= 0), lane);
                    }
                    __syncwarp(); /* the next half writes the queue again */
                    X.qn = 0;
                }
                nsel += ns;

                /* The few warps with a pair that needs a closer look (in the
                 * band between the certain drop and the certain keep; for MAX,
                 * any pair at or past pre), or with kept pairs to write, go over
                 * the half's pairs again. */
                const bool closer = (TOPK && force) || xover ||
                                    (MAX ? score >= (HIST ? P.pre_lo_k : P.pre_lo)
                                         : score <= (HIST ? P.half_k : P.half));
                if (__any_sync(FULL, closer || (P.emit && ns != 0))) {
                    if (lane == 0) atomicAdd(&P.cnt[3], 1ull);
#pragma unroll
                    for (int r = 2 * h; r < 2 * h + 2; r++) {
                        const uint32_t rl = warp_row<NH>(wm, r, gid);
                        const long long sii = siiA[rl];
                        const float2 hkr = hist_k(k_i[r]);
                        /* with the histogram, from shared memory: the screen does
                         * not need it, and this look is rare */
                        const float ir = HIST ? invA[rl] : inv_i[r];
#pragma unroll
                        for (int k = 0; k < 16; k++) {
                            const uint32_t cl = wn * 64 + (k >> 1) * 8 + tid * 2 + (k & 1);
                            const bool v = ((rowbits >> r) & 1u) &&
                                           ((((k & 1) ? b1 : b0) >> ((k >> 1) * 4 + tid)) & 1u) &&
                                           !(diag && (int)cl + dj <= (int)rl);
                            const int32_t s = T.s(r, k);
                            const float a = acc_rho(T.raw(r, k), ir, invj[k]);
                            /* a certain keep as the screen counted it (the band
                             * screen with the histogram: by |u|) */
                            const float au = HIST && !MAX ? fabsf(__fmul_rn(T.sk(r, k, hkr), invj[k])) : a;
                            const bool certain = HIST && !MAX ? au >= P.post_k : a >= P.post;
                            bool want = false;
                            uint32_t keep = 0;
                            if (TOPK) {
                                want = v && (inv_i[r] == 0.0f || a >= P.pre_lo); /* a is |rho| / pre here */
                            } else if (v && certain) {
                                /* XB: the staged pass binned it from float,
                                 * or queued it for the queue's pass; past
                                 * xscap this look bins it from float, past
                                 * XQCAP in double (or sends it to the host
                                 * undecided) */
                                bool mine = true;
                                int xb = 0;
                                const int xf = XB ? xbin_float<HIST>(P, au) : 0;
                                if (XB && xf >= 0 && xall) {
                                    count_x(P, xwin, xw0, xf);
                                    nsel++;
                                } else if (XB && xf < 0) {
                                    mine = xover; /* else the queue's pass took it */
                                    if (mine) xb = spearman_decide_xbin(s, sii, siiB[cl], P.xscale, P.xbins);
                                    if (mine && xb >= 0) {
                                        count_x(P, xwin, xw0, xb);
                                        nsel++;
                                    }
                                }
                                if (mine && xb >= 0) {
                                    if (MAX) nsel++; /* not counted by the screen */
                                    keep = 1;
                                    want = P.emit != 0;
                                } else if (mine) {
                                    want = true;
                                }
                            } else if (v && a >= P.pre) {
                                const int d = spearman_decide(P.mode, P.q, P.x_lo, P.x_hi, s, sii, siiB[cl]);
                                const int xb = XB && d == SPEARMAN_KEEP
                                                   ? spearman_decide_xbin(s, sii, siiB[cl], P.xscale, P.xbins)
                                                   : 0;
                                if (d == SPEARMAN_KEEP && xb >= 0) {
                                    if (XB) count_x(P, xwin, xw0, xb);
                                    nsel++;
                                    keep = 1;
                                    want = P.emit != 0;
                                } else if (d != SPEARMAN_DROP) {
                                    want = true;
                                }
                            }
                            append<TOPK>(P, want, (uint32_t)(ti + rl), (uint32_t)(tj + cl), s,
                                         TOPK ? (uint32_t)siiB[cl] : keep, lane);
                        }
                    }
                }
            }
        }
        __syncthreads(); /* this buffer is the one the next tile but one loads into */
    }

    npairs = __reduce_add_sync(FULL, npairs);
    nsel = __reduce_add_sync(FULL, nsel);
    if (lane == 0) {
        atomicAdd(&tally[0], (unsigned long long)npairs);
        atomicAdd(&tally[1], (unsigned long long)nsel);
    }
    __syncthreads();
    if (t < 2 && tally[t]) atomicAdd(&P.cnt[t], tally[t]);
    if (HIST)
        for (uint32_t b = t; b < BINS; b += NT) {
            unsigned int n = hist[b + 1];
            if (b == 0) n += hist[0];
            if (b == BINS - 1) n += hist[BINS + 1];
            if (n) atomicAdd(&P.hist_out[b], (unsigned long long)n);
        }
    if (XB)
        for (uint32_t b = t; b < XWIN && xw0 + (int)b < P.xbins; b += NT)
            if (xwin[b]) atomicAdd(&P.xhist_out[xw0 + b], (unsigned long long)xwin[b]);
}

/* ---------------- host side ---------------- */

#define CK(call) CUDA_CHECK_GOTO(call, st, done)

/* --top-k's order of two partners of one row: |S_a| / sqrt(S_ja) against
 * |S_b| / sqrt(S_jb), exactly, then smaller j (tile.c's stronger, whose
 * products need 128 bits for any n; for n <= 128, S^2 S_jj < 2^59). */
__device__ __forceinline__ bool topk_stronger(const spearman_gpu_topk_ent &a, const spearman_gpu_topk_ent &b)
{
    const unsigned long long l = (unsigned long long)((long long)a.s * a.s) * b.sjj,
                             r = (unsigned long long)((long long)b.s * b.s) * a.sjj;
    return l != r ? l > r : a.j < b.j;
}

/* One row tile's pairs of a --top-k launch into its rows' lists, a
 * thread a row: the tile's segment sorted by row (a count and a scatter
 * of indices into idx), then each thread sifts its row's pairs through
 * its min-heap of up to k entries (weakest on top, as tile.c's), and sets
 * the row's pre for the next launch from the weakest once the list is
 * full (tile.c's thr, 1e-5 of it lower: the kernel's float screen must let
 * through too much, never too little).  Which pairs arrive, and in what
 * order, does not matter: the k strongest of a row's partners under a
 * total order are one set. */
__global__ void __launch_bounds__(TILE) k_topk_merge(const spearman_gpu_pair *rec, uint64_t cap,
                                                     const unsigned long long *tile_cnt, uint64_t i0, uint32_t rows,
                                                     uint32_t k, int same, const long long *sii, uint32_t *idx,
                                                     spearman_gpu_topk_ent *list, uint32_t *nlist, float *pre)
{
    __shared__ uint32_t cnt[TILE], off[TILE + 1];
    const uint32_t b = blockIdx.x, t = threadIdx.x, r = b * TILE + t;
    const spearman_gpu_pair *seg = rec + (uint64_t)b * cap;
    uint32_t *sidx = idx + (uint64_t)b * cap;
    const uint64_t m = tile_cnt[b], first = i0 + (uint64_t)b * TILE; /* m <= cap: the host ran the launch again */
    cnt[t] = 0;
    __syncthreads();
    for (uint64_t q = t; q < m; q += TILE) atomicAdd(&cnt[seg[q].i - first], 1u);
    __syncthreads();
    if (t == 0) {
        uint32_t sum = 0;
        for (uint32_t u = 0; u < TILE; u++) {
            off[u] = sum;
            sum += cnt[u];
        }
        off[TILE] = sum;
    }
    __syncthreads();
    cnt[t] = off[t];
    __syncthreads();
    for (uint64_t q = t; q < m; q += TILE) sidx[atomicAdd(&cnt[seg[q].i - first], 1u)] = (uint32_t)q;
    __syncthreads();
    if (r >= rows) return;
    spearman_gpu_topk_ent *h = list + (uint64_t)r * k;
    uint32_t n = nlist[r];
    for (uint32_t e = off[t]; e < off[t + 1]; e++) {
        const spearman_gpu_pair p = seg[sidx[e]];
        if (same && p.i == p.j) continue;
        const spearman_gpu_topk_ent x = {p.j, p.s, p.sjj};
        if (n < k) {
            uint32_t c = n++;
            h[c] = x;
            while (c > 0 && topk_stronger(h[(c - 1) / 2], h[c])) {
                const spearman_gpu_topk_ent tmp = h[c];
                h[c] = h[(c - 1) / 2];
                h[(c - 1) / 2] = tmp;
                c = (c - 1) / 2;
            }
        } else if (topk_stronger(x, h[0])) {
            h[0] = x;
            for (uint32_t i = 0;;) {
                const uint32_t c = 2 * i + 1;
                uint32_t w = i;
                if (c < n && topk_stronger(h[w], h[c])) w = c;
                if (c + 1 < n && topk_stronger(h[w], h[c + 1])) w = c + 1;
                if (w == i) break;
                const spearman_gpu_topk_ent tmp = h[i];
                h[i] = h[w];
                h[w] = tmp;
                i = w;
            }
        }
    }
    nlist[r] = n;
    if (n == k) {
        const float thr = (float)fabs((double)h[0].s / sqrt((double)sii[first + t] * (double)h[0].sjj));
        pre[r] = thr * (1 - 1e-5f);
    }
}

template <int KP, bool HIST, bool MAX, bool TOPK, bool XB>
static cudaError_t launch_kp(spearman_gpu *g, dim3 grid, const kparams &P)
{
    k_pairs<KP, HIST, MAX, TOPK, XB><<<grid, k_threads<KP>(), smem_layout<KP, XB>::BYTES, g->stream>>>(P);
    return cudaGetLastError();
}

/* --top-k is its own kernel (max screen, no histogram): its per-row work
 * in the others pushed them past their registers.  So is --fdr's pass 1
 * (XB, band screen): binning in the others' closer look, unrolled for 32
 * pair slots, cost the band screen 7% (--count-only at 2,000,000 rows,
 * most likely the instruction cache). */
template <bool HIST, bool MAX, bool TOPK = false, bool XB = false>
static cudaError_t launch_hm(spearman_gpu *g, dim3 grid, const kparams &P)
{
    switch (g->kp) {
    case 32: return launch_kp<32, HIST, MAX, TOPK, XB>(g, grid, P);
    case 64: return launch_kp<64, HIST, MAX, TOPK, XB>(g, grid, P);
    case 96: return launch_kp<96, HIST, MAX, TOPK, XB>(g, grid, P);
    default: return launch_kp<128, HIST, MAX, TOPK, XB>(g, grid, P);
    }
}

static cudaError_t launch(spearman_gpu *g, dim3 grid, const kparams &P, bool max)
{
    if (P.row_pre) return launch_hm<false, true, true>(g, grid, P);
    if (P.xbins)
        return P.hist ? launch_hm<true, false, false, true>(g, grid, P) : launch_hm<false, false, false, true>(g, grid, P);
    if (P.hist) return max ? launch_hm<true, true>(g, grid, P) : launch_hm<true, false>(g, grid, P);
    return max ? launch_hm<false, true>(g, grid, P) : launch_hm<false, false>(g, grid, P);
}

/* Over 48 KB of shared memory (kp = 128, XB) needs the opt-in. */
template <int KP, bool HIST, bool MAX, bool TOPK = false, bool XB = false> static cudaError_t allow_smem1()
{
    return cudaFuncSetAttribute(k_pairs<KP, HIST, MAX, TOPK, XB>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                (int)smem_layout<KP, XB>::BYTES);
}

template <int KP> static cudaError_t allow_smem()
{
    cudaError_t rc = allow_smem1<KP, true, true>();
    if (rc == cudaSuccess) rc = allow_smem1<KP, true, false>();
    if (rc == cudaSuccess) rc = allow_smem1<KP, false, true>();
    if (rc == cudaSuccess) rc = allow_smem1<KP, false, false>();
    if (rc == cudaSuccess) rc = allow_smem1<KP, false, true, true>();
    if (rc == cudaSuccess) rc = allow_smem1<KP, true, false, false, true>();
    if (rc == cudaSuccess) rc = allow_smem1<KP, false, false, false, true>();
    return rc;
}

static cudaError_t allow_smem_kp(uint32_t kp)
{
    switch (kp) {
    case 32: return allow_smem<32>();
    case 64: return allow_smem<64>();
    case 96: return allow_smem<96>();
    default: return allow_smem<128>();
    }
}

static void side_free(dside *s)
{
    cudaFree(s->a);
    cudaFree(s->sii);
    cudaFree(s->inv);
    memset(s, 0, sizeof *s);
}

static fd_status side_upload(spearman_gpu *g, dside *s, const spearman_gpu_mat *m)
{
    s->rows = m->rows;
    return gpu_rows_upload(g->stream, g->kp, TILE, m, (void **)&s->a, &s->sii, &s->inv);
}

extern "C" void spearman_gpu_destroy(spearman_gpu **pg)
{
    spearman_gpu *g = *pg;
    if (!g) return;
    cudaSetDevice(g->device);
    if (g->stream) cudaStreamSynchronize(g->stream);
    side_free(&g->x);
    side_free(&g->y);
    cudaFree(g->d_cnt);
    cudaFree(g->d_list);
    cudaFree(g->d_nlist);
    cudaFree(g->d_idx);
    if (g->h_list) cudaFreeHost(g->h_list);
    if (g->h_nlist) cudaFreeHost(g->h_nlist);
    cudaFree(g->d_hist);
    cudaFree(g->d_xhist);
    cudaFree(g->d_pre);
    cudaFree(g->d_rec);
    if (g->h_cnt) cudaFreeHost(g->h_cnt);
    if (g->h_hist) cudaFreeHost(g->h_hist);
    if (g->h_xhist) cudaFreeHost(g->h_xhist);
    if (g->h_rec) cudaFreeHost(g->h_rec);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
    *pg = NULL;
}

extern "C" fd_status spearman_gpu_create(spearman_gpu **out, int device, uint32_t kp, const spearman_gpu_tuning *tu,
                                         const spearman_gpu_mat *x, const spearman_gpu_mat *y)
{
    fd_status st = FD_OK;
    *out = NULL;
    if (kp == 0 || kp % 32 || kp > 128)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_create: %u bytes per row, expected 32, 64, 96 or 128", kp);
    if (tu->strip == 0 || tu->records == 0)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_create: a strip of 0 column tiles or room for no pairs");
    if (x->rows >= (1ull << 32) || (y && y->rows >= (1ull << 32)))
        return fd_fail(FD_ERR_USAGE, "the GPU kernel takes fewer than 2^32 rows per input");
    spearman_gpu *g = (spearman_gpu *)calloc(1, sizeof *g);
    if (!g) return fd_fail(FD_ERR_NOMEM, "out of memory");
    g->device = device;
    g->kp = kp;
    g->strip = tu->strip;
    g->screen = tu->screen;
    g->use_max = tu->screen == SPEARMAN_GPU_SCREEN_MAX;
    const double t0 = fd_now();
    CK(cudaSetDevice(device));
    CK(allow_smem_kp(kp));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    {
        const double t1 = fd_now();
        FD_TRY_GOTO(side_upload(g, &g->x, x), st, done);
        if (y) FD_TRY_GOTO(side_upload(g, &g->y, y), st, done);
        g->stats.upload_seconds = fd_now() - t1;
    }
    FD_TRY_GOTO(fd_cuda_grow((void **)&g->d_cnt, &g->cap_cnt, 4, 8, "counters"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->d_hist, BINS * 8, "the histogram"), st, done);
    FD_TRY_GOTO(fd_cuda_host_grow((void **)&g->h_cnt, &g->cap_hcnt, 4, 8), st, done);
    CK(cudaHostAlloc((void **)&g->h_hist, BINS * 8, cudaHostAllocDefault));
    g->cap_d = tu->records;
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->d_rec, g->cap_d * sizeof(spearman_gpu_pair), "selected pairs"), st, done);
    g->stats.setup_seconds = fd_now() - t0;
    *out = g;
    return FD_OK;
done:
    spearman_gpu_destroy(&g);
    return st;
}

/* Column tiles a block takes: --fdr's pass 1 (XB) takes XSTRIP times
 * the configured strip. */
static uint32_t strip_of(const spearman_gpu *g, bool fdr) { return fdr ? g->strip * XSTRIP : g->strip; }

extern "C" void spearman_gpu_get_stats(const spearman_gpu *g, spearman_gpu_stats *s)
{
    *s = g->stats;
    s->strip = strip_of(g, false);
    s->strip_fdr = strip_of(g, true);
}

/* Which screen the next launch uses, from what this one saw (auto).  The
 * max screen sends half a warp's tile to the closer look whenever one of
 * its 1,024 pairs reaches pre: worth it while that is rare.  After a band
 * launch, kept plus undecided pairs bound the pairs at or past pre; after
 * a max launch, the halves that took the closer look are counted.  The
 * results are the same either way; only the time differs. */
extern "C" void spearman_gpu_get_rows(const spearman_gpu *g, int y, spearman_gpu_rows *r)
{
    const dside &S = y && g->y.a ? g->y : g->x;
    *r = (spearman_gpu_rows){(const int8_t *)S.a, (const int64_t *)S.sii, S.rows, g->kp, g->device, g->stream};
}

static void choose_screen(spearman_gpu *g)
{
    if (g->screen != SPEARMAN_GPU_SCREEN_AUTO) return;
    const double tiles = (double)g->h_cnt[0] / (16.0 * 64.0) + 1.0; /* half warp tiles, as cnt[3] counts */
    if (g->use_max) g->use_max = (double)g->h_cnt[3] / tiles < 0.1;
    else g->use_max = (double)(g->h_cnt[1] + g->h_cnt[2]) / tiles < 0.02;
}

/* The float bounds of the kernel's common path.  The band [pre, post) is
 * widened by 1e-6 of itself at both ends and half by 1e-6 more, so that
 * the one-subtraction test |a - mid| <= half, rounded in float, catches
 * every pair that is in it. */
static void screen_bounds(const spearman_gpu_sel *sel, kparams *P)
{
    if (sel->mode == 'k') {
        /* --top-k: |rho| / pre in float, rounded a few times (under 1e-6
         * of it): every pair at or past its row's pre reaches 1 - 1e-6.
         * The other bounds are unused (no band, no histogram). */
        P->pre = 0.0f;
        P->post = INFINITY;
        P->mid = P->half = 0.0f;
        P->pre_lo = (float)(1 - 1e-6);
        P->pre_lo_k = P->pre_lo;
        P->post_k = INFINITY;
        P->mid_k = P->half_k = 0.0f;
        P->lo_k = INFINITY;
        return;
    }
    /* The band screens' bands lie around the keep's boundary sqrt(q),
     * SPEARMAN_BAND = 2e-6 of it each way: seven times the error of the
     * float rho (3e-7) and four times that of u = 1000 rho (5e-7,
     * spearman_hist.h).  At or past post (post_k) a pair is a keep for
     * certain, below the band a certain drop; one in between sends its
     * half to the closer look, which decides it exactly.  The bands were
     * the CPU prefilter's 1e-5 each way (pre, spearman_sel_init), five
     * times as wide, and so ten times as many halves took the closer look
     * at p <= 0.05: 10% of --count-only's time (spearman-gpu-history.txt).
     * The slack, 2e-7 in rho and 1e-4 in u, covers rounding the bounds to
     * float (ulp 6e-8 below 1, 6e-5 below 1000).  Without post (q too small
     * for the margin, or a selection by x) the band runs from pre up: every
     * pair at or past pre takes the closer look.  The max screen takes its
     * half there at pre_lo (pre_lo_k in u). */
    const int sure = spearman_post_usable(sel->mode, sel->q);
    const double edge = sqrt(sel->q), lo = (double)sel->pre * (1 - 1e-6);
    P->pre = sel->pre;
    P->pre_lo = (float)lo;
    P->pre_lo_k = (float)(lo * (BINS / 2) * (1 - 1e-6));
    const double post = sure ? (double)spearman_post(sel->q) : INFINITY;
    const double blo = sure ? edge * (1 - SPEARMAN_BAND) : lo, bhi = sure ? post * (1 + 1e-6) : 2.0;
    P->post = (float)post;
    P->mid = (float)((blo + bhi) / 2);
    P->half = (float)((bhi - blo) / 2 + 2e-7);
    const double post_k = post * (BINS / 2), hi_k = bhi * (BINS / 2);
    const double lo_k = (sure ? blo : lo * (1 - 1e-6)) * (BINS / 2); /* as pre_lo_k without post */
    P->post_k = (float)post_k;
    P->mid_k = (float)((lo_k + hi_k) / 2);
    P->half_k = (float)((hi_k - lo_k) / 2 + 1e-4);
    P->lo_k = (float)(lo_k - 1e-4); /* as low as mid_k - half_k */
}

extern "C" fd_status spearman_gpu_topk_reset(spearman_gpu *g, uint64_t i0, uint32_t rows, uint32_t k, int same)
{
    fd_status st = FD_OK;
    g->topk_on = 0;
    const uint64_t padded = (rows + TILE - 1) / TILE * TILE;
    CK(cudaSetDevice(g->device));
    FD_TRY(fd_cuda_grow((void **)&g->d_list, &g->cap_list, (uint64_t)rows * k, sizeof(spearman_gpu_topk_ent),
                        "the --top-k lists (a smaller K)"));
    FD_TRY(fd_cuda_grow((void **)&g->d_nlist, &g->cap_nlist, rows, sizeof(uint32_t), "the --top-k lists"));
    FD_TRY(fd_cuda_grow((void **)&g->d_pre, &g->cap_pre, padded, sizeof(float), "the rows' thresholds"));
    /* no entries, and pre 0: every pair of a row passes until its list is full */
    CK(cudaMemsetAsync(g->d_nlist, 0, rows * sizeof(uint32_t), g->stream));
    CK(cudaMemsetAsync(g->d_pre, 0, padded * sizeof(float), g->stream));
    g->topk_i0 = i0;
    g->topk_rows = rows;
    g->topk_k = k;
    g->topk_same = same;
    g->topk_on = 1;
done:
    return st;
}

extern "C" fd_status spearman_gpu_topk_lists(spearman_gpu *g, const uint32_t **n, const spearman_gpu_topk_ent **ent)
{
    fd_status st = FD_OK;
    *n = NULL;
    *ent = NULL;
    if (!g->topk_on) return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_topk_lists without spearman_gpu_topk_reset");
    const uint64_t rows = g->topk_rows, all = rows * g->topk_k;
    CK(cudaSetDevice(g->device));
    FD_TRY(fd_cuda_host_grow((void **)&g->h_nlist, &g->cap_hnlist, rows, sizeof(uint32_t)));
    FD_TRY(fd_cuda_host_grow((void **)&g->h_list, &g->cap_hlist, all, sizeof(spearman_gpu_topk_ent)));
    CK(cudaMemcpyAsync(g->h_nlist, g->d_nlist, rows * sizeof(uint32_t), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemcpyAsync(g->h_list, g->d_list, all * sizeof(spearman_gpu_topk_ent), cudaMemcpyDeviceToHost,
                       g->stream));
    CK(cudaStreamSynchronize(g->stream));
    *n = g->h_nlist;
    *ent = g->h_list;
done:
    return st;
}

/* The kernel's parameters for rows [i0, i1) against [j0, j1) of Y. */
static fd_status rect_params(spearman_gpu *g, const dside &Y, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                             int upper, const spearman_gpu_sel *sel, uint32_t strip, kparams *P)
{
    P->x = dmat{g->x.a, g->x.sii, g->x.inv};
    P->y = dmat{Y.a, Y.sii, Y.inv};
    P->i0 = i0;
    P->i1 = i1;
    P->j0 = j0;
    P->j1 = j1;
    P->upper = upper;
    P->mode = sel->mode;
    P->hist = sel->hist;
    P->emit = sel->emit;
    P->xbins = (int)sel->xbins;
    P->xscale = sel->xscale;
    P->xscale_f = (float)sel->xscale;
    P->xscale_k = (float)(sel->xscale * 1e-6);
    P->xhist_out = NULL;
    if (sel->xbins) {
        FD_TRY(fd_cuda_grow((void **)&g->d_xhist, &g->cap_xhist, sel->xbins, 8, "the FDR histogram"));
        FD_TRY(fd_cuda_host_grow((void **)&g->h_xhist, &g->cap_hxhist, sel->xbins, 8));
        P->xhist_out = g->d_xhist;
    }
    P->q = sel->q;
    P->x_lo = sel->x_lo;
    P->x_hi = sel->x_hi;
    screen_bounds(sel, P);
    P->strip = strip;
    P->cnt = g->d_cnt;
    P->hist_out = g->d_hist;
    P->row_pre = NULL;
    P->tile_cnt = NULL;
    return FD_OK;
}

/* Launches until the device's buffer held every pair for the host (it
 * grows, or with more pairs than the caller keeps, P->emit goes off and
 * only the undecided pairs come back), each run starting its counts over.
 * tiles: --top-k's row tiles, each with its own segment of the buffer
 * (counters 4 + b), else 0.  *nrec: the pairs in the buffer. */
static fd_status launch_fitting(spearman_gpu *g, dim3 grid, kparams *P, const spearman_gpu_sel *sel, uint64_t tiles,
                                bool use_max, spearman_gpu_out *out, uint64_t *nrec)
{
    fd_status st = FD_OK;
    const uint64_t ncnt = 4 + tiles;
    for (;;) {
        P->rec = g->d_rec;
        P->cap = tiles ? g->cap_d / tiles : g->cap_d;
        CK(cudaMemsetAsync(g->d_cnt, 0, ncnt * 8, g->stream));
        if (sel->hist) CK(cudaMemsetAsync(g->d_hist, 0, BINS * 8, g->stream));
        if (sel->xbins) CK(cudaMemsetAsync(g->d_xhist, 0, sel->xbins * 8, g->stream));
        CK(launch(g, grid, *P, use_max));
        CK(cudaMemcpyAsync(g->h_cnt, g->d_cnt, ncnt * 8, cudaMemcpyDeviceToHost, g->stream));
        CK(cudaStreamSynchronize(g->stream));
        g->stats.launches++;
        g->stats.launches_max += use_max;
        g->stats.launches_fdr += sel->xbins != 0;
        g->stats.closer += g->h_cnt[3];
        if (tiles) {
            uint64_t most = 0;
            *nrec = 0;
            for (uint64_t b = 0; b < tiles; b++) {
                *nrec += g->h_cnt[4 + b];
                if (g->h_cnt[4 + b] > most) most = g->h_cnt[4 + b];
            }
            if (most <= P->cap) break;
            FD_TRY(fd_cuda_grow((void **)&g->d_rec, &g->cap_d, most * tiles, sizeof(spearman_gpu_pair),
                                "selected pairs"));
            g->stats.reruns++;
            continue;
        }
        *nrec = g->h_cnt[2];
        if (*nrec <= g->cap_d) break;
        if (P->emit && sel->emit_cap && g->h_cnt[2] > sel->emit_cap) {
            /* More pairs than the caller keeps: the launch runs
             * again and returns the undecided pairs only. */
            P->emit = 0;
            out->emit_dropped = 1;
            g->stats.reruns++;
            continue;
        }
        /* More pairs for the host than the buffer holds: grow it and
         * run the launch again (its counts start over). */
        FD_TRY(fd_cuda_grow((void **)&g->d_rec, &g->cap_d, *nrec, sizeof(spearman_gpu_pair), "selected pairs"));
        g->stats.reruns++;
    }
done:
    return st;
}

/* After the launch: --top-k's pairs into the rows' lists on the device
 * (the next launch's screen reads the thresholds this leaves), else the
 * pairs to the host; the histograms to the host. */
static fd_status rect_results(spearman_gpu *g, const kparams &P, const spearman_gpu_sel *sel, uint64_t tiles,
                              uint64_t i0, uint64_t nrec, spearman_gpu_out *out)
{
    fd_status st = FD_OK;
    if (tiles && nrec) {
        if (P.cap > UINT32_MAX)
            return fd_fail(FD_ERR_INTERNAL, "--top-k: %llu pairs of one row tile passed the screen",
                           (unsigned long long)P.cap);
        FD_TRY(fd_cuda_grow((void **)&g->d_idx, &g->cap_idx, P.cap * tiles, sizeof(uint32_t),
                            "the --top-k merge's index"));
        k_topk_merge<<<(unsigned)tiles, TILE, 0, g->stream>>>(g->d_rec, P.cap, P.tile_cnt, i0, g->topk_rows,
                                                               g->topk_k, g->topk_same, g->x.sii, g->d_idx, g->d_list,
                                                               g->d_nlist, g->d_pre);
        CK(cudaGetLastError());
    } else if (!tiles && nrec) {
        FD_TRY(fd_cuda_host_grow((void **)&g->h_rec, &g->cap_h, nrec, sizeof(spearman_gpu_pair)));
        CK(cudaMemcpyAsync(g->h_rec, g->d_rec, nrec * sizeof(spearman_gpu_pair), cudaMemcpyDeviceToHost,
                           g->stream));
    }
    if (sel->hist) CK(cudaMemcpyAsync(g->h_hist, g->d_hist, BINS * 8, cudaMemcpyDeviceToHost, g->stream));
    /* selected counts the binned pairs: none, none to copy */
    if (sel->xbins && g->h_cnt[1])
        CK(cudaMemcpyAsync(g->h_xhist, g->d_xhist, sel->xbins * 8, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    out->pairs = g->h_cnt[0];
    out->selected = g->h_cnt[1];
    out->rec = g->h_rec;
    out->nrec = nrec;
    if (sel->hist) out->hist = g->h_hist;
    if (sel->xbins && g->h_cnt[1]) out->xhist = g->h_xhist;
done:
    return st;
}

extern "C" fd_status spearman_gpu_rect(spearman_gpu *g, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                                       int upper, const spearman_gpu_sel *sel, spearman_gpu_out *out)
{
    fd_status st = FD_OK;
    const dside &Y = g->y.a ? g->y : g->x;
    out->pairs = out->selected = out->nrec = 0;
    out->emit_dropped = 0;
    out->rec = g->h_rec;
    out->hist = NULL;
    out->xhist = NULL;
    if (i1 > g->x.rows) i1 = g->x.rows;
    if (j1 > Y.rows) j1 = Y.rows;
    if (i0 >= i1 || j0 >= j1) return FD_OK;
    const uint32_t strip = strip_of(g, sel->xbins != 0);
    const uint64_t gy = (i1 - i0 + TILE - 1) / TILE, gx = ((j1 - j0 + TILE - 1) / TILE + strip - 1) / strip;
    if (gy > 65535 || gx > 0x7fffffffull)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_rect: %llu x %llu rows is too large for one launch",
                       (unsigned long long)(i1 - i0), (unsigned long long)(j1 - j0));
    CK(cudaSetDevice(g->device));
    {
        const double t0 = fd_now();
        kparams P;
        FD_TRY(rect_params(g, Y, i0, i1, j0, j1, upper, sel, strip, &P));
        /* --top-k: the records of each row tile in a segment of their own */
        const uint64_t tiles = sel->mode == 'k' ? gy : 0;
        if (tiles) {
            if (sel->hist || upper || !g->topk_on || i0 != g->topk_i0 || i1 - i0 != g->topk_rows)
                return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_rect: --top-k takes the rows of the last "
                                                "spearman_gpu_topk_reset, no histogram, no triangle");
            P.row_pre = g->d_pre; /* spearman_gpu_topk_reset's, then k_topk_merge's */
            FD_TRY(fd_cuda_grow((void **)&g->d_cnt, &g->cap_cnt, 4 + tiles, 8, "counters"));
            FD_TRY(fd_cuda_host_grow((void **)&g->h_cnt, &g->cap_hcnt, 4 + tiles, 8));
            P.cnt = g->d_cnt;
            P.tile_cnt = g->d_cnt + 4;
        }
        /* --top-k thresholds differ per row: only the max screen takes
         * them.  --fdr's pass 1 bins its certain keeps in the band screen. */
        const bool use_max = P.row_pre || (!P.xbins && g->use_max);
        uint64_t nrec = 0;
        FD_TRY(launch_fitting(g, dim3((unsigned)gx, (unsigned)gy), &P, sel, tiles, use_max, out, &nrec));
        if (!P.row_pre && !P.xbins) choose_screen(g);
        FD_TRY(rect_results(g, P, sel, tiles, i0, nrec, out));
        g->stats.kernel_seconds += fd_now() - t0;
    }
done:
    return st;
}
