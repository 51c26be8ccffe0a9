/* SPDX-License-Identifier: BSD-3-Clause */
/* bcp's sweep on the GPU (see bcp_gpu.h).  The factors are one array of
 * rows x R (row-major), every row of every mode, mode m from row off[m];
 * the block's rows of mode m start lo[m] rows further.  The block is an L x K
 * matrix Y (L: the rows of modes [0, h), K: of modes [h, N); C order, so
 * column-major it is Y^T, K x L).  Side 0: T0 (L x R) = Y KR, side 1: T1
 * (K x R) = Y^T KL, each one DGEMM that reads the block once; both are
 * kept column-major (rows x R), so that a mode's MTTKRP reads a
 * component's column of T with consecutive threads.  A mode n of a side
 * (P rows of its modes before n, I = dims[n], Q after n):
 *   M[i, r] = sum over p, q of T[(p I + i) Q + q, r] KA[p, r] KB[q, r],
 * one warp (short sums) or one block of threads per (i, r), summed in a
 * fixed order. */
#include "bcp_gpu.h"
#include "bcp_gpu_launch.cuh"
#include "bcp_sigma.cuh"
#include "../cuda/check.cuh"
#include "../cuda/cublas_load.h"
#include "../cuda/fdcuda.h"
#include "../common/clock.h"

#include <stdlib.h>
#include <string.h>

#define MAXN 8
/* The most row chunks of a Gram matrix (see k_gram_part). */
#define GRAM_CHUNKS 64

struct bcp_gpu {
    int device;
    cudaStream_t stream;
    const fd_cublas *cb; /* cuBLAS, loaded on first use */
    cublasHandle_t blas;
    uint32_t order, h, R, Rmax;
    uint64_t dims[MAXN], lo[MAXN], full[MAXN]; /* the block: dims at lo of a tensor of full dims */
    uint64_t size, rows;                       /* the block's elements; the factors' rows (sum of full) */
    uint64_t off[MAXN];                        /* mode m's rows start at row off[m] of A */
    uint64_t Imax;                             /* the longest mode */
    double *y, *A, *ka, *kb, *T[2], *M, *spare; /* spare: rows x Rmax, for keep */
    double *hbuf;                              /* pinned: rows x Rmax (put, get) */
    double *ones;                              /* Rmax ones: the empty Khatri-Rao product */
    /* The small arrays, on the device and pinned on the host, each in its
     * own slot (SLOT_*), so that a call that fills one need not wait for
     * the copy of another: Sigma up, G down, the scales up, <M, A> down;
     * on the device only, then the Gram's partial sums. */
    double *small, *hsmall;
    /* The sweep's modes on the device (bcp_gpu_sweep_*): every mode's
     * E[A^T A], Sigma and A^T A, ln det Sigma, lambda, <M, A(N-1)> and the
     * flag of a matrix that was not positive definite (SW_*), on the
     * device and pinned on the host; mode k's matrix at k R^2 of its
     * region, at the rank now. */
    double *sw, *hsw;
};

#define SLOT_SIGMA(g) 0
#define SLOT_GRAM(g) ((uint64_t)(g)->Rmax * (g)->Rmax)
#define SLOT_SCALE(g) (2 * (uint64_t)(g)->Rmax * (g)->Rmax)
#define SLOT_INNER(g) (SLOT_SCALE(g) + (uint64_t)MAXN * (g)->Rmax)
#define SLOTS(g) (SLOT_INNER(g) + 1)

/* Packed at the rank now (a sweep starts by filling them): what goes up
 * first (SW_IN of them), so that one copy takes them up and one brings
 * them all down. */
#define SW_MATS(g) ((uint64_t)(g)->order * (g)->R * (g)->R) /* a matrix a mode */
#define SW_EAA(g) 0
#define SW_LAMBDA(g) SW_MATS(g)
#define SW_YX(g) (SW_LAMBDA(g) + (g)->R)
#define SW_BAD(g) (SW_YX(g) + 1)
#define SW_IN(g) (SW_BAD(g) + 1)
#define SW_SIGMA(g) SW_IN(g)
#define SW_AA(g) (SW_SIGMA(g) + SW_MATS(g))
#define SW_LOGDET(g) (SW_AA(g) + SW_MATS(g))
#define SW_SIZE(g) (SW_LOGDET(g) + (g)->order)

#define CK(call) CUDA_CHECK_GOTO(call, st, done)
#define CB(call) CUBLAS_CHECK_GOTO(call, st, done)

/* The Khatri-Rao product of modes [a, b) in C order: row q's sub-indices,
 * then the product over the modes in order (as the CPU builds it, so the
 * two products are the same bits). */
struct kr_modes {
    uint64_t dims[MAXN], off[MAXN];
    uint32_t a, b;
};

