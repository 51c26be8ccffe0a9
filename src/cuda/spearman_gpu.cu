/* All-pairs Spearman on the int8 tensor cores (see spearman_gpu.h and
 * docs/algorithms.md, "Spearman on the GPU").
 *
 * A block computes a 128 x 128 tile of pairs: both blocks of rows go to
 * shared memory (128 rows x kp bytes each, rows padded by 16 bytes so
 * that the fragment loads of a warp hit 32 different banks), then each of
 * the 8 warps computes 32 x 64 sums with mma.sync m16n8k32 (2 x 8
 * accumulators of 16 x 8, 64 int32 registers a thread; kp / 32 steps, one
 * for n <= 32).  The epilogue works on the registers: validity (both rows
 * vary, j > i in the triangle), the rho histogram in shared memory, the
 * float prefilter, the selection in double where the margin makes it
 * certain, and a warp-aggregated append of the pairs the host must see.
 * Nothing of the tile is written but those pairs. */
#include "check.cuh"
#include "spearman_gpu.h"
#include "../common/clock.h"
#include "../spearman/spearman_decide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FULL 0xffffffffu
#define TILE 128
#define THREADS 256
#define BINS SPEARMAN_GPU_HIST_BINS

struct dmat {
    const uint32_t *a; /* rows x kp bytes, as 32-bit words */
    const long long *sii;
    const float *root, *inv;
};

struct kparams {
    dmat x, y;
    uint64_t i0, i1, j0, j1;
    int upper, mode, hist, emit, host_all;
    double q, x_lo, x_hi;
    float pre;
    /* sure: |S| >= post sqrt(S_ii) sqrt(S_jj) in float is a certain keep
     * (spearman_decide.h), so only the thin band between pre and post needs
     * spearman_decide; 0 where the mode has no such bound, and where every
     * pair past pre goes to the host. */
    int sure;
    float post;
    unsigned long long *cnt; /* pairs, kept for certain, records */
    unsigned long long *hist_out;
    spearman_gpu_pair *rec;
    unsigned long long cap;
};

struct dside {
    uint32_t *a;
    long long *sii;
    float *root, *inv;
    uint64_t rows;
};

struct spearman_gpu {
    int device;
    cudaStream_t stream;
    uint32_t kp;
    dside x, y; /* y.a == NULL: pairs within x */
    unsigned long long *d_cnt, *h_cnt, *d_hist, *h_hist;
    spearman_gpu_pair *d_rec, *h_rec;
    uint64_t cap_d, cap_h;
    spearman_gpu_stats stats;
};

/* ---------------- kernel ---------------- */

