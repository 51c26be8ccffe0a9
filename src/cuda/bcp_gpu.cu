/* bcp's MTTKRPs on the GPU (see bcp_gpu.h).  The block is an L x K
 * matrix Y (L: the rows of modes [0, h), K: of modes [h, N); C order, so
 * column-major it is Y^T, K x L).  Side 0: T0 (L x R) = Y KR, side 1: T1
 * (K x R) = Y^T KL, each one DGEMM that reads the block once; both are
 * kept column-major (rows x R), so that a mode's MTTKRP reads a
 * component's column of T with consecutive threads.  A mode n of a side
 * (P rows of its modes before n, I = dims[n], Q after n):
 *   M[i, r] = sum over p, q of T[(p I + i) Q + q, r] KA[p, r] KB[q, r],
 * one block of threads per (i, r), summed in a fixed order. */
#include "check.cuh"
#include "bcp_gpu.h"

#include <cublas_v2.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 8
#define THREADS 256

struct bcp_gpu {
    int device;
    cudaStream_t stream;
    cublasHandle_t blas;
    uint32_t order, h, Rmax;
    uint64_t dims[MAXN], size, rows; /* rows: sum of dims */
    uint64_t off[MAXN];              /* mode m's rows start at row off[m] of A */
    double *y, *A, *ka, *kb, *T[2], *M;
    double *hA;                      /* pinned: the factors as last sent up */
    uint32_t upR;                    /* the rank hA is packed at; 0: nothing sent yet */
};

