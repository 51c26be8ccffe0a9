/* SPDX-License-Identifier: BSD-3-Clause */
/* Kendall's sign vectors wider than 128 bytes on the GPU
 * (spearman_gpu_wide.h).
 *
 * A block takes WT rows of x against a strip of STRIP column tiles of WT
 * rows of y; its 256 threads each hold a 4 x 4 block of sums (rows ty +
 * 16 r, columns tx + 16 c, so that a warp's reads of shared memory fall in
 * distinct banks or broadcast).  The rows go through shared memory KC
 * bytes at a time.  The histogram is the block's in shared memory, added
 * to the device's once at the end. */
#include "../cuda/check.cuh"
#include "../common/clock.h"
#include "spearman_decide.h"
#include "spearman_gpu_out.cuh"
#include "spearman_gpu_rows.cuh"
#include "spearman_gpu_wide.h"

#include <stdlib.h>
#include <string.h>

#define WT 64                    /* rows and columns of a tile */
#define KC 64                    /* bytes of a row per step */
#define KW (KC / 4)              /* its words */
#define NT 256
#define STRIP 8                  /* column tiles a block */
#define CK(call) CUDA_CHECK_GOTO(call, st, done)

struct wside {
    uint32_t *a;                 /* rows padded to whole tiles, kp bytes each */
    long long *sii;
    float *inv;
    uint64_t rows;
};

struct wparams {
    const uint32_t *x, *y;
    const long long *xsii, *ysii;
    const float *xinv, *yinv;
    uint64_t i0, i1, j0, j1;
    uint32_t kw;                 /* words a row */
    int upper, mode, hist, emit;
    double q;
    /* Kendall's p (modes 'p' and 'x', kendall_decide): each row's ties
     * (kendall_ties: ties, t3, t5), the verdict and the p by |S| of two
     * rows without ties, and z_alpha^2, n (n - 1) and n of the normal
     * branch; --fdr's pass 1 bins p (xbins bins of xscale, into xhist),
     * its later passes take p in [x_lo, x_hi] */
    const double *xties, *yties;
    const unsigned char *untied_keep;
    const double *untied_p;
    double kz2, km, kn;
    uint32_t xbins;
    double xscale, x_lo, x_hi;
    unsigned long long *xhist;
    /* mode 'k' (--top-k): a pair comes back when |tau| reaches its row's
     * weakest kept partner, row_thr[i - thr_i0], less 1e-5 of it (the
     * float error of |S| / sqrt(S_ii) / sqrt(S_jj) is below 1e-6), as
     * tile.c's screen does; the host's heaps decide */
    const float *row_thr;
    uint64_t thr_i0;
    unsigned long long *cnt;     /* pairs, kept for certain, records */
    unsigned long long *hist_out;
    spearman_gpu_pair *rec;
    unsigned long long cap;
};

__device__ __forceinline__ double kendall_var(const wparams &P, const double *ti, const double *tj)
{
    const double m = P.km;
    return __dadd_rn(__dadd_rn(__ddiv_rn(__dsub_rn(__dsub_rn(__dmul_rn(m, __dadd_rn(2.0 * P.kn, 5.0)), ti[2]), tj[2]),
                                         18.0),
                               __ddiv_rn(__dmul_rn(2.0 * ti[0], tj[0]), m)),
                     __ddiv_rn(__dmul_rn(ti[1], tj[1]), __dmul_rn(9.0 * m, P.kn - 2.0)));
}

/* The pair's p: the host's own value for two rows without ties (*exact
 * 1), else the normal branch's erfc(z / sqrt 2), z = |S| / sqrt(var) as
 * the host computes it; CUDA's erfc is within a few ulps of glibc's and
 * z within an ulp or two, so p is within 1e-11 of the host's, relatively
 * (its slope, 2 z^2 at most 2,000 before p underflows, times their
 * errors), and KENDALL_P_REL settles a comparison. */
