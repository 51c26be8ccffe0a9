/* bcp's MTTKRP on the GPU (see bcp_gpu.h).  With L the rows of the modes
 * before n, I = dims[n] and K the rows of the modes after n, the block is
 * an L x I x K array, and
 *   M[i, r] = sum over l, k of Y[l, i, k] KL[l, r] KR[k, r].
 * When L <= K: Z = Y (L I x K) KR (K x R) by DGEMM, then M[i, r] = sum over
 * l of Z[l, i, r] KL[l, r]; else W = Y^T-ish (I K x L) KL (L x R), then
 * M[i, r] = sum over k of W[i, k, r] KR[k, r].  The intermediate is the
 * smaller of L I R and I K R doubles; the DGEMM reads the block once. */
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
    uint32_t order, Rmax;
    uint64_t dims[MAXN], size, rows; /* rows: sum of dims */
    uint64_t off[MAXN];              /* mode m's rows start at row off[m] of A */
    double *y, *A, *kl, *kr, *z, *M;
    double *hA;                      /* pinned: the factors on their way up */
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

/* M[i, r] = sum over j < J of Z[(j I + i) R + r] S[j R + r] (right-first:
 * Z is L I x R row-major, S = KL, J = L). */
__global__ void k_fold_left(const double *Z, const double *S, uint64_t J, uint64_t I, uint32_t R, double *M)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= I * R) return;
    const uint64_t i = e / R;
    const uint32_t r = (uint32_t)(e % R);
    double s = 0;
    for (uint64_t j = 0; j < J; j++) s += Z[(j * I + i) * R + r] * S[j * R + r];
    M[e] = s;
}

/* M[i, r] = sum over k < K of W[(i K + k) + r I K] KR[k R + r] (left-first:
 * W is I K x R column-major). */
__global__ void k_fold_right(const double *W, const double *KR, uint64_t I, uint64_t K, uint32_t R, double *M)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= I * R) return;
    const uint64_t i = e / R;
    const uint32_t r = (uint32_t)(e % R);
    double s = 0;
    for (uint64_t k = 0; k < K; k++) s += W[(i * K + k) + (uint64_t)r * I * K] * KR[k * R + r];
    M[e] = s;
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
    cudaFree(g->kl);
    cudaFree(g->kr);
    cudaFree(g->z);
    cudaFree(g->M);
    if (g->hA) cudaFreeHost(g->hA);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
    *pg = NULL;
}

extern "C" fd_status bcp_gpu_create(bcp_gpu **out, int device, const double *x, uint32_t order, const uint64_t *dims,
                                    uint32_t Rmax)
{
    fd_status st = FD_OK;
    *out = NULL;
    if (order < 1 || order > MAXN) return fd_fail(FD_ERR_INTERNAL, "bcp_gpu_create: %u modes", order);
    bcp_gpu *g = (bcp_gpu *)calloc(1, sizeof *g);
    if (!g) return fd_fail(FD_ERR_NOMEM, "out of memory");
    g->device = device;
    g->order = order;
    g->Rmax = Rmax;
    g->size = 1;
    uint64_t kl = 1, kr = 1, zmax = 1, Imax = 1;
    for (uint32_t m = 0; m < order; m++) {
        g->dims[m] = dims[m];
        g->off[m] = g->rows;
        g->rows += dims[m];
        g->size *= dims[m];
    }
    for (uint32_t n = 0; n < order; n++) {
        const uint64_t L = span(g, 0, n), I = g->dims[n], K = span(g, n + 1, order);
        kl = L > kl ? L : kl;
        kr = K > kr ? K : kr;
        Imax = I > Imax ? I : Imax;
        const uint64_t z = (L <= K ? L : K) * I;
        zmax = z > zmax ? z : zmax;
        if (L * I > INT32_MAX || I * K > INT32_MAX || K > INT32_MAX || L > INT32_MAX) {
            st = fd_fail(FD_ERR_INPUT, "a block of %llu x %llu x %llu is too large for one GPU product (2^31)",
                         (unsigned long long)L, (unsigned long long)I, (unsigned long long)K);
            goto done;
        }
    }
    CK(cudaSetDevice(device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    CB(cublasCreate(&g->blas));
    CB(cublasSetStream(g->blas, g->stream));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->y, g->size * sizeof(double), "the tensor block"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->A, g->rows * Rmax * sizeof(double), "the factors"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->kl, kl * Rmax * sizeof(double), "a Khatri-Rao product"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->kr, kr * Rmax * sizeof(double), "a Khatri-Rao product"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->z, zmax * Rmax * sizeof(double), "the MTTKRP's intermediate"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->M, Imax * Rmax * sizeof(double), "the MTTKRP"), st, done);
    CK(cudaHostAlloc((void **)&g->hA, g->rows * Rmax * sizeof(double), cudaHostAllocDefault));
    CK(cudaMemcpy(g->y, x, g->size * sizeof(double), cudaMemcpyHostToDevice));
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

extern "C" fd_status bcp_gpu_mttkrp(bcp_gpu *g, uint32_t n, const double *const *A, uint32_t R, double *M)
{
    fd_status st = FD_OK;
    const uint64_t L = span(g, 0, n), I = g->dims[n], K = span(g, n + 1, g->order);
    const double one = 1, zero = 0;
    if (R > g->Rmax) return fd_fail(FD_ERR_INTERNAL, "bcp_gpu_mttkrp: rank %u above %u", R, g->Rmax);
    CK(cudaSetDevice(g->device));
    /* The factors, packed at rank R, up in one copy. */
    for (uint32_t m = 0; m < g->order; m++) memcpy(g->hA + g->off[m] * R, A[m], g->dims[m] * R * sizeof(double));
    CK(cudaMemcpyAsync(g->A, g->hA, g->rows * R * sizeof(double), cudaMemcpyHostToDevice, g->stream));
    khatri_rao(g, 0, n, R, g->kl);
    khatri_rao(g, n + 1, g->order, R, g->kr);
    CK(cudaGetLastError());
    if (L <= K) {
        /* Z (L I x R, row-major) = Y (L I x K) KR (K x R): column-major,
         * Z^T (R x L I) = KR^T (R x K) Y^T (K x L I). */
        CB(cublasDgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)R, (int)(L * I), (int)K, &one, g->kr, (int)R, g->y,
                       (int)K, &zero, g->z, (int)R));
        k_fold_left<<<blocks_for(I * R), THREADS, 0, g->stream>>>(g->z, g->kl, L, I, R, g->M);
    } else {
        /* W (I K x R, column-major) = Y' (I K x L; element (ik, l) is
         * Y[l, i, k]) KL (L x R). */
        CB(cublasDgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)(I * K), (int)R, (int)L, &one, g->y, (int)(I * K),
                       g->kl, (int)R, &zero, g->z, (int)(I * K)));
        k_fold_right<<<blocks_for(I * R), THREADS, 0, g->stream>>>(g->z, g->kr, I, K, R, g->M);
    }
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(M, g->M, I * R * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}