__device__ __forceinline__ void mma_s8(int (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* Every lane calls this for each of its pairs in the same order: one
 * atomic per warp and pair slot. */
__device__ __forceinline__ void append(const kparams &P, bool want, uint32_t i, uint32_t j, int32_t s, uint32_t keep,
                                       uint32_t lane)
{
    const unsigned m = __ballot_sync(FULL, want);
    if (!m) return;
    const int leader = __ffs((int)m) - 1;
    unsigned long long base = 0;
    if ((int)lane == leader) base = atomicAdd(&P.cnt[2], (unsigned long long)__popc(m));
    base = __shfl_sync(FULL, base, leader);
    if (want) {
        const unsigned long long pos = base + (unsigned long long)__popc(m & ((1u << lane) - 1u));
        if (pos < P.cap) P.rec[pos] = spearman_gpu_pair{i, j, s, keep};
    }
}

template <int KP, bool HIST>
__global__ void __launch_bounds__(THREADS) k_pairs(kparams P)
{
    constexpr int KW = KP / 4; /* 32-bit words per row */
    constexpr int LD = KW + 4; /* shared row stride: conflict-free fragment loads */
    __shared__ __align__(16) uint32_t sA[TILE * LD];
    __shared__ __align__(16) uint32_t sB[TILE * LD];
    __shared__ long long siiA[TILE], siiB[TILE];
    __shared__ float rootA[TILE], invA[TILE], rootB[TILE], invB[TILE];
    __shared__ unsigned int hist[BINS];
    __shared__ unsigned long long tally[2];

    const uint64_t ti = P.i0 + (uint64_t)blockIdx.y * TILE, tj = P.j0 + (uint64_t)blockIdx.x * TILE;
    if (P.upper && tj + TILE <= ti + 1) return; /* every pair of the tile has j <= i */
    const uint32_t t = threadIdx.x;

    {
        const uint4 *gA = (const uint4 *)P.x.a + ti * (KW / 4), *gB = (const uint4 *)P.y.a + tj * (KW / 4);
        for (uint32_t v = t; v < TILE * KW / 4; v += THREADS) {
            const uint32_t r = v / (KW / 4), c = v % (KW / 4);
            *(uint4 *)(sA + r * LD + c * 4) = gA[v];
            *(uint4 *)(sB + r * LD + c * 4) = gB[v];
        }
    }
    if (t < TILE) {
        siiA[t] = P.x.sii[ti + t];
        rootA[t] = P.x.root[ti + t];
        invA[t] = P.x.inv[ti + t];
        siiB[t] = P.y.sii[tj + t];
        rootB[t] = P.y.root[tj + t];
        invB[t] = P.y.inv[tj + t];
    }
    if (HIST)
        for (uint32_t b = t; b < BINS; b += THREADS)
            hist[b] = 0;
    if (t < 2) tally[t] = 0;
    __syncthreads();

    const uint32_t warp = t >> 5, lane = t & 31u, gid = lane >> 2, tid = lane & 3u;
    const uint32_t wm = warp >> 1, wn = warp & 1u;
    int acc[2][8][4];
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < 8; ni++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                acc[mi][ni][e] = 0;
#pragma unroll
    for (int ks = 0; ks < KW; ks += 8) {
        uint32_t a[2][4];
#pragma unroll
        for (int mi = 0; mi < 2; mi++) {
            const uint32_t *r = sA + (wm * 32 + mi * 16 + gid) * LD + ks;
            a[mi][0] = r[tid];
            a[mi][1] = r[8 * LD + tid];
            a[mi][2] = r[4 + tid];
            a[mi][3] = r[8 * LD + 4 + tid];
        }
#pragma unroll
        for (int ni = 0; ni < 8; ni++) {
            const uint32_t *c = sB + (wn * 64 + ni * 8 + gid) * LD + ks;
            const uint32_t b0 = c[tid], b1 = c[4 + tid];
#pragma unroll
            for (int mi = 0; mi < 2; mi++)
                mma_s8(acc[mi][ni], a[mi], b0, b1);
        }
    }

    /* Accumulator e of fragment (mi, ni): row gid + 8 (e >> 1), column
     * 2 tid + (e & 1) of the 16 x 8 tile; slot ((mi 2 + h) 8 + ni) 2 + e
     * of this thread's 64 pairs.  The common path only counts, bins and
     * prefilters: its per-pair work is a few instructions, and the pairs
     * past the prefilter (few, for any selective threshold) are handled
     * after it, by the warps that have any. */
    /* Which of the thread's 64 pairs count: rows and columns that are real
     * and vary, and j > i where the diagonal crosses the tile. */
    uint32_t colok = 0;
    float rootj[16];
#pragma unroll
    for (int ni = 0; ni < 8; ni++)
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const uint32_t cl = wn * 64 + ni * 8 + tid * 2 + e;
            if (tj + cl < P.j1 && siiB[cl] != 0) colok |= 1u << (ni * 2 + e);
            rootj[ni * 2 + e] = rootB[cl];
        }
    const bool diag = P.upper && tj < ti + TILE;
    const int dj = diag ? (int)((long long)tj - (long long)ti) : 0;
    uint64_t valid = 0;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const uint32_t rl = wm * 32 + (r >> 1) * 16 + gid + 8 * (r & 1);
        if (!(ti + rl < P.i1 && siiA[rl] != 0)) continue;
        uint32_t m = colok;
        if (diag)
#pragma unroll
            for (int c = 0; c < 16; c++) {
                const int cl = (int)(wn * 64 + (c >> 1) * 8 + tid * 2 + (c & 1));
                if (cl + dj <= (int)rl) m &= ~(1u << c);
            }
        valid |= (uint64_t)m << (16 * r);
    }
    uint32_t npairs = __popcll(valid), nsel = 0;
    uint64_t cand = 0, sure = 0;
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const uint32_t rl = wm * 32 + mi * 16 + gid + 8 * h;
            /* thr as tile.c computes it (pre sqrt(S_ii)), then times sqrt(S_jj) */
            const float thr = __fmul_rn(P.pre, rootA[rl]), post = __fmul_rn(P.post, rootA[rl]), inv_i = invA[rl];
#pragma unroll
            for (int ni = 0; ni < 8; ni++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int slot = ((mi * 2 + h) * 8 + ni) * 2 + e;
                    const float fs = (float)acc[mi][ni][2 * h + e];
                    sure |= (uint64_t)(fabsf(fs) >= __fmul_rn(post, rootj[ni * 2 + e])) << slot;
                    if (HIST && ((valid >> slot) & 1u)) {
                        /* The same float operations as tile.c: the same bins. */
                        const float rho = __fmul_rn(__fmul_rn(fs, inv_i), invB[wn * 64 + ni * 8 + tid * 2 + e]);
                        int b = __float2int_rz(__fmul_rn(__fadd_rn(rho, 1.0f), (float)(BINS / 2)));
                        b = b < 0 ? 0 : b >= BINS ? BINS - 1 : b;
                        atomicAdd(&hist[b], 1u);
                    }
                    cand |= (uint64_t)(fabsf(fs) >= __fmul_rn(thr, rootj[ni * 2 + e])) << slot;
                }
        }
    cand &= valid;
    sure = P.sure ? sure & cand : 0;
    nsel = __popcll(sure);
    const uint64_t band = cand & ~sure;
    if (__any_sync(FULL, band != 0 || (P.emit && sure != 0))) {
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const uint32_t rl = wm * 32 + mi * 16 + gid + 8 * h;
                const long long sii = siiA[rl];
#pragma unroll
                for (int ni = 0; ni < 8; ni++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const uint32_t cl = wn * 64 + ni * 8 + tid * 2 + e;
                        const int slot = ((mi * 2 + h) * 8 + ni) * 2 + e;
                        const int32_t s = acc[mi][ni][2 * h + e];
                        bool want = false;
                        uint32_t keep = 0;
                        if ((sure >> slot) & 1u) {
                            keep = 1;
                            want = P.emit != 0;
                        } else if ((band >> slot) & 1u) {
                            const int d = spearman_decide(P.mode, P.q, P.x_lo, P.x_hi, s, sii, siiB[cl]);
                            if (d == SPEARMAN_KEEP && !P.host_all) {
                                nsel++;
                                keep = 1;
                                want = P.emit != 0;
                            } else if (d != SPEARMAN_DROP) {
                                want = true;
                            }
                        }
                        append(P, want, (uint32_t)(ti + rl), (uint32_t)(tj + cl), s, keep, lane);
                    }
            }
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
        for (uint32_t b = t; b < BINS; b += THREADS)
            if (hist[b]) atomicAdd(&P.hist_out[b], (unsigned long long)hist[b]);
}