#define KENDALL_P_REL 1e-9
__device__ __forceinline__ double kendall_p_dev(const wparams &P, int s, const double *ti, const double *tj, int *exact)
{
    const int a = s < 0 ? -s : s;
    if (ti[0] == 0 && tj[0] == 0) {
        *exact = 1;
        return P.untied_p[a];
    }
    *exact = 0;
    const double z = __ddiv_rn((double)a, __dsqrt_rn(kendall_var(P, ti, tj)));
    return erfc(__ddiv_rn(z, M_SQRT2));
}

/* p >= lo and p <= hi for certain (KEEP), not for certain (DROP), or not
 * known (UNDECIDED). */
__device__ __forceinline__ int kendall_in_range(double p, int exact, double lo, double hi)
{
    if (exact) return p >= lo && p <= hi ? SPEARMAN_KEEP : SPEARMAN_DROP;
    const double e = KENDALL_P_REL * p + 1e-300;
    if (p + e < lo || p - e > hi) return SPEARMAN_DROP;
    if (p - e >= lo && p + e <= hi) return SPEARMAN_KEEP;
    return SPEARMAN_UNDECIDED;
}

/* spearman_xbin's bin of p (x xscale floored, clamped to the bins), or -1
 * where p is not exact and an edge lies within its error. */
__device__ __forceinline__ int kendall_xbin(const wparams &P, double p, int exact)
{
    const double b = p * P.xscale, e = exact ? 0 : KENDALL_P_REL * b + 1e-300;
    if (b + e <= 0) return 0;
    if (b - e >= (double)(P.xbins - 1)) return (int)P.xbins - 1;
    if (exact) return b <= 0 ? 0 : b >= (double)(P.xbins - 1) ? (int)P.xbins - 1 : (int)b;
    const double f = floor(b);
    if (b - e < f || b + e >= f + 1 || b - e <= 0 || b + e >= (double)(P.xbins - 1)) return -1;
    return (int)f;
}

/* Kendall's --pvalue (mode 'p') and --fdr's ranges of p (mode 'x') for a
 * pair of varying rows, the host's test (kendall_p_le, or p in [x_lo,
 * x_hi]) where it is certain.  --pvalue: for two rows without ties the
 * verdict depends on |S| alone (the exact branch, or the normal one with
 * the untied variance), tabled on the host by kendall_p_le itself;
 * otherwise the normal branch's z^2 = S^2 / var, var from both rows' ties
 * in the host's order of operations (the sums of integers are exact; a
 * product or quotient rounds within 2^-53), within a few ulps of the
 * host's, so that a margin of 1e-6 of z_alpha^2 (the host's own band is
 * 1e-9) settles it.  A kept pair of --fdr's pass 1 is binned here where
 * its bin is certain, else goes to the host.  Inside the margins: the
 * host decides. */
__device__ __forceinline__ int kendall_decide(const wparams &P, int s, const double *ti, const double *tj)
{
    int d;
    if (P.mode == 'x') {
        int exact;
        const double p = kendall_p_dev(P, s, ti, tj, &exact);
        return kendall_in_range(p, exact, P.x_lo, P.x_hi);
    }
    if (ti[0] == 0 && tj[0] == 0) {
        d = P.untied_keep[s < 0 ? -s : s] ? SPEARMAN_KEEP : SPEARMAN_DROP;
    } else {
        const double z2 = __ddiv_rn(__dmul_rn((double)s, (double)s), kendall_var(P, ti, tj));
        d = z2 > P.kz2 * (1 + 1e-6) ? SPEARMAN_KEEP : z2 < P.kz2 * (1 - 1e-6) ? SPEARMAN_DROP : SPEARMAN_UNDECIDED;
    }
    if (d == SPEARMAN_KEEP && P.xbins) {
        int exact;
        const double p = kendall_p_dev(P, s, ti, tj, &exact);
        const int b = kendall_xbin(P, p, exact);
        if (b < 0) return SPEARMAN_UNDECIDED;
        atomicAdd(&P.xhist[b], 1ull);
    }
    return d;
}