#define CK(call) CUDA_CHECK_GOTO(call, st, done)
#define CB(call)                                                                                                       \
    do {                                                                                                               \
        const cublasStatus_t cb_ = (call);                                                                             \
        if (cb_ != CUBLAS_STATUS_SUCCESS) {                                                                            \
            st = fd_fail_at(FD_ERR_CUDA, __FILE__, __LINE__, "%s: cuBLAS status %d", #call, (int)cb_);                 \
            goto done;                                                                                                 \
        }                                                                                                              \
    } while (0)

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

static uint64_t span(const bcp_gpu *g, uint32_t a, uint32_t b)
{
    uint64_t p = 1;
    for (uint32_t m = a; m < b; m++) p *= g->dims[m];
    return p;
}

static unsigned blocks_for(uint64_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

extern "C" void bcp_gpu_destroy(bcp_gpu **pg)
{
    bcp_gpu *g = *pg;
    if (!g) return;
    cudaSetDevice(g->device);
    if (g->stream) cudaStreamSynchronize(g->stream);
    if (g->blas) cublasDestroy(g->blas);
    cudaFree(g->y);
    cudaFree(g->A);
    cudaFree(g->ka);
    cudaFree(g->kb);
    cudaFree(g->T[0]);
    cudaFree(g->T[1]);
    cudaFree(g->M);
    if (g->hA) cudaFreeHost(g->hA);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
    *pg = NULL;
}

extern "C" fd_status bcp_gpu_create(bcp_gpu **out, int device, const double *x, uint32_t order, const uint64_t *dims,
                                    uint32_t h, uint32_t Rmax)
{
    fd_status st = FD_OK;
    *out = NULL;
    if (order < 2 || order > MAXN || h < 1 || h >= order)
        return fd_fail(FD_ERR_INTERNAL, "bcp_gpu_create: %u modes split at %u", order, h);
    bcp_gpu *g = (bcp_gpu *)calloc(1, sizeof *g);
    if (!g) return fd_fail(FD_ERR_NOMEM, "out of memory");
    g->device = device;
    g->order = order;
    g->h = h;
    g->Rmax = Rmax;
    g->size = 1;
    uint64_t Imax = 1;
    for (uint32_t m = 0; m < order; m++) {
        g->dims[m] = dims[m];
        g->off[m] = g->rows;
        g->rows += dims[m];
        g->size *= dims[m];
        Imax = dims[m] > Imax ? dims[m] : Imax;
    }
    const uint64_t L = span(g, 0, h), K = span(g, h, order), big = L > K ? L : K;
    /* cuBLAS takes int sizes, and a mode's kernel a block per (i, r). */
    if (L > INT32_MAX || K > INT32_MAX || Imax * Rmax > INT32_MAX) {
        st = fd_fail(FD_ERR_INPUT, "a block of %llu x %llu (the two halves of its modes), or a mode of %llu rows at "
                                   "rank %u, is too large for the GPU's products (2^31); use more ranks or --fuse",
                     (unsigned long long)L, (unsigned long long)K, (unsigned long long)Imax, Rmax);
        goto done;
    }
    CK(cudaSetDevice(device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    CB(cublasCreate(&g->blas));
    CB(cublasSetStream(g->blas, g->stream));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->y, g->size * sizeof(double),
                              "the tensor block (more ranks, or --fuse K1xK2x..., make the blocks smaller)"),
                st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->A, g->rows * Rmax * sizeof(double), "the factors"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->ka, big * Rmax * sizeof(double), "a Khatri-Rao product"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->kb, big * Rmax * sizeof(double), "a Khatri-Rao product"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->T[0], L * Rmax * sizeof(double), "the MTTKRP's intermediate"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->T[1], K * Rmax * sizeof(double), "the MTTKRP's intermediate"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->M, Imax * Rmax * sizeof(double), "the MTTKRP"), st, done);
    CK(cudaHostAlloc((void **)&g->hA, g->rows * Rmax * sizeof(double), cudaHostAllocDefault));
    CK(cudaMemcpy(g->y, x, g->size * sizeof(double), cudaMemcpyHostToDevice));
    /* One product of each kind on zero factors: the first call of a
     * cuBLAS or CUDA kernel loads its module (lazy loading), tens of
     * milliseconds that belong to the setup, not to the first sweep. */
    {
        const double *zero[MAXN];
        double *M = (double *)calloc(2 * Imax * Rmax, sizeof(double)); /* zero factors, then M */
        for (uint32_t m = 0; m < order; m++) zero[m] = M + Imax * Rmax;
        if (!M) {
            st = fd_fail(FD_ERR_NOMEM, "out of memory");
            goto done;
        }
        for (int side = 0; side < 2 && st == FD_OK; side++) {
            st = bcp_gpu_contract(g, side, zero, Rmax);
            if (st == FD_OK) st = bcp_gpu_mttkrp(g, side ? h : 0, zero, Rmax, M);
        }
        free(M);
        if (st != FD_OK) goto done;
    }
    *out = g;
    g = NULL;
done:
    bcp_gpu_destroy(&g);
    return st;
}

/* The Khatri-Rao product of modes [a, b) of the factors on the device. */
static void khatri_rao(bcp_gpu *g, uint32_t a, uint32_t b, uint32_t R, double *out)
{
    struct kr_modes km;
    memset(&km, 0, sizeof km);
    for (uint32_t m = 0; m < g->order; m++) {
        km.dims[m] = g->dims[m];
        km.off[m] = g->off[m];
    }
    km.a = a;
    km.b = b;
    const uint64_t rows = span(g, a, b);
    k_khatri_rao<<<blocks_for(rows * R), THREADS, 0, g->stream>>>(g->A, km, rows, R, out);
}

/* The factors, packed at rank R, up in one copy of the modes that
 * changed since the last (they are small, but a sweep calls this six
 * times and one mode changes between calls). */
static fd_status upload(bcp_gpu *g, const double *const *A, uint32_t R)
{
    fd_status st = FD_OK;
    if (R > g->Rmax) return fd_fail(FD_ERR_INTERNAL, "bcp_gpu: rank %u above %u", R, g->Rmax);
    CK(cudaSetDevice(g->device));
    /* The last copy from hA must be done before hA is overwritten. */
    CK(cudaStreamSynchronize(g->stream));
    {
        uint64_t lo = g->rows, hi = 0; /* the changed rows */
        for (uint32_t m = 0; m < g->order; m++) {
            double *const h = g->hA + g->off[m] * R;
            const size_t bytes = g->dims[m] * R * sizeof(double);
            if (R == g->upR && memcmp(h, A[m], bytes) == 0) continue;
            memcpy(h, A[m], bytes);
            lo = g->off[m] < lo ? g->off[m] : lo;
            hi = g->off[m] + g->dims[m];
        }
        g->upR = R;
        if (lo < hi)
            CK(cudaMemcpyAsync(g->A + lo * R, g->hA + lo * R, (hi - lo) * R * sizeof(double), cudaMemcpyHostToDevice,
                               g->stream));
    }
done:
    return st;
}

extern "C" fd_status bcp_gpu_contract(bcp_gpu *g, int side, const double *const *A, uint32_t R)
{
    fd_status st = FD_OK;
    const uint64_t L = span(g, 0, g->h), K = span(g, g->h, g->order);
    const double one = 1, zero = 0;
    FD_TRY(upload(g, A, R));
    if (side == 0) {
        /* T0 (L x R) = (Y^T)^T (L x K) KR, KR = (KR^T)^T: R x K column-major. */
        khatri_rao(g, g->h, g->order, R, g->kb);
        CK(cudaGetLastError());
        CB(cublasDgemm(g->blas, CUBLAS_OP_T, CUBLAS_OP_T, (int)L, (int)R, (int)K, &one, g->y, (int)K, g->kb, (int)R,
                       &zero, g->T[0], (int)L));
    } else {
        /* T1 (K x R) = Y^T (K x L) KL. */
        khatri_rao(g, 0, g->h, R, g->ka);
        CK(cudaGetLastError());
        CB(cublasDgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)K, (int)R, (int)L, &one, g->y, (int)K, g->ka, (int)R,
                       &zero, g->T[1], (int)K));
    }
done:
    return st;
}

extern "C" fd_status bcp_gpu_mttkrp(bcp_gpu *g, uint32_t n, const double *const *A, uint32_t R, double *M)
{
    fd_status st = FD_OK;
    const int side = n >= g->h;
    const uint32_t a = side ? g->h : 0, b = side ? g->order : g->h;
    const uint64_t P = span(g, a, n), I = g->dims[n], Q = span(g, n + 1, b), rows = span(g, a, b);
    FD_TRY(upload(g, A, R));
    khatri_rao(g, a, n, R, g->ka);
    khatri_rao(g, n + 1, b, R, g->kb);
    if (P * Q <= WARP_TERMS)
        k_side_mttkrp_warp<<<blocks_for(I * R * 32), THREADS, 0, g->stream>>>(g->T[side], rows, g->ka, g->kb, P, I, Q,
                                                                             R, g->M);
    else
        k_side_mttkrp<<<(unsigned)(I * R), THREADS, 0, g->stream>>>(g->T[side], rows, g->ka, g->kb, P, I, Q, R, g->M);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(M, g->M, I * R * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}