__global__ void k_khatri_rao(const double *A, struct kr_modes km, uint64_t rows, uint32_t R, double *out)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rows * R) return;
    const uint64_t q = e / R;
    const uint32_t r = (uint32_t)(e % R);
    uint64_t sub[MAXN], v = q;
    for (uint32_t m = km.b; m-- > km.a;) {
        sub[m] = v % km.dims[m];
        v /= km.dims[m];
    }
    double p = 1;
    for (uint32_t m = km.a; m < km.b; m++) p = __dmul_rn(p, A[(km.off[m] + sub[m]) * R + r]);
    out[e] = p;
}

/* M[i, r] = sum over p < P, q < Q of T[(p I + i) Q + q + r rows] KA[p R + r]
 * KB[q R + r]: block b is (i, r) = (b % I, b / I); the threads take the
 * terms in turn, then a tree sum in shared memory. */
__global__ void k_side_mttkrp(const double *T, uint64_t rows, const double *KA, const double *KB, uint64_t P,
                              uint64_t I, uint64_t Q, uint32_t R, double *M)
{
    __shared__ double part[THREADS];
    const uint64_t i = blockIdx.x % I;
    const uint32_t r = (uint32_t)(blockIdx.x / I);
    const double *t = T + (uint64_t)r * rows;
    double s = 0;
    for (uint64_t e = threadIdx.x; e < P * Q; e += THREADS) {
        const uint64_t p = e / Q, q = e - p * Q;
        s += t[(p * I + i) * Q + q] * KA[p * R + r] * KB[q * R + r];
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (unsigned w = THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) M[i * R + r] = part[0];
}

/* The same sum for short ones (P Q up to WARP_TERMS): a warp per (i, r),
 * eight to a block, lane-strided terms then a shuffle tree.  A block of
 * 256 threads for 100 terms left most of them idle and spent its time in
 * the eight barriers of the tree: at 100^4 the four modes' kernels were
 * most of a sweep's overhead above the two DGEMMs. */
#define WARP_TERMS 2048
__global__ void k_side_mttkrp_warp(const double *T, uint64_t rows, const double *KA, const double *KB, uint64_t P,
                                   uint64_t I, uint64_t Q, uint32_t R, double *M)
{
    const uint64_t w = (uint64_t)blockIdx.x * (THREADS / 32) + threadIdx.x / 32;
    const uint32_t lane = threadIdx.x & 31u;
    if (w >= I * R) return;
    const uint64_t i = w % I;
    const uint32_t r = (uint32_t)(w / I);
    const double *t = T + (uint64_t)r * rows;
    double s = 0;
    for (uint64_t e = lane; e < P * Q; e += 32) {
        const uint64_t p = e / Q, q = e - p * Q;
        s += t[(p * I + i) * Q + q] * KA[p * R + r] * KB[q * R + r];
    }
    for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
    if (lane == 0) M[i * R + r] = s;
}

/* Rows [o0, o1) of A projected on >= 0 (count = their entries). */
__global__ void k_nonneg(double *A, uint64_t count)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < count && !(A[e] > 0)) A[e] = 0;
}

/* Partial Gram matrices: chunk c = blockIdx.y of `chunk` rows of A (I x
 * R) into part[c R^2 + p R + q], each entry summed over its rows in
 * order.  With k_gram_sum after it the result depends only on A and I
 * (the chunks are cut by I alone), not on the device or the rank, and G
 * is exactly symmetric (a_p a_q = a_q a_p, summed in the same order). */
__global__ void k_gram_part(const double *A, uint64_t I, uint32_t R, uint64_t chunk, double *part)
{
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= R * R) return;
    const uint32_t p = e / R, q = e % R;
    const uint64_t i0 = blockIdx.y * chunk, i1 = i0 + chunk < I ? i0 + chunk : I;
    double s = 0;
    for (uint64_t i = i0; i < i1; i++) s += A[i * R + p] * A[i * R + q];
    part[(uint64_t)blockIdx.y * R * R + e] = s;
}

/* With Sigma, also EAA = G + I Sigma, as bcp.c's expect() forms it (no
 * fused multiply-add, which the host's C does not use either). */
__global__ void k_gram_sum(const double *part, uint32_t chunks, uint32_t R, double *G, const double *Sigma, double I,
                           double *EAA)
{
    const uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= R * R) return;
    double s = 0;
    for (uint32_t c = 0; c < chunks; c++) s += part[(uint64_t)c * R * R + e];
    G[e] = s;
    if (Sigma) EAA[e] = __dadd_rn(s, __dmul_rn(I, Sigma[e]));
}