__global__ void __launch_bounds__(NT) k_wide(wparams P)
{
    __shared__ uint32_t sA[WT][KW + 1], sB[WT][KW + 1];
    __shared__ pair_tally tally;
    const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
    const uint64_t ib = P.i0 + (uint64_t)blockIdx.y * WT;
    pair_out_begin(&tally, P.hist);
    long long sii[4];
    float hk[4], xinv[4], thr[4];
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const uint64_t i = ib + ty + 16 * r; /* padded: readable past i1 */
        sii[r] = P.xsii[i];
        xinv[r] = P.xinv[i];
        hk[r] = spearman_hist_factor(xinv[r]);
        thr[r] = P.row_thr && i < P.i1 ? P.row_thr[i - P.thr_i0] * (1 - 1e-5f) : 0;
    }
    unsigned long long pairs = 0, kept = 0;
    for (int t = 0; t < STRIP; t++) {
        const uint64_t jb = P.j0 + ((uint64_t)blockIdx.x * STRIP + t) * WT;
        if (jb >= P.j1) break;
        if (P.upper && jb + WT <= ib + 1) continue; /* every j <= i */
        int acc[4][4];
#pragma unroll
        for (int r = 0; r < 4; r++)
#pragma unroll
            for (int c = 0; c < 4; c++) acc[r][c] = 0;
        for (uint32_t k0 = 0; k0 < P.kw; k0 += KW) {
            __syncthreads();
            for (uint32_t q = threadIdx.x; q < WT * KW; q += NT) {
                const uint32_t r = q / KW, w = q % KW;
                sA[r][w] = P.x[(ib + r) * P.kw + k0 + w];
                sB[r][w] = P.y[(jb + r) * P.kw + k0 + w];
            }
            __syncthreads();
#pragma unroll
            for (int w = 0; w < KW; w++) {
                int a[4], b[4];
#pragma unroll
                for (int r = 0; r < 4; r++) a[r] = (int)sA[ty + 16 * r][w];
#pragma unroll
                for (int c = 0; c < 4; c++) b[c] = (int)sB[tx + 16 * c][w];
#pragma unroll
                for (int r = 0; r < 4; r++)
#pragma unroll
                    for (int c = 0; c < 4; c++) acc[r][c] = __dp4a(a[r], b[c], acc[r][c]);
            }
        }
#pragma unroll
        for (int c = 0; c < 4; c++) {
            const uint64_t j = jb + tx + 16 * c;
            const long long sjj = P.ysii[j];
            const float invj = P.yinv[j];
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const uint64_t i = ib + ty + 16 * r;
                if (i >= P.i1 || j >= P.j1 || (P.upper && j <= i) || sii[r] == 0 || sjj == 0) continue;
                const int s = acc[r][c];
                pairs++;
                if (P.hist) atomicAdd(&tally.hist[spearman_hist_bin(s, hk[r], invj)], 1u);
                const int d = P.mode == 'k'   ? (fabsf((float)s) * xinv[r] * invj >= thr[r] ? SPEARMAN_UNDECIDED
                                                                                            : SPEARMAN_DROP)
                              : P.xties       ? kendall_decide(P, s, P.xties + 3 * i, P.yties + 3 * j)
                                              : spearman_decide(P.mode, P.q, 0, 0, s, sii[r], sjj);
                if (d == SPEARMAN_DROP) continue;
                if (d == SPEARMAN_KEEP) kept++;
                if (d == SPEARMAN_KEEP && !P.emit) continue;
                const unsigned long long at = pair_out_slot(P.cnt);
                if (at < P.cap) {
                    spearman_gpu_pair p;
                    p.i = (uint32_t)i;
                    p.j = (uint32_t)j;
                    p.s = s;
                    p.keep = d == SPEARMAN_KEEP;
                    P.rec[at] = p;
                }
            }
        }
    }
    pair_out_flush(&tally, pairs, kept, P.hist, P.cnt, P.hist_out);
}

