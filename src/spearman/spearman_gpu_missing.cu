/* SPDX-License-Identifier: BSD-3-Clause */
/* --missing pairwise on the GPU (spearman_gpu_missing.h).
 *
 * Two launches cover a rectangle's pairs with a missing value, each pair
 * once: (A) every row of x that misses a value against every row of y,
 * and (B) every row of x that has all its values against the rows of y
 * that miss one.  A block holds its row of x in shared memory; each thread
 * takes rows of y, its own row in a column of shared memory (stride MT,
 * so a warp's loads and stores fall in different banks).
 *
 * A pair's rows are re-ranked over the observations both have, as
 * smat_pair_sums (rankmat.c) does: a row's doubled centred ranks a over
 * its own values P, less the set G of its values the other row lacks
 * (d of them), are a - sum_G [(g < a) + (g <= a)] + d over the common set
 * C (m of them); where d > m, counting over C itself is cheaper:
 * sum_C [(c < a) + (c <= a)] - m.  Both are the exact integers, so the
 * sums are the CPU's.  Cost: m min(d, m) comparisons a row. */
#include "../cuda/check.cuh"
#include "../common/clock.h"
#include "spearman_decide.h"
#include "spearman_gpu_missing.h"
#include "spearman_gpu_out.cuh"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MT 128                                 /* threads a block */
#define MAXW (SPEARMAN_GPU_MAX_N / 32)         /* mask words a row */
#define MISSING_MARK (-32768)                  /* SMAT_MISSING (rankmat.h) */
#define CK(call) CUDA_CHECK_GOTO(call, st, done)

struct mside {
    const int8_t *a;      /* the int8 kernel's resident rows (kp bytes) */
    const long long *sii; /* 0 for a constant row and for a row that misses a value */
    const int16_t *inc;   /* the rows that miss a value, n values each */
    const int32_t *slot;  /* a row's place in inc, -1 if it misses none; NULL: none does */
};

struct mparams {
    mside x, y;
    const uint32_t *ilist, *jlist; /* rows by list, or NULL: i0 + k, j0 + k */
    uint64_t i0, j0;
    uint32_t nj, n, kp;
    int upper, mode, hist, emit;
    const double *q;               /* by m */
    unsigned long long *cnt;       /* pairs, kept for certain, records */
    unsigned long long *hist_out;
    spearman_gpu_mpair *rec;
    unsigned long long cap;
};

__device__ __forceinline__ int32_t slot_of(const mside &S, uint64_t r) { return S.slot ? S.slot[r] : -1; }

/* Row r as int16 at v[k stride], its present columns into mask. */
__device__ __forceinline__ void load_row(const mside &S, uint64_t r, uint32_t n, uint32_t kp, int16_t *v, int stride,
                                         uint32_t *mask)
{
    const int32_t slot = slot_of(S, r);
    const int16_t *p16 = slot >= 0 ? S.inc + (uint64_t)slot * n : NULL;
    const int8_t *p8 = S.a + r * kp;
#pragma unroll
    for (int w = 0; w < MAXW; w++) {
        uint32_t bits = 0;
        for (uint32_t b = 0; b < 32; b++) {
            const uint32_t k = w * 32 + b;
            if (k >= n) break;
            const int16_t a = p16 ? p16[k] : (int16_t)p8[k];
            v[k * stride] = a;
            bits |= (uint32_t)(a != MISSING_MARK) << b;
        }
        mask[w] = bits;
    }
}

/* The doubled centred rank over C of the row's value at column k (see
 * the top of the file). */
__device__ __forceinline__ int rerank(const int16_t *v, int stride, uint32_t k, const uint32_t *gone, int d,
                                      const uint32_t *common, int m)
{
    const int a = v[k * stride];
    if (d == 0) return a;
    const uint32_t *set = d <= m ? gone : common;
    int acc = 0;
#pragma unroll
    for (int w = 0; w < MAXW; w++)
        for (uint32_t bits = set[w]; bits; bits &= bits - 1) {
            const int b = v[(w * 32 + __ffs(bits) - 1) * stride];
            acc += (b < a) + (b <= a);
        }
    return d <= m ? a + d - acc : acc - m;
}