/* *out = sum of a[e] b[e], e < count: one block, a fixed order. */
__global__ void k_inner(const double *a, const double *b, uint64_t count, double *out)
{
    __shared__ double part[THREADS];
    double s = 0;
    for (uint64_t e = threadIdx.x; e < count; e += THREADS) s += a[e] * b[e];
    part[threadIdx.x] = s;
    __syncthreads();
    for (unsigned w = THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = part[0];
}

/* A's column r of mode m times s[m R + r]; ends: mode m's rows end at
 * row ends.v[m]. */
struct mode_ends {
    uint64_t v[MAXN];
};

__global__ void k_scale(double *A, uint64_t rows, uint32_t R, struct mode_ends ends, const double *s)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rows * R) return;
    const uint64_t i = e / R;
    uint32_t m = 0;
    while (i >= ends.v[m]) m++;
    A[e] *= s[m * R + e % R];
}

struct keep_cols {
    uint32_t k[256];
};

__global__ void k_keep(const double *A, uint64_t rows, uint32_t R, struct keep_cols kc, uint32_t K, double *out)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rows * K) return;
    out[e] = A[(e / K) * R + kc.k[e % K]];
}

static uint64_t span(const bcp_gpu *g, uint32_t a, uint32_t b) { return dims_span(g->dims, a, b); }


extern "C" void bcp_gpu_destroy(bcp_gpu **pg)
{
    bcp_gpu *g = *pg;
    if (!g) return;
    cudaSetDevice(g->device);
    if (g->stream) cudaStreamSynchronize(g->stream);
    if (g->blas) g->cb->destroy(g->blas);
    cudaFree(g->y);
    cudaFree(g->A);
    cudaFree(g->ka);
    cudaFree(g->kb);
    cudaFree(g->T[0]);
    cudaFree(g->T[1]);
    cudaFree(g->M);
    cudaFree(g->spare);
    cudaFree(g->ones);
    cudaFree(g->small);
    cudaFree(g->sw);
    if (g->hbuf) cudaFreeHost(g->hbuf);
    if (g->hsmall) cudaFreeHost(g->hsmall);
    if (g->hsw) cudaFreeHost(g->hsw);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
    *pg = NULL;
}

static fd_status sigma_queue(bcp_gpu *g, uint32_t n, double tau);

/* Every kernel and cuBLAS routine once, on zero factors at Rmax: the
 * first call of each loads its module (lazy loading), tens of
 * milliseconds that belong to the setup, not to the first sweep. */
static fd_status warm_up(bcp_gpu *g)
{
    fd_status st = FD_OK;
    double *host = (double *)calloc((size_t)g->Rmax * g->Rmax + (size_t)MAXN * g->Rmax, sizeof(double));
    uint32_t keep[256];
    double v = 0;
    if (!host) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint32_t r = 0; r < g->Rmax; r++) keep[r] = r;
    CK(cudaMemsetAsync(g->A, 0, g->rows * g->Rmax * sizeof(double), g->stream));
    g->R = g->Rmax;
    for (int side = 0; side < 2 && st == FD_OK; side++) {
        const uint32_t n = side ? g->h : 0;
        st = bcp_gpu_contract(g, side);
        if (st == FD_OK) st = bcp_gpu_mttkrp(g, n);
        if (st == FD_OK) st = bcp_gpu_update(g, n, host, 0, 1, 0, g->full[n]);
        if (st == FD_OK) st = bcp_gpu_gram(g, n, 0, g->full[n], host, &v);
        /* The sweep's Sigma on zero matrices: flagged, and reset at a
         * sweep's start.  Loaded even where Rmax is above the sweep's
         * limit: pruning may bring a fit below it.  Both of k_sigma's
         * kinds (bcp_sigma.cuh: 4 entries a thread up to R = 45, 8
         * above), the first side at the largest R, the second at a small
         * one: a fit that prunes past 45 would load the other inside a
         * sweep. */
        if (st == FD_OK) {
            const uint32_t R0 = g->R, Rs = side ? 8 : BCP_GPU_SWEEP_RMAX;
            g->R = R0 < Rs ? R0 : Rs;
            st = sigma_queue(g, n, 1);
            g->R = R0;
        }
    }
    for (uint32_t e = 0; e < MAXN * g->Rmax; e++) host[e] = 1;
    if (st == FD_OK) st = bcp_gpu_scale(g, host);
    if (st == FD_OK) st = bcp_gpu_keep(g, keep, g->Rmax);
    if (st == FD_OK) CK(cudaStreamSynchronize(g->stream));
done:
    free(host);
    return st;
}