/* ---------------- host ---------------- */

struct spearman_gpu_wide {
    int device;
    cudaStream_t stream;
    uint32_t kp;
    wside x, y;                  /* y.a NULL: pairs within x */
    pair_out out;
    float *d_thr;                /* --top-k: the record's rows' thresholds */
    uint64_t cap_thr;
    double *d_xties, *d_yties;   /* Kendall's p (spearman_gpu_wide_kendall) */
    unsigned char *d_untied;
    double *d_untied_p;
    unsigned long long *d_xhist, *h_xhist; /* --fdr's pass 1: FDR bins of p */
    uint64_t cap_dx, cap_hx;
    uint32_t k_nobs;             /* the rows' observations and z_alpha^2 (spearman_gpu_kendall) */
    double k_z2;
    double seconds;
    uint64_t launches;
};

static void wside_free(wside *s)
{
    cudaFree(s->a);
    cudaFree(s->sii);
    cudaFree(s->inv);
    memset(s, 0, sizeof *s);
}

static fd_status wside_upload(spearman_gpu_wide *w, wside *s, const spearman_gpu_mat *m)
{
    s->rows = m->rows;
    return gpu_rows_upload(w->stream, w->kp, WT, m, (void **)&s->a, &s->sii, &s->inv);
}

extern "C" void spearman_gpu_wide_destroy(spearman_gpu_wide **pw)
{
    spearman_gpu_wide *w = *pw;
    if (!w) return;
    cudaSetDevice(w->device);
    if (w->stream) cudaStreamSynchronize(w->stream);
    wside_free(&w->x);
    wside_free(&w->y);
    pair_out_free(&w->out);
    cudaFree(w->d_thr);
    cudaFree(w->d_xties);
    cudaFree(w->d_yties);
    cudaFree(w->d_untied);
    cudaFree(w->d_untied_p);
    cudaFree(w->d_xhist);
    if (w->h_xhist) cudaFreeHost(w->h_xhist);
    if (w->stream) cudaStreamDestroy(w->stream);
    free(w);
    *pw = NULL;
}