__global__ void __launch_bounds__(MT) k_missing(mparams P)
{
    extern __shared__ int16_t sm[]; /* the block's row (n), then a column of n per thread */
    __shared__ pair_tally tally;
    __shared__ uint32_t umask[MAXW];
    const uint64_t i = P.ilist ? P.ilist[blockIdx.y] : P.i0 + blockIdx.y;
    /* (B): a row of x that misses nothing and varies */
    if (!P.ilist && (slot_of(P.x, i) >= 0 || P.x.sii[i] == 0)) return;
    int16_t *vu = sm, *vw = sm + P.n + threadIdx.x;
    pair_out_begin(&tally, P.hist);
    if (threadIdx.x == 0) {
        uint32_t mk[MAXW];
        load_row(P.x, i, P.n, P.kp, vu, 1, mk);
        for (int w = 0; w < MAXW; w++) umask[w] = mk[w];
    }
    __syncthreads();
    uint32_t mu[MAXW];
#pragma unroll
    for (int w = 0; w < MAXW; w++) mu[w] = umask[w];
    unsigned long long pairs = 0, kept = 0;
    for (uint64_t t = (uint64_t)blockIdx.x * MT + threadIdx.x; t < P.nj; t += (uint64_t)gridDim.x * MT) {
        const uint64_t j = P.jlist ? P.jlist[t] : P.j0 + t;
        if (P.upper && j <= i) continue;
        if (slot_of(P.y, j) < 0 && P.y.sii[j] == 0) continue;
        uint32_t mw[MAXW], c[MAXW], gu[MAXW], gw[MAXW];
        load_row(P.y, j, P.n, P.kp, vw, MT, mw);
        int m = 0, du = 0, dw = 0;
#pragma unroll
        for (int w = 0; w < MAXW; w++) {
            c[w] = mu[w] & mw[w];
            gu[w] = mu[w] & ~mw[w];
            gw[w] = mw[w] & ~mu[w];
            m += __popc(c[w]);
            du += __popc(gu[w]);
            dw += __popc(gw[w]);
        }
        if (m < 3) continue;
        int s = 0, sii = 0, sjj = 0; /* |a| < 128, m <= 128: below 2^21 */
#pragma unroll
        for (int w = 0; w < MAXW; w++)
            for (uint32_t bits = c[w]; bits; bits &= bits - 1) {
                const uint32_t k = w * 32 + __ffs(bits) - 1;
                const int au = rerank(vu, 1, k, gu, du, c, m), aw = rerank(vw, MT, k, gw, dw, c, m);
                s += au * aw;
                sii += au * au;
                sjj += aw * aw;
            }
        if (sii == 0 || sjj == 0) continue;
        pairs++;
        if (P.hist) {
            /* visit_missing's bin (tile.c): the same roundings */
            const float ki = spearman_hist_factor((float)(1.0 / sqrt((double)sii)));
            atomicAdd(&tally.hist[spearman_hist_bin(s, ki, (float)(1.0 / sqrt((double)sjj)))], 1u);
        }
        const int d = spearman_decide(P.mode, P.mode == 'a' ? 0.0 : P.q[m], 0, 0, s, sii, sjj);
        if (d == SPEARMAN_DROP) continue;
        if (d == SPEARMAN_KEEP) kept++;
        if (d == SPEARMAN_KEEP && !P.emit) continue;
        const unsigned long long at = pair_out_slot(P.cnt);
        if (at < P.cap)
            P.rec[at] = spearman_gpu_mpair{(uint32_t)i, (uint32_t)j, s, sii, sjj, (uint16_t)m,
                                           (uint16_t)(d == SPEARMAN_KEEP)};
    }
    pair_out_flush(&tally, pairs, kept, P.hist, P.cnt, P.hist_out);
}

/* ---------------- host ---------------- */

struct hside {
    int16_t *inc;
    int32_t *slot;
    uint32_t *list;    /* on the device */
    uint32_t *h_list;  /* the same, for finding a range's part */
    uint64_t count;
};

struct spearman_gpu_missing {
    spearman_gpu_rows xr, yr;
    cudaStream_t stream;
    uint32_t n;
    hside x, y;        /* y.count == 0 and y.list == NULL with pairs within x: x's */
    int same;
    double *d_q, h_q[SPEARMAN_GPU_MAX_N + 1];
    int q_set;
    pair_out out;
    double seconds;
    uint64_t launches;
};

static void hside_free(hside *s)
{
    cudaFree(s->inc);
    cudaFree(s->slot);
    cudaFree(s->list);
    free(s->h_list);
    memset(s, 0, sizeof *s);
}