extern "C" fd_status bcp_gpu_create(bcp_gpu **out, int device, const double *x, uint32_t order, const uint64_t *dims,
                                    const uint64_t *lo, const uint64_t *full, uint32_t h, uint32_t Rmax)
{
    fd_status st = FD_OK;
    double t0;
    fd_upload *up = NULL;
    *out = NULL;
    if (order < 2 || order > MAXN || h < 1 || h >= order || Rmax < 1 || Rmax > 256)
        return fd_fail(FD_ERR_INTERNAL, "bcp_gpu_create: %u modes split at %u, rank %u", order, h, Rmax);
    bcp_gpu *g = (bcp_gpu *)calloc(1, sizeof *g);
    if (!g) return fd_fail(FD_ERR_NOMEM, "out of memory");
    g->device = device;
    g->order = order;
    g->h = h;
    g->R = g->Rmax = Rmax;
    g->size = 1;
    g->Imax = 1;
    for (uint32_t m = 0; m < order; m++) {
        g->dims[m] = dims[m];
        g->lo[m] = lo[m];
        g->full[m] = full[m];
        g->off[m] = g->rows;
        g->rows += full[m];
        g->size *= dims[m];
        g->Imax = full[m] > g->Imax ? full[m] : g->Imax;
    }
    const uint64_t L = span(g, 0, h), K = span(g, h, order), big = L > K ? L : K;
    /* cuBLAS takes int sizes, and a mode's kernel a block per (i, r). */
    if (L > INT32_MAX || K > INT32_MAX || g->rows * Rmax > INT32_MAX) {
        st = fd_fail(FD_ERR_INPUT, "a block of %llu x %llu (the two halves of its modes), or factors of %llu rows at "
                                   "rank %u, is too large for the GPU's products (2^31); use more ranks or --fuse",
                     (unsigned long long)L, (unsigned long long)K, (unsigned long long)g->rows, Rmax);
        goto done;
    }
    t0 = fd_now();
    CK(cudaSetDevice(device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    fd_cuda_say_time("bcp: the stream", t0);
    t0 = fd_now();
    FD_TRY_GOTO(fd_cublas_get(&g->cb), st, done);
    CB(g->cb->create(&g->blas));
    CB(g->cb->set_stream(g->blas, g->stream));
    fd_cuda_say_time("bcp: cuBLAS loaded and its handle made", t0);
    t0 = fd_now();
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->y, g->size * sizeof(double),
                              "the tensor block (more ranks, or --fuse K1xK2x..., make the blocks smaller)"),
                st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->A, g->rows * Rmax * sizeof(double), "the factors"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->spare, g->rows * Rmax * sizeof(double), "the factors"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->ka, big * Rmax * sizeof(double), "a Khatri-Rao product"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->kb, big * Rmax * sizeof(double), "a Khatri-Rao product"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->T[0], L * Rmax * sizeof(double), "the MTTKRP's intermediate"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->T[1], K * Rmax * sizeof(double), "the MTTKRP's intermediate"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->M, g->Imax * Rmax * sizeof(double), "the MTTKRP"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->small, (SLOTS(g) + (uint64_t)GRAM_CHUNKS * Rmax * Rmax) * sizeof(double),
                              "the Gram matrices"),
                st, done);
    CK(cudaHostAlloc((void **)&g->hbuf, g->rows * Rmax * sizeof(double), cudaHostAllocDefault));
    CK(cudaHostAlloc((void **)&g->hsmall, SLOTS(g) * sizeof(double), cudaHostAllocDefault));
    /* At Rmax (g->R here), the largest they will be. */
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->sw, SW_SIZE(g) * sizeof(double), "the sweep's R x R matrices"), st, done);
    CK(cudaMemset(g->sw, 0, SW_SIZE(g) * sizeof(double)));
    CK(cudaHostAlloc((void **)&g->hsw, SW_SIZE(g) * sizeof(double), cudaHostAllocDefault));
    fd_cuda_say_time("bcp: device and pinned memory", t0);
    t0 = fd_now();
    /* The block arrives on the copy engine while every kernel loads (on
     * an H100, 800 MB: both done in 55 ms, against 114 ms with the copy
     * pageable; bench/results/bcp-gpu-history.txt, step 11).  The warm-up
     * reads it, but on zero factors: over a block of zeros first, what
     * it reads is finite at every moment (each double the zeros' or the
     * input's), and 0 x finite = 0 makes its products the same zeros
     * whatever has arrived. */
    CK(cudaMemsetAsync(g->y, 0, g->size * sizeof(double), g->stream));
    CK(cudaStreamSynchronize(g->stream));
    FD_TRY_GOTO(fd_cuda_upload_start(&up, device, g->y, x, g->size * sizeof(double)), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->ones, Rmax * sizeof(double), "a row of ones"), st, done);
    for (uint32_t r = 0; r < Rmax; r++) g->hbuf[r] = 1;
    CK(cudaMemcpy(g->ones, g->hbuf, Rmax * sizeof(double), cudaMemcpyHostToDevice));
    FD_TRY_GOTO(warm_up(g), st, done);
    fd_cuda_say_time("bcp: every kernel once (warm-up)", t0);
    FD_TRY_GOTO(fd_cuda_upload_finish(&up), st, done);
    fd_cuda_say_time("bcp: the block on the device and every kernel once", t0);
    *out = g;
    g = NULL;