extern "C" fd_status spearman_gpu_wide_create(spearman_gpu_wide **out, int device, uint32_t kp,
                                              const spearman_gpu_mat *x, const spearman_gpu_mat *y,
                                              uint64_t records)
{
    fd_status st = FD_OK;
    *out = NULL;
    if (kp == 0 || kp % KC || kp > (SPEARMAN_GPU_WIDE_MAX_N + KC - 1) / KC * KC)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_wide_create: %u bytes a row, expected a multiple of %d", kp, KC);
    if (x->rows >= (1ull << 32) || (y && y->rows >= (1ull << 32)))
        return fd_fail(FD_ERR_USAGE, "the GPU kernel takes fewer than 2^32 rows per input");
    spearman_gpu_wide *w = (spearman_gpu_wide *)calloc(1, sizeof *w);
    if (!w) return fd_fail(FD_ERR_NOMEM, "out of memory");
    w->device = device;
    w->kp = kp;
    CK(cudaSetDevice(device));
    CK(cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
    FD_TRY_GOTO(wside_upload(w, &w->x, x), st, done);
    if (y) FD_TRY_GOTO(wside_upload(w, &w->y, y), st, done);
    FD_TRY_GOTO(pair_out_make(&w->out, sizeof(spearman_gpu_pair), records, "selected pairs"), st, done);
    *out = w;
    return FD_OK;
done:
    spearman_gpu_wide_destroy(&w);
    return st;
}

static fd_status ties_upload(spearman_gpu_wide *w, const kendall_ties *t, uint64_t rows, double **d)
{
    fd_status st = FD_OK;
    FD_TRY(fd_cuda_alloc((void **)d, (rows ? rows : 1) * sizeof *t, "each row's ties"));
    if (rows) CK(cudaMemcpyAsync(*d, t, rows * sizeof *t, cudaMemcpyHostToDevice, w->stream));
done:
    return st;
}

extern "C" fd_status spearman_gpu_wide_kendall(spearman_gpu_wide *w, const spearman_gpu_kendall *k)
{
    fd_status st = FD_OK;
    static_assert(sizeof(kendall_ties) == 3 * sizeof(double), "kendall_ties is read as three doubles a row");
    if (w->d_untied) return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_wide_kendall: called twice");
    if (k->n_obs < 3 || k->n_obs > KENDALL_MAX_N || !k->xties)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_wide_kendall: %u observations", k->n_obs);
    const uint32_t N = kendall_width(k->n_obs);
    CK(cudaSetDevice(w->device));
    FD_TRY(ties_upload(w, k->xties, w->x.rows, &w->d_xties));
    if (w->y.a) FD_TRY(ties_upload(w, k->yties, w->y.rows, &w->d_yties));
    FD_TRY(fd_cuda_alloc((void **)&w->d_untied, N + 1, "Kendall's verdicts by |S|"));
    CK(cudaMemcpyAsync(w->d_untied, k->untied_keep, N + 1, cudaMemcpyHostToDevice, w->stream));
    FD_TRY(fd_cuda_alloc((void **)&w->d_untied_p, (N + 1) * sizeof(double), "Kendall's p by |S|"));
    CK(cudaMemcpyAsync(w->d_untied_p, k->untied_p, (N + 1) * sizeof(double), cudaMemcpyHostToDevice, w->stream));
    CK(cudaStreamSynchronize(w->stream));
    w->k_nobs = k->n_obs;
    w->k_z2 = k->z2;
done:
    return st;
}

/* A rectangle's launches, for pair_out_run. */
typedef struct {
    spearman_gpu_wide *w;
    wparams P;
} rect_launch;

/* The rectangle's row tiles in runs of 65,535, into rec (cap records). */
static fd_status launch_all(void *arg, void *rec, unsigned long long cap)
{
    fd_status st = FD_OK;
    rect_launch *L = (rect_launch *)arg;
    wparams P = L->P;
    const uint64_t i0 = P.i0, i1 = P.i1;
    const uint64_t gx = ((P.j1 - P.j0 + WT - 1) / WT + STRIP - 1) / STRIP;
    P.rec = (spearman_gpu_pair *)rec;
    P.cap = cap;
    /* pair_out_run clears its own counts before each try; the bins too */
    if (P.xbins) CK(cudaMemsetAsync(P.xhist, 0, P.xbins * sizeof *P.xhist, L->w->stream));
    for (uint64_t r = i0; r < i1; r += 65535ull * WT) {
        P.i0 = r;
        P.i1 = i1 - r > 65535ull * WT ? r + 65535ull * WT : i1;
        const uint64_t gy = (P.i1 - P.i0 + WT - 1) / WT;
        k_wide<<<dim3((unsigned)gx, (unsigned)gy), NT, 0, L->w->stream>>>(P);
        CK(cudaGetLastError());
        L->w->launches++;
    }
done:
    return st;
}

extern "C" fd_status spearman_gpu_wide_rect(spearman_gpu_wide *w, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                                            int upper, const spearman_gpu_sel *sel, const float *row_thr,
                                            spearman_gpu_out *out)
{
    fd_status st = FD_OK;
    const wside &Y = w->y.a ? w->y : w->x;
    memset(out, 0, sizeof *out);
    out->rec = (spearman_gpu_pair *)w->out.h_rec;
    if (i1 > w->x.rows) i1 = w->x.rows;
    if (j1 > Y.rows) j1 = Y.rows;
    if (i0 >= i1 || j0 >= j1) return FD_OK;
    const int kendall = w->d_untied && (sel->mode == 'p' || sel->mode == 'x');
    if ((sel->mode != 'r' && sel->mode != 'a' && sel->mode != 'k' && !kendall) ||
        (sel->xbins && !(kendall && sel->mode == 'p')) || (sel->mode == 'k') != !!row_thr ||
        (sel->mode == 'k' && (sel->hist || upper)))
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_wide_rect: mode %c is the host's", sel->mode);
    if ((j1 - j0 + WT - 1) / WT / STRIP >= 0x7fffffffull)
        return fd_fail(FD_ERR_INTERNAL, "spearman_gpu_wide_rect: too many columns for one launch");
    const double t0 = fd_now();
    CK(cudaSetDevice(w->device));
    if (sel->xbins) {
        FD_TRY(fd_cuda_grow((void **)&w->d_xhist, &w->cap_dx, sel->xbins, sizeof *w->d_xhist, "the FDR bins"));
        FD_TRY(fd_cuda_host_grow((void **)&w->h_xhist, &w->cap_hx, sel->xbins, sizeof *w->h_xhist));
    }
    if (row_thr) {
        FD_TRY(fd_cuda_grow((void **)&w->d_thr, &w->cap_thr, i1 - i0, sizeof(float), "the --top-k thresholds"));
        CK(cudaMemcpyAsync(w->d_thr, row_thr, (i1 - i0) * sizeof(float), cudaMemcpyHostToDevice, w->stream));
    }
    {
        rect_launch L;
        memset(&L, 0, sizeof L);
        L.w = w;
        wparams &P = L.P;
        P.x = w->x.a;
        P.y = Y.a;
        P.xsii = w->x.sii;
        P.ysii = Y.sii;
        P.xinv = w->x.inv;
        P.yinv = Y.inv;
        P.i0 = i0;
        P.i1 = i1;
        P.j0 = j0;
        P.j1 = j1;
        P.kw = w->kp / 4;
        P.upper = upper;
        P.mode = sel->mode;
        P.hist = sel->hist;
        P.emit = sel->emit;
        P.q = sel->q;
        P.row_thr = row_thr ? w->d_thr : NULL;
        P.xties = kendall ? w->d_xties : NULL;
        P.yties = w->y.a ? w->d_yties : w->d_xties;
        P.untied_keep = w->d_untied;
        P.untied_p = w->d_untied_p;
        P.xbins = sel->xbins;
        P.xscale = sel->xscale;
        P.x_lo = sel->x_lo;
        P.x_hi = sel->x_hi;
        P.xhist = w->d_xhist;
        P.kz2 = w->k_z2;
        P.km = (double)w->k_nobs * (w->k_nobs - 1.0);
        P.kn = (double)w->k_nobs;
        P.thr_i0 = i0;
        P.cnt = w->out.d_cnt;
        P.hist_out = w->out.d_hist;
        uint64_t nrec = 0;
        FD_TRY(pair_out_run(&w->out, w->stream, sel->hist, launch_all, &L, &nrec));
        out->pairs = w->out.h_cnt[0];
        out->selected = w->out.h_cnt[1];
        out->hist = sel->hist ? w->out.h_hist : NULL;
        if (sel->xbins) {
            CK(cudaMemcpyAsync(w->h_xhist, w->d_xhist, sel->xbins * sizeof *w->h_xhist, cudaMemcpyDeviceToHost,
                               w->stream));
            CK(cudaStreamSynchronize(w->stream));
            out->xhist = w->h_xhist;
        }
        out->rec = (spearman_gpu_pair *)w->out.h_rec;
        out->nrec = nrec;
    }
    w->seconds += fd_now() - t0;
done:
    return st;
}

extern "C" void spearman_gpu_wide_stats(const spearman_gpu_wide *w, double *seconds, uint64_t *launches)
{
    *seconds = w->seconds;
    *launches = w->launches;
}