/* ---------------- host side ---------------- */

#define CK(call) CUDA_CHECK_GOTO(call, st, done)

static void side_free(dside *s)
{
    cudaFree(s->a);
    cudaFree(s->sii);
    cudaFree(s->root);
    cudaFree(s->inv);
    memset(s, 0, sizeof *s);
}

/* The rows padded with zero rows (S_ii = 0: never a pair) to whole tiles
 * and one more, so that a block may read a full tile anywhere. */
static fd_status side_upload(spearman_gpu *g, dside *s, const spearman_gpu_mat *m)
{
    fd_status st = FD_OK;
    const uint64_t pad = (m->rows + TILE - 1) / TILE * TILE + TILE;
    s->rows = m->rows;
    FD_TRY(fd_cuda_alloc((void **)&s->a, pad * g->kp, "the rank matrix"));
    FD_TRY(fd_cuda_alloc((void **)&s->sii, pad * 8, "the rank matrix"));
    FD_TRY(fd_cuda_alloc((void **)&s->root, pad * 4, "the rank matrix"));
    FD_TRY(fd_cuda_alloc((void **)&s->inv, pad * 4, "the rank matrix"));
    CK(cudaMemsetAsync(s->a, 0, pad * g->kp, g->stream));
    CK(cudaMemsetAsync(s->sii, 0, pad * 8, g->stream));
    CK(cudaMemsetAsync(s->root, 0, pad * 4, g->stream));
    CK(cudaMemsetAsync(s->inv, 0, pad * 4, g->stream));
    if (m->rows) {
        CK(cudaMemcpyAsync(s->a, m->a, m->rows * g->kp, cudaMemcpyHostToDevice, g->stream));
        CK(cudaMemcpyAsync(s->sii, m->sii, m->rows * 8, cudaMemcpyHostToDevice, g->stream));
        CK(cudaMemcpyAsync(s->root, m->root, m->rows * 4, cudaMemcpyHostToDevice, g->stream));
        CK(cudaMemcpyAsync(s->inv, m->inv_root, m->rows * 4, cudaMemcpyHostToDevice, g->stream));
    }
    CK(cudaStreamSynchronize(g->stream)); /* pageable sources */
done:
    return st;
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
    cudaFree(g->d_hist);
    cudaFree(g->d_rec);
    if (g->h_cnt) cudaFreeHost(g->h_cnt);
    if (g->h_hist) cudaFreeHost(g->h_hist);
    if (g->h_rec) cudaFreeHost(g->h_rec);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
    *pg = NULL;
}