done:
    { /* never free the block under a copy still writing it */
        const fd_status up_st = fd_cuda_upload_finish(&up);
        if (st == FD_OK) st = up_st;
    }
    bcp_gpu_destroy(&g);
    return st;
}

/* Slices [l0, l0 + Lc) of the block (L x I x K, C order) into Z, column-
 * major I x (Lc K): column (l - l0) K + k is the slice's fibre (l, ., k). */
__global__ void k_unfold_slab(const double *y, uint64_t l0, uint64_t Lc, uint64_t I, uint64_t K, double *Z)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= Lc * I * K) return;
    const uint64_t k = e % K, i = (e / K) % I, l = e / (I * K);
    Z[i + I * (l * K + k)] = y[l0 * I * K + e];
}

#define GRAM_SCRATCH ((uint64_t)1 << 25) /* doubles (256 MB) */

extern "C" fd_status bcp_gpu_mode_gram(bcp_gpu *g, uint32_t n, double *G, int *done)
{
    fd_status st = FD_OK;
    const uint64_t I = g->dims[n], L = span(g, 0, n), K = span(g, n + 1, g->order);
    const uint64_t Lc = L == 1 || K == 1 ? L : (GRAM_SCRATCH / (I * K) > 0 ? GRAM_SCRATCH / (I * K) : 1);
    const double one = 1, zero = 0;
    double *dG = NULL, *Z = NULL;
    *done = 0;
    if (n >= g->order || I != g->full[n]) return fd_fail(FD_ERR_INTERNAL, "bcp_gpu_mode_gram: mode %u is split", n);
    if (I > INT32_MAX || L > INT32_MAX || K > INT32_MAX || (Lc < L && Lc * K > INT32_MAX)) return FD_OK;
    CK(cudaSetDevice(g->device));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&dG, I * I * sizeof(double), "a mode's Gram matrix"), st, done);
    /* Column-major, the block is K x (L I) (modes after n fastest): mode
     * 0's unfolding transposed; the last mode's is I x L. */
    if (L == 1) {
        CB(g->cb->dgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)I, (int)I, (int)K, &one, g->y, (int)K, g->y, (int)K,
                        &zero, dG, (int)I));
    } else if (K == 1) {
        CB(g->cb->dgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)I, (int)I, (int)L, &one, g->y, (int)I, g->y, (int)I,
                        &zero, dG, (int)I));
    } else { /* a middle mode: slab by slab of Lc slices, summed in order */
        const uint64_t rows = Lc < L ? Lc : L;
        /* No room beside the block (a slice past 256 MB on a full
         * device): the host's threads take the Gram instead. */
        if (cudaMalloc((void **)&Z, rows * I * K * sizeof(double)) != cudaSuccess) {
            cudaGetLastError();
            Z = NULL;
            goto done;
        }
        for (uint64_t l0 = 0; l0 < L; l0 += rows) {
            const uint64_t lc = L - l0 < rows ? L - l0 : rows;
            k_unfold_slab<<<blocks_for(lc * I * K), THREADS, 0, g->stream>>>(g->y, l0, lc, I, K, Z);
            CK(cudaGetLastError());
            CB(g->cb->dgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)I, (int)I, (int)(lc * K), &one, Z, (int)I, Z,
                            (int)I, l0 ? &one : &zero, dG, (int)I));
        }
    }
    /* Symmetric up to rounding: column-major or row-major, dsyevr reads
     * one triangle. */
    CK(cudaMemcpyAsync(G, dG, I * I * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    *done = 1;
done:
    cudaFree(Z);
    cudaFree(dG);
    return st;
}

/* The Khatri-Rao product of modes [a, b) of the factors' block rows. */
static void khatri_rao(bcp_gpu *g, uint32_t a, uint32_t b, double *out)
{
    struct kr_modes km;
    memset(&km, 0, sizeof km);
    for (uint32_t m = 0; m < g->order; m++) {
        km.dims[m] = g->dims[m];
        km.off[m] = g->off[m] + g->lo[m];
    }
    km.a = a;
    km.b = b;
    const uint64_t rows = span(g, a, b);
    k_khatri_rao<<<blocks_for(rows * g->R), THREADS, 0, g->stream>>>(g->A, km, rows, g->R, out);
}

/* The Khatri-Rao product of modes [a, b) for a mode's MTTKRP: built in
 * out, or, where there is nothing to multiply, the one mode's block rows
 * themselves or a row of ones (the same bits as the product: 1 x = x);
 * at order 4 every mode's products are of these kinds, which saves two
 * launches a mode. */
static const double *side_factors(bcp_gpu *g, uint32_t a, uint32_t b, double *out)
{
    if (b == a) return g->ones;
    if (b == a + 1) return g->A + (g->off[a] + g->lo[a]) * g->R;
    khatri_rao(g, a, b, out);
    return out;
}

extern "C" fd_status bcp_gpu_put(bcp_gpu *g, const double *const *A, uint32_t R)
{
    fd_status st = FD_OK;
    if (R > g->Rmax) return fd_fail(FD_ERR_INTERNAL, "bcp_gpu: rank %u above %u", R, g->Rmax);
    CK(cudaSetDevice(g->device));
    CK(cudaStreamSynchronize(g->stream)); /* hbuf free again */
    for (uint32_t m = 0; m < g->order; m++) memcpy(g->hbuf + g->off[m] * R, A[m], g->full[m] * R * sizeof(double));
    g->R = R;
    CK(cudaMemcpyAsync(g->A, g->hbuf, g->rows * R * sizeof(double), cudaMemcpyHostToDevice, g->stream));
done:
    return st;
}

extern "C" fd_status bcp_gpu_get(bcp_gpu *g, double *const *A)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R;
    CK(cudaSetDevice(g->device));
    CK(cudaMemcpyAsync(g->hbuf, g->A, g->rows * R * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    for (uint32_t m = 0; m < g->order; m++) memcpy(A[m], g->hbuf + g->off[m] * R, g->full[m] * R * sizeof(double));
done:
    return st;
}

extern "C" fd_status bcp_gpu_contract(bcp_gpu *g, int side)
{
    fd_status st = FD_OK;
    const uint64_t L = span(g, 0, g->h), K = span(g, g->h, g->order);
    const int R = (int)g->R;
    const double one = 1, zero = 0;
    CK(cudaSetDevice(g->device));
    if (side == 0) {
        /* T0 (L x R) = (Y^T)^T (L x K) KR, KR = (KR^T)^T: R x K column-major. */
        khatri_rao(g, g->h, g->order, g->kb);
        CK(cudaGetLastError());
        CB(g->cb->dgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_T, (int)L, R, (int)K, &one, g->y, (int)K, g->kb, R, &zero,
                       g->T[0], (int)L));
    } else {
        /* T1 (K x R) = Y^T (K x L) KL. */
        khatri_rao(g, 0, g->h, g->ka);
        CK(cudaGetLastError());
        CB(g->cb->dgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)K, R, (int)L, &one, g->y, (int)K, g->ka, R, &zero,
                       g->T[1], (int)K));
    }