static fd_status hside_upload(spearman_gpu_missing *m, hside *s, const spearman_gpu_incomplete *in, uint64_t rows)
{
    fd_status st = FD_OK;
    int32_t *slot = NULL;
    s->count = in->count;
    if (!in->count) return FD_OK;
    if (in->count > INT32_MAX) return fd_fail(FD_ERR_USAGE, "the GPU takes fewer than 2^31 rows with missing values");
    if (!(s->h_list = (uint32_t *)malloc(in->count * 4)) || !(slot = (int32_t *)malloc(rows * 4))) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory for the rows with missing values");
        goto done;
    }
    memcpy(s->h_list, in->rows, in->count * 4);
    memset(slot, 0xff, rows * 4);
    for (uint64_t k = 0; k < in->count; k++) {
        if (in->rows[k] >= rows || (k && in->rows[k] <= in->rows[k - 1])) {
            st = fd_fail(FD_ERR_INTERNAL, "spearman_gpu_missing_create: rows out of order or range");
            goto done;
        }
        slot[in->rows[k]] = (int32_t)k;
    }
    FD_TRY_GOTO(fd_cuda_alloc((void **)&s->inc, in->count * m->n * 2, "the rows with missing values"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&s->slot, rows * 4, "the rows with missing values"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&s->list, in->count * 4, "the rows with missing values"), st, done);
    CK(cudaMemcpyAsync(s->inc, in->values, in->count * m->n * 2, cudaMemcpyHostToDevice, m->stream));
    CK(cudaMemcpyAsync(s->slot, slot, rows * 4, cudaMemcpyHostToDevice, m->stream));
    CK(cudaMemcpyAsync(s->list, in->rows, in->count * 4, cudaMemcpyHostToDevice, m->stream));
    CK(cudaStreamSynchronize(m->stream)); /* pageable sources, slot freed below */
done:
    free(slot);
    return st;
}

extern "C" void spearman_gpu_missing_destroy(spearman_gpu_missing **pm)
{
    spearman_gpu_missing *m = *pm;
    if (!m) return;
    cudaSetDevice(m->xr.device);
    if (m->stream) cudaStreamSynchronize(m->stream);
    hside_free(&m->x);
    hside_free(&m->y);
    cudaFree(m->d_q);
    pair_out_free(&m->out);
    free(m);
    *pm = NULL;
}

extern "C" fd_status spearman_gpu_missing_create(spearman_gpu_missing **out, spearman_gpu *g, uint32_t n,
                                                 const spearman_gpu_incomplete *x, const spearman_gpu_incomplete *y,
                                                 uint64_t records)
{
    fd_status st = FD_OK;
    *out = NULL;
    if (n == 0 || n > SPEARMAN_GPU_MAX_N)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_missing_create: %u values a row, the GPU takes 1 to %d", n,
                       SPEARMAN_GPU_MAX_N);
    spearman_gpu_missing *m = (spearman_gpu_missing *)calloc(1, sizeof *m);
    if (!m) return fd_fail(FD_ERR_NOMEM, "out of memory");
    spearman_gpu_get_rows(g, 0, &m->xr);
    spearman_gpu_get_rows(g, 1, &m->yr);
    m->stream = (cudaStream_t)m->xr.stream;
    m->n = n;
    m->same = y == NULL;
    CK(cudaSetDevice(m->xr.device));
    FD_TRY_GOTO(hside_upload(m, &m->x, x, m->xr.rows), st, done);
    if (y) FD_TRY_GOTO(hside_upload(m, &m->y, y, m->yr.rows), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&m->d_q, sizeof m->h_q, "the selection"), st, done);
    FD_TRY_GOTO(pair_out_make(&m->out, sizeof(spearman_gpu_mpair), records, "pairs with missing values"), st, done);
    *out = m;
    return FD_OK;
done:
    spearman_gpu_missing_destroy(&m);
    return st;
}