extern "C" fd_status spearman_gpu_create(spearman_gpu **out, int device, uint32_t kp, const spearman_gpu_mat *x,
                                         const spearman_gpu_mat *y)
{
    fd_status st = FD_OK;
    *out = NULL;
    if (kp == 0 || kp % 32 || kp > 128)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_create: %u bytes per row, expected 32, 64, 96 or 128", kp);
    if (x->rows >= (1ull << 32) || (y && y->rows >= (1ull << 32)))
        return fd_fail(FD_ERR_USAGE, "the GPU kernel takes fewer than 2^32 rows per input");
    spearman_gpu *g = (spearman_gpu *)calloc(1, sizeof *g);
    if (!g) return fd_fail(FD_ERR_NOMEM, "out of memory");
    g->device = device;
    g->kp = kp;
    CK(cudaSetDevice(device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    FD_TRY_GOTO(side_upload(g, &g->x, x), st, done);
    if (y) FD_TRY_GOTO(side_upload(g, &g->y, y), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->d_cnt, 3 * 8, "counters"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->d_hist, BINS * 8, "the histogram"), st, done);
    CK(cudaHostAlloc((void **)&g->h_cnt, 3 * 8, cudaHostAllocDefault));
    CK(cudaHostAlloc((void **)&g->h_hist, BINS * 8, cudaHostAllocDefault));
    g->cap_d = 1u << 20;
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->d_rec, g->cap_d * sizeof(spearman_gpu_pair), "selected pairs"), st, done);
    *out = g;
    return FD_OK;
done:
    spearman_gpu_destroy(&g);
    return st;
}

extern "C" void spearman_gpu_get_stats(const spearman_gpu *g, spearman_gpu_stats *s) { *s = g->stats; }

template <bool HIST> static void launch_h(spearman_gpu *g, dim3 grid, const kparams &P)
{
    switch (g->kp) {
    case 32: k_pairs<32, HIST><<<grid, THREADS, 0, g->stream>>>(P); break;
    case 64: k_pairs<64, HIST><<<grid, THREADS, 0, g->stream>>>(P); break;
    case 96: k_pairs<96, HIST><<<grid, THREADS, 0, g->stream>>>(P); break;
    default: k_pairs<128, HIST><<<grid, THREADS, 0, g->stream>>>(P); break;
    }
}