done:
    return st;
}

extern "C" fd_status bcp_gpu_mttkrp(bcp_gpu *g, uint32_t n)
{
    fd_status st = FD_OK;
    const int side = n >= g->h;
    const uint32_t a = side ? g->h : 0, b = side ? g->order : g->h, R = g->R;
    const uint64_t P = span(g, a, n), I = g->dims[n], Q = span(g, n + 1, b), rows = span(g, a, b);
    double *const M = g->M + g->lo[n] * R;
    const double *KA, *KB;
    CK(cudaSetDevice(g->device));
    if (I < g->full[n]) CK(cudaMemsetAsync(g->M, 0, g->full[n] * R * sizeof(double), g->stream));
    KA = side_factors(g, a, n, g->ka);
    KB = side_factors(g, n + 1, b, g->kb);
    if (P * Q <= WARP_TERMS)
        k_side_mttkrp_warp<<<blocks_for(I * R * 32), THREADS, 0, g->stream>>>(g->T[side], rows, KA, KB, P, I, Q, R, M);
    else
        k_side_mttkrp<<<(unsigned)(I * R), THREADS, 0, g->stream>>>(g->T[side], rows, KA, KB, P, I, Q, R, M);
    CK(cudaGetLastError());
done:
    return st;
}

/* Rows [o0, o1) of A(n) = tau M Sigma, Sigma (R x R) on the device. */
static fd_status update_queue(bcp_gpu *g, uint32_t n, const double *Sigma, double tau, int nonneg, uint64_t o0,
                              uint64_t o1)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R;
    const double zero = 0;
    double *const A = g->A + (g->off[n] + o0) * R;
    if (o1 <= o0) return FD_OK;
    /* Row-major A (rows x R) = tau M Sigma is, column-major, A^T = tau
     * Sigma M^T (Sigma symmetric). */
    CB(g->cb->dgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)R, (int)(o1 - o0), (int)R, &tau, Sigma, (int)R,
                   g->M + o0 * R, (int)R, &zero, A, (int)R));
    if (nonneg) {
        k_nonneg<<<blocks_for((o1 - o0) * R), THREADS, 0, g->stream>>>(A, (o1 - o0) * R);
        CK(cudaGetLastError());
    }
done:
    return st;
}