/* The first entry of list[0 .. count) at or past r. */
static uint64_t lower_bound(const uint32_t *list, uint64_t count, uint64_t r)
{
    uint64_t lo = 0, hi = count;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (list[mid] < r) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static mside dev_side(const spearman_gpu_rows &r, const hside &h)
{
    return mside{r.a, (const long long *)r.sii, h.inc, h.slot};
}

/* Blocks across a row's partners: about 2,048 blocks a launch in all. */
static unsigned blocks_across(uint64_t nj, uint64_t gy)
{
    const uint64_t most = (nj + MT - 1) / MT, want = (2048 + gy - 1) / gy;
    return (unsigned)(want < most ? want : most ? most : 1);
}

/* A rectangle's launches, for pair_out_run. */
typedef struct {
    spearman_gpu_missing *m;
    mparams P;
    uint64_t i0, i1, j0, j1;
} rect_launch;

/* (A) and (B) over the rectangle, into rec (cap records). */
static fd_status launch_all(void *arg, void *rec, unsigned long long cap)
{
    fd_status st = FD_OK;
    rect_launch *L = (rect_launch *)arg;
    spearman_gpu_missing *m = L->m;
    mparams P = L->P;
    const uint64_t i0 = L->i0, i1 = L->i1, j0 = L->j0, j1 = L->j1;
    const hside &X = m->x, &Y = m->same ? m->x : m->y;
    const size_t smem = (size_t)m->n * (MT + 1) * 2;
    P.rec = (spearman_gpu_mpair *)rec;
    P.cap = cap;
    /* (A): x's rows that miss a value in [i0, i1), against all of [j0, j1) */
    {
        const uint64_t a = lower_bound(X.h_list, X.count, i0), b = lower_bound(X.h_list, X.count, i1);
        for (uint64_t k = a; k < b; k += 65535) {
            const uint64_t gy = b - k < 65535 ? b - k : 65535;
            P.ilist = X.list + k;
            P.jlist = NULL;
            P.j0 = j0;
            P.nj = (uint32_t)(j1 - j0);
            k_missing<<<dim3(blocks_across(P.nj, gy), (unsigned)gy), MT, smem, m->stream>>>(P);
            CK(cudaGetLastError());
            m->launches++;
        }
    }
    /* (B): x's rows that miss none, against y's that miss one in [j0, j1) */
    {
        const uint64_t c = lower_bound(Y.h_list, Y.count, j0), d = lower_bound(Y.h_list, Y.count, j1);
        if (d > c)
            for (uint64_t r = i0; r < i1; r += 65535) {
                const uint64_t gy = i1 - r < 65535 ? i1 - r : 65535;
                P.ilist = NULL;
                P.i0 = r;
                P.jlist = Y.list + c;
                P.nj = (uint32_t)(d - c);
                k_missing<<<dim3(blocks_across(P.nj, gy), (unsigned)gy), MT, smem, m->stream>>>(P);
                CK(cudaGetLastError());
                m->launches++;
            }
    }
done:
    return st;
}

extern "C" fd_status spearman_gpu_missing_rect(spearman_gpu_missing *m, uint64_t i0, uint64_t i1, uint64_t j0,
                                               uint64_t j1, int upper, const spearman_gpu_missing_sel *sel,
                                               spearman_gpu_missing_out *out)
{
    fd_status st = FD_OK;
    memset(out, 0, sizeof *out);
    if (i1 > m->xr.rows) i1 = m->xr.rows;
    if (j1 > m->yr.rows) j1 = m->yr.rows;
    if (i0 >= i1 || j0 >= j1) return FD_OK;
    if (j1 - j0 > UINT32_MAX) return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_missing_rect: over 2^32 columns");
    if (sel->mode != 'p' && sel->mode != 'r' && sel->mode != 'a')
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_missing_rect: mode %c is the host's", sel->mode);
    const double t0 = fd_now();
    CK(cudaSetDevice(m->xr.device));
    if (sel->mode != 'a' && (!m->q_set || memcmp(m->h_q, sel->q_by_m, (m->n + 1) * sizeof(double)))) {
        memcpy(m->h_q, sel->q_by_m, (m->n + 1) * sizeof(double));
        CK(cudaMemcpyAsync(m->d_q, m->h_q, (m->n + 1) * sizeof(double), cudaMemcpyHostToDevice, m->stream));
        m->q_set = 1;
    }
    {
        rect_launch L;
        memset(&L, 0, sizeof L);
        L.m = m;
        L.i0 = i0;
        L.i1 = i1;
        L.j0 = j0;
        L.j1 = j1;
        mparams &P = L.P;
        P.x = dev_side(m->xr, m->x);
        P.y = dev_side(m->yr, m->same ? m->x : m->y);
        P.n = m->n;
        P.kp = m->xr.kp;
        P.upper = upper;
        P.mode = sel->mode;
        P.hist = sel->hist;
        P.emit = sel->emit;
        P.q = m->d_q;
        P.cnt = m->out.d_cnt;
        P.hist_out = m->out.d_hist;
        uint64_t nrec = 0;
        FD_TRY(pair_out_run(&m->out, m->stream, sel->hist, launch_all, &L, &nrec));
        out->pairs = m->out.h_cnt[0];
        out->selected = m->out.h_cnt[1];
        out->hist = sel->hist ? m->out.h_hist : NULL;
        out->rec = (const spearman_gpu_mpair *)m->out.h_rec;
        out->nrec = nrec;
    }
    m->seconds += fd_now() - t0;
done:
    return st;
}

extern "C" void spearman_gpu_missing_stats(const spearman_gpu_missing *m, double *seconds, uint64_t *launches)
{
    *seconds = m->seconds;
    *launches = m->launches;
}