static void launch(spearman_gpu *g, dim3 grid, const kparams &P)
{
    if (P.hist) launch_h<true>(g, grid, P);
    else launch_h<false>(g, grid, P);
}

extern "C" fd_status spearman_gpu_rect(spearman_gpu *g, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                                       int upper, const spearman_gpu_sel *sel, spearman_gpu_out *out)
{
    fd_status st = FD_OK;
    const dside &Y = g->y.a ? g->y : g->x;
    out->pairs = out->selected = out->nrec = 0;
    out->rec = g->h_rec;
    if (sel->hist) memset(out->hist, 0, sizeof out->hist);
    if (i1 > g->x.rows) i1 = g->x.rows;
    if (j1 > Y.rows) j1 = Y.rows;
    if (i0 >= i1 || j0 >= j1) return FD_OK;
    const uint64_t gy = (i1 - i0 + TILE - 1) / TILE, gx = (j1 - j0 + TILE - 1) / TILE;
    if (gy > 65535 || gx > 0x7fffffffull)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_rect: %llu x %llu rows is too large for one launch",
                       (unsigned long long)(i1 - i0), (unsigned long long)(j1 - j0));
    CK(cudaSetDevice(g->device));
    {
        const double t0 = fd_now();
        kparams P;
        P.x = dmat{g->x.a, g->x.sii, g->x.root, g->x.inv};
        P.y = dmat{Y.a, Y.sii, Y.root, Y.inv};
        P.i0 = i0;
        P.i1 = i1;
        P.j0 = j0;
        P.j1 = j1;
        P.upper = upper;
        P.mode = sel->mode;
        P.hist = sel->hist;
        P.emit = sel->emit;
        P.host_all = sel->host_all;
        P.q = sel->q;
        P.x_lo = sel->x_lo;
        P.x_hi = sel->x_hi;
        P.pre = sel->pre;
        P.sure = spearman_post_usable(sel->mode, sel->q) && !sel->host_all;
        P.post = spearman_post(sel->q);
        P.cnt = g->d_cnt;
        P.hist_out = g->d_hist;
        for (;;) {
            P.rec = g->d_rec;
            P.cap = g->cap_d;
            CK(cudaMemsetAsync(g->d_cnt, 0, 3 * 8, g->stream));
            if (sel->hist) CK(cudaMemsetAsync(g->d_hist, 0, BINS * 8, g->stream));
            launch(g, dim3((unsigned)gx, (unsigned)gy), P);
            CK(cudaGetLastError());
            CK(cudaMemcpyAsync(g->h_cnt, g->d_cnt, 3 * 8, cudaMemcpyDeviceToHost, g->stream));
            CK(cudaStreamSynchronize(g->stream));
            g->stats.launches++;
            if (g->h_cnt[2] <= g->cap_d) break;
            /* More pairs for the host than the buffer holds: grow it and
             * run the launch again (its counts start over). */
            FD_TRY(fd_cuda_grow((void **)&g->d_rec, &g->cap_d, g->h_cnt[2], sizeof(spearman_gpu_pair), "selected pairs"));
            g->stats.reruns++;
        }
        const uint64_t nrec = g->h_cnt[2];
        if (nrec) {
            FD_TRY(fd_cuda_host_grow((void **)&g->h_rec, &g->cap_h, nrec, sizeof(spearman_gpu_pair)));
            CK(cudaMemcpyAsync(g->h_rec, g->d_rec, nrec * sizeof(spearman_gpu_pair), cudaMemcpyDeviceToHost,
                               g->stream));
        }
        if (sel->hist) CK(cudaMemcpyAsync(g->h_hist, g->d_hist, BINS * 8, cudaMemcpyDeviceToHost, g->stream));
        CK(cudaStreamSynchronize(g->stream));
        out->pairs = g->h_cnt[0];
        out->selected = g->h_cnt[1];
        out->rec = g->h_rec;
        out->nrec = nrec;
        if (sel->hist) memcpy(out->hist, g->h_hist, sizeof out->hist);
        g->stats.kernel_seconds += fd_now() - t0;
    }
done:
    return st;
}