extern "C" fd_status bcp_gpu_update(bcp_gpu *g, uint32_t n, const double *Sigma, double tau, int nonneg, uint64_t o0,
                                    uint64_t o1)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R;
    CK(cudaSetDevice(g->device));
    if (o1 <= o0) goto done;
    /* Sigma's slot is free: the last copy from it came before the last
     * Gram, which waited. */
    memcpy(g->hsmall + SLOT_SIGMA(g), Sigma, (size_t)R * R * sizeof(double));
    CK(cudaMemcpyAsync(g->small + SLOT_SIGMA(g), g->hsmall + SLOT_SIGMA(g), (size_t)R * R * sizeof(double),
                       cudaMemcpyHostToDevice, g->stream));
    st = update_queue(g, n, g->small + SLOT_SIGMA(g), tau, nonneg, o0, o1);
done:
    return st;
}

/* G (R x R, device) = A(n)^T A(n); with Sigma (device), EAA = G + I_n
 * Sigma as well; with v (device), *v = <M, A(n)> over rows [o0, o1). */
static fd_status gram_queue(bcp_gpu *g, uint32_t n, double *G, const double *Sigma, double *EAA, uint64_t o0,
                            uint64_t o1, double *v)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R;
    const uint64_t I = g->full[n];
    const uint64_t chunk = (I + GRAM_CHUNKS - 1) / GRAM_CHUNKS > 0 ? (I + GRAM_CHUNKS - 1) / GRAM_CHUNKS : 1;
    const uint32_t chunks = (uint32_t)((I + chunk - 1) / chunk);
    double *const part = g->small + SLOTS(g);
    k_gram_part<<<dim3(blocks_for((uint64_t)R * R), chunks), THREADS, 0, g->stream>>>(g->A + g->off[n] * R, I, R,
                                                                                      chunk, part);
    k_gram_sum<<<blocks_for((uint64_t)R * R), THREADS, 0, g->stream>>>(part, chunks, R, G, Sigma, (double)I, EAA);
    CK(cudaGetLastError());
    if (v) {
        k_inner<<<1, THREADS, 0, g->stream>>>(g->M + o0 * R, g->A + (g->off[n] + o0) * R, (o1 - o0) * R, v);
        CK(cudaGetLastError());
    }
done:
    return st;
}

extern "C" fd_status bcp_gpu_gram(bcp_gpu *g, uint32_t n, uint64_t o0, uint64_t o1, double *G, double *v)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R;
    CK(cudaSetDevice(g->device));
    FD_TRY_GOTO(gram_queue(g, n, g->small + SLOT_GRAM(g), NULL, NULL, o0, o1, v ? g->small + SLOT_INNER(g) : NULL), st,
                done);
    CK(cudaMemcpyAsync(g->hsmall + SLOT_GRAM(g), g->small + SLOT_GRAM(g), (size_t)R * R * sizeof(double),
                       cudaMemcpyDeviceToHost, g->stream));
    if (v)
        CK(cudaMemcpyAsync(g->hsmall + SLOT_INNER(g), g->small + SLOT_INNER(g), sizeof(double), cudaMemcpyDeviceToHost,
                           g->stream));
    CK(cudaStreamSynchronize(g->stream));
    memcpy(G, g->hsmall + SLOT_GRAM(g), (size_t)R * R * sizeof(double));
    if (v) *v = g->hsmall[SLOT_INNER(g)];
done:
    return st;
}

static_assert(BCP_GPU_SWEEP_RMAX <= K_SIGMA_RMAX, "the sweep's ranks are the covariance kernel's");

/* Sigma_n's kernel (k_sigma) at the rank now. */
static fd_status sigma_queue(bcp_gpu *g, uint32_t n, double tau)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R;
    const uint64_t RR = (uint64_t)R * R;
    k_sigma_launch(g->stream, g->sw + SW_EAA(g), g->order, n, R, tau, g->sw + SW_LAMBDA(g), g->sw + SW_SIGMA(g) + n * RR,
                   g->sw + SW_LOGDET(g) + n, g->sw + SW_BAD(g));
    CK(cudaGetLastError());
done:
    return st;
}

extern "C" fd_status bcp_gpu_sweep_begin(bcp_gpu *g, const double *const *EAA, const double *lambda)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R;
    const uint64_t RR = (uint64_t)R * R;
    if (R > BCP_GPU_SWEEP_RMAX) return fd_fail(FD_ERR_INTERNAL, "bcp_gpu_sweep_begin: rank %u above %u", R, BCP_GPU_SWEEP_RMAX);
    CK(cudaSetDevice(g->device));
    /* hsw is free: the last sweep's copy down was waited for. */
    for (uint32_t k = 0; k < g->order; k++) memcpy(g->hsw + SW_EAA(g) + k * RR, EAA[k], RR * sizeof(double));
    memcpy(g->hsw + SW_LAMBDA(g), lambda, R * sizeof(double));
    g->hsw[SW_YX(g)] = 0;
    g->hsw[SW_BAD(g)] = 0;
    CK(cudaMemcpyAsync(g->sw, g->hsw, SW_IN(g) * sizeof(double), cudaMemcpyHostToDevice, g->stream));
done:
    return st;
}

extern "C" fd_status bcp_gpu_sweep_mode(bcp_gpu *g, uint32_t n, double tau, int nonneg)
{
    fd_status st = FD_OK;
    const uint64_t RR = (uint64_t)g->R * g->R, I = g->full[n];
    double *const Sigma = g->sw + SW_SIGMA(g) + n * RR;
    CK(cudaSetDevice(g->device));
    FD_TRY_GOTO(sigma_queue(g, n, tau), st, done);
    FD_TRY_GOTO(update_queue(g, n, Sigma, tau, nonneg, 0, I), st, done);
    FD_TRY_GOTO(gram_queue(g, n, g->sw + SW_AA(g) + n * RR, Sigma, g->sw + SW_EAA(g) + n * RR, 0, I,
                           n == g->order - 1 ? g->sw + SW_YX(g) : NULL),
                st, done);
done:
    return st;
}

extern "C" fd_status bcp_gpu_sweep_end(bcp_gpu *g, double *const *Sigma, double *const *AA, double *const *EAA,
                                       double *logdet, double *yx, uint32_t *bad)
{
    fd_status st = FD_OK;
    const uint64_t RR = (uint64_t)g->R * g->R;
    CK(cudaSetDevice(g->device));
    CK(cudaMemcpyAsync(g->hsw, g->sw, SW_SIZE(g) * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    for (uint32_t k = 0; k < g->order; k++) {
        memcpy(Sigma[k], g->hsw + SW_SIGMA(g) + k * RR, RR * sizeof(double));
        memcpy(AA[k], g->hsw + SW_AA(g) + k * RR, RR * sizeof(double));
        memcpy(EAA[k], g->hsw + SW_EAA(g) + k * RR, RR * sizeof(double));
        logdet[k] = g->hsw[SW_LOGDET(g) + k];
    }
    *yx = g->hsw[SW_YX(g)];
    *bad = (uint32_t)g->hsw[SW_BAD(g)];
done:
    return st;
}

extern "C" fd_status bcp_gpu_scale(bcp_gpu *g, const double *s)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R;
    struct mode_ends ends;
    for (uint32_t m = 0; m < MAXN; m++) ends.v[m] = m < g->order ? g->off[m] + g->full[m] : UINT64_MAX;
    CK(cudaSetDevice(g->device));
    memcpy(g->hsmall + SLOT_SCALE(g), s, (size_t)g->order * R * sizeof(double));
    CK(cudaMemcpyAsync(g->small + SLOT_SCALE(g), g->hsmall + SLOT_SCALE(g), (size_t)g->order * R * sizeof(double),
                       cudaMemcpyHostToDevice, g->stream));
    k_scale<<<blocks_for(g->rows * R), THREADS, 0, g->stream>>>(g->A, g->rows, R, ends, g->small + SLOT_SCALE(g));
    CK(cudaGetLastError());
    /* No wait: the slot is filled again a sweep later, after the Gram
     * matrices' waits. */
done:
    return st;
}

extern "C" fd_status bcp_gpu_keep(bcp_gpu *g, const uint32_t *keep, uint32_t K)
{
    fd_status st = FD_OK;
    struct keep_cols kc;
    memset(&kc, 0, sizeof kc);
    if (K > g->R) return fd_fail(FD_ERR_INTERNAL, "bcp_gpu_keep: %u of %u columns", K, g->R);
    memcpy(kc.k, keep, K * sizeof *keep);
    CK(cudaSetDevice(g->device));
    k_keep<<<blocks_for(g->rows * K), THREADS, 0, g->stream>>>(g->A, g->rows, g->R, kc, K, g->spare);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(g->A, g->spare, g->rows * K * sizeof(double), cudaMemcpyDeviceToDevice, g->stream));
    g->R = K;
done:
    return st;
}

extern "C" uint32_t bcp_gpu_rank(const bcp_gpu *g) { return g->R; }
extern "C" double *bcp_gpu_M(bcp_gpu *g) { return g->M; }
extern "C" double *bcp_gpu_A(bcp_gpu *g, uint32_t n) { return g->A + g->off[n] * g->R; }
extern "C" void *bcp_gpu_stream(bcp_gpu *g) { return (void *)g->stream; }

extern "C" fd_status bcp_gpu_copy(bcp_gpu *g, double *dst, const double *src, uint64_t count, int to_host)
{
    fd_status st = FD_OK;
    CK(cudaSetDevice(g->device));
    CK(cudaMemcpyAsync(dst, src, count * sizeof(double), to_host ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice,
                       g->stream));
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}
