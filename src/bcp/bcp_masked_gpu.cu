/* SPDX-License-Identifier: BSD-3-Clause */
/* The masked fit's sums on the GPU (see bcp_masked_gpu.h).  Mode n
 * splits the tensor's modes into those before it (L rows of their
 * Khatri-Rao product) and those after it (K rows); in C order the
 * tensor is then an (L I) x K matrix and an L x (I K) one, I = dims[n].
 * With L <= K, one DGEMM contracts the K side:
 *   T[(l I + i), q] = sum_k X[(l I + i), k] KA[k, q],
 * and a kernel the L side: out[i, q] = sum_l T[(l I + i), q] KB[l, q].
 * Otherwise the L side goes first (T[(i K + k), q] = sum_l X[l, (i K +
 * k)] KB[l, q]) and the kernel sums over k.  T holds min(L, K) I rows,
 * so the intermediate stays small while the DGEMM reads the tensor once.
 * Every sum runs in a fixed order: the same bits on every rank. */
#include "bcp_masked_gpu.h"
#include "bcp_gpu_launch.cuh"
#include "../cuda/check.cuh"
#include "../cuda/cublas_load.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 8

/* The rows of one mode as a kernel sees them: means (width R), moments
 * or the means' outer products (width P, packed). */
enum family { F_MEAN, F_MOMENT, F_OUTER };

struct bcp_mgpu {
    int device;
    cudaStream_t stream;
    const fd_cublas *cb;
    cublasHandle_t blas;
    uint32_t order, R, Rmax;
    uint64_t dims[MAXN], size, Imax;
    double *w, *y;                                 /* the indicator and the values */
    double *F[3][MAXN];                            /* each family's rows of each mode */
    double *kbig, *ksmall, *T, *out;               /* the longer side's product, the other's, DGEMM's, the sums */
    uint64_t cap_big, cap_small, cap_T;            /* their rows */
};

static uint32_t packed(uint32_t R) { return R * (R + 1) / 2; }

static uint64_t span(const bcp_mgpu *g, uint32_t a, uint32_t b) { return dims_span(g->dims, a, b); }

#define CK(call) CUDA_CHECK_GOTO(call, st, done)
#define CB(call) CUBLAS_CHECK_GOTO(call, st, done)

__global__ void k_indicator(const uint8_t *observed, uint64_t n, double *w)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e < n) w[e] = observed[e] ? 1.0 : 0.0;
}

/* Packed a a^T of each of I rows of A (I x R). */
__global__ void k_outer(const double *A, uint64_t I, uint32_t R, double *out)
{
    const uint32_t P = R * (R + 1) / 2;
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= I * P) return;
    const uint64_t i = e / P;
    uint32_t p = (uint32_t)(e % P), a = 0;
    while (p >= R - a) { /* (a, b), a <= b, in the order of the packed upper triangle */
        p -= R - a;
        a++;
    }
    out[e] = A[i * R + a] * A[i * R + a + p];
}

struct krp_modes {
    const double *F[MAXN];
    uint64_t dims[MAXN];
    uint32_t a, b;
};

/* The Khatri-Rao product of modes [a, b) of one family (width Q), in C
 * order (the last mode's index fastest); no modes: one row of ones. */
__global__ void k_krp(struct krp_modes km, uint64_t rows, uint32_t Q, double *out)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= rows * Q) return;
    const uint32_t q = (uint32_t)(e % Q);
    uint64_t v = e / Q;
    double p = 1;
    for (uint32_t m = km.b; m-- > km.a;) {
        const uint64_t s = v % km.dims[m];
        v /= km.dims[m];
        p *= km.F[m][s * Q + q];
    }
    out[e] = p;
}

/* out[i, q] = sum_j T[row(i, j), q] K[j, q], j < J in order: row(i, j)
 * = j I + i when the DGEMM took the side after the mode (lead = 1), i J
 * + j when it took the side before. */
__global__ void k_fold(const double *T, const double *K, uint64_t I, uint64_t J, uint32_t Q, int lead, double *out)
{
    const uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= I * Q) return;
    const uint64_t i = e / Q;
    const uint32_t q = (uint32_t)(e % Q);
    double s = 0;
    for (uint64_t j = 0; j < J; j++) s += T[(lead ? j * I + i : i * J + j) * Q + q] * K[j * Q + q];
    out[e] = s;
}

extern "C" void bcp_mgpu_destroy(bcp_mgpu **pg)
{
    bcp_mgpu *g = *pg;
    if (!g) return;
    cudaSetDevice(g->device);
    if (g->stream) cudaStreamSynchronize(g->stream);
    if (g->blas) g->cb->destroy(g->blas);
    cudaFree(g->w);
    cudaFree(g->y);
    for (int f = 0; f < 3; f++)
        for (uint32_t m = 0; m < MAXN; m++) cudaFree(g->F[f][m]);
    cudaFree(g->kbig);
    cudaFree(g->ksmall);
    cudaFree(g->T);
    cudaFree(g->out);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
    *pg = NULL;
}

extern "C" fd_status bcp_mgpu_create(bcp_mgpu **out, int device, const double *x, const uint8_t *observed,
                                     uint32_t order, const uint64_t *dims, uint32_t Rmax)
{
    fd_status st = FD_OK;
    uint8_t *obs = NULL;
    *out = NULL;
    if (order < 2 || order > MAXN || Rmax < 1 || Rmax > 256)
        return fd_fail(FD_ERR_INTERNAL, "bcp_mgpu_create: %u modes, rank %u", order, Rmax);
    bcp_mgpu *g = (bcp_mgpu *)calloc(1, sizeof *g);
    if (!g) return fd_fail(FD_ERR_NOMEM, "out of memory");
    g->device = device;
    g->order = order;
    g->R = g->Rmax = Rmax;
    g->size = 1;
    g->Imax = 1;
    for (uint32_t m = 0; m < order; m++) {
        g->dims[m] = dims[m];
        g->size *= dims[m];
        g->Imax = dims[m] > g->Imax ? dims[m] : g->Imax;
    }
    const uint64_t Q = packed(Rmax);
    for (uint32_t n = 0; n < order; n++) {
        const uint64_t L = span(g, 0, n), K = span(g, n + 1, order), lo = L < K ? L : K, hi = L < K ? K : L;
        /* cuBLAS takes int sizes: the longer side, and the other side's
         * rows times the mode's. */
        if (hi > INT_MAX || lo * dims[n] > INT_MAX) {
            st = fd_fail(FD_ERR_INPUT, "a tensor with missing entries whose mode %u splits it into %llu x %llu x %llu is "
                                       "too large for the GPU's products (2^31 a side); use --backend cpu",
                         n + 1, (unsigned long long)L, (unsigned long long)dims[n], (unsigned long long)K);
            goto done;
        }
        g->cap_big = hi > g->cap_big ? hi : g->cap_big;
        g->cap_small = lo > g->cap_small ? lo : g->cap_small;
        g->cap_T = lo * dims[n] > g->cap_T ? lo * dims[n] : g->cap_T;
    }
    CK(cudaSetDevice(device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    FD_TRY_GOTO(fd_cublas_get(&g->cb), st, done);
    CB(g->cb->create(&g->blas));
    CB(g->cb->set_stream(g->blas, g->stream));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->y, g->size * sizeof(double), "the tensor (its values)"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->w, g->size * sizeof(double), "the tensor (its observed entries)"), st, done);
    for (uint32_t m = 0; m < order; m++) {
        FD_TRY_GOTO(fd_cuda_alloc((void **)&g->F[F_MEAN][m], dims[m] * Rmax * sizeof(double), "the factors"), st, done);
        FD_TRY_GOTO(fd_cuda_alloc((void **)&g->F[F_MOMENT][m], dims[m] * Q * sizeof(double), "the factors' moments"),
                    st, done);
        FD_TRY_GOTO(fd_cuda_alloc((void **)&g->F[F_OUTER][m], dims[m] * Q * sizeof(double), "the factors' moments"),
                    st, done);
    }
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->kbig, g->cap_big * Q * sizeof(double), "a Khatri-Rao product"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->ksmall, g->cap_small * Q * sizeof(double), "a Khatri-Rao product"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->T, g->cap_T * Q * sizeof(double), "the sums' intermediate"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->out, g->Imax * Q * sizeof(double), "the sums"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&obs, g->size, "the tensor's mask"), st, done);
    CK(cudaMemcpyAsync(g->y, x, g->size * sizeof(double), cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(obs, observed, g->size, cudaMemcpyHostToDevice, g->stream));
    k_indicator<<<blocks_for(g->size), THREADS, 0, g->stream>>>(obs, g->size, g->w);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(g->stream));
    *out = g;
    g = NULL;
done:
    cudaFree(obs);
    bcp_mgpu_destroy(&g);
    return st;
}

extern "C" fd_status bcp_mgpu_put(bcp_mgpu *g, uint32_t n, const double *A, const double *E, uint32_t R)
{
    fd_status st = FD_OK;
    if (n >= g->order || R < 1 || R > g->Rmax)
        return fd_fail(FD_ERR_INTERNAL, "bcp_mgpu_put: mode %u at rank %u", n, R);
    const uint64_t I = g->dims[n], P = packed(R);
    g->R = R;
    CK(cudaSetDevice(g->device));
    CK(cudaMemcpyAsync(g->F[F_MEAN][n], A, I * R * sizeof(double), cudaMemcpyHostToDevice, g->stream));
    CK(cudaMemcpyAsync(g->F[F_MOMENT][n], E, I * P * sizeof(double), cudaMemcpyHostToDevice, g->stream));
    k_outer<<<blocks_for(I * P), THREADS, 0, g->stream>>>(g->F[F_MEAN][n], I, R, g->F[F_OUTER][n]);
    CK(cudaGetLastError());
    /* The host may change A and E as soon as this returns. */
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}

static void krp(bcp_mgpu *g, enum family f, uint32_t a, uint32_t b, uint32_t Q, double *out)
{
    struct krp_modes km;
    memset(&km, 0, sizeof km);
    for (uint32_t m = 0; m < g->order; m++) {
        km.F[m] = g->F[f][m];
        km.dims[m] = g->dims[m];
    }
    km.a = a;
    km.b = b;
    const uint64_t rows = span(g, a, b);
    k_krp<<<blocks_for(rows * Q), THREADS, 0, g->stream>>>(km, rows, Q, out);
}

/* g->out (I x Q) = mode n's sums of X (W or Y) with family f's rows. */
static fd_status mode_sums(bcp_mgpu *g, uint32_t n, const double *X, enum family f, uint32_t Q)
{
    fd_status st = FD_OK;
    const uint64_t I = g->dims[n], L = span(g, 0, n), K = span(g, n + 1, g->order);
    const double one = 1, zero = 0;
    const int lead = L <= K; /* the DGEMM takes the side after n */
    krp(g, f, 0, n, Q, lead ? g->ksmall : g->kbig);
    krp(g, f, n + 1, g->order, Q, lead ? g->kbig : g->ksmall);
    CK(cudaGetLastError());
    /* Column-major, T^T (Q x rows) = KR^T (Q x side) times the tensor
     * unfolded: X as column-major is K x (L I), so no transpose; as L x
     * (I K) row-major it is (I K) x L column-major, so transposed. */
    if (lead)
        CB(g->cb->dgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, (int)Q, (int)(L * I), (int)K, &one, g->kbig, (int)Q, X, (int)K,
                        &zero, g->T, (int)Q));
    else
        CB(g->cb->dgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)Q, (int)(I * K), (int)L, &one, g->kbig, (int)Q, X,
                        (int)(I * K), &zero, g->T, (int)Q));
    k_fold<<<blocks_for(I * Q), THREADS, 0, g->stream>>>(g->T, g->ksmall, I, lead ? L : K, Q, lead, g->out);
    CK(cudaGetLastError());
done:
    return st;
}

extern "C" fd_status bcp_mgpu_sums(bcp_mgpu *g, uint32_t n, int outer, uint64_t i0, uint64_t i1, double *B, double *v)
{
    fd_status st = FD_OK;
    const uint32_t R = g->R, P = packed(R);
    if (n >= g->order || i0 > i1 || i1 > g->dims[n]) return fd_fail(FD_ERR_INTERNAL, "bcp_mgpu_sums: mode %u", n);
    CK(cudaSetDevice(g->device));
    FD_TRY(mode_sums(g, n, g->w, outer ? F_OUTER : F_MOMENT, P));
    CK(cudaMemcpyAsync(B + i0 * P, g->out + i0 * P, (i1 - i0) * P * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    if (!outer) {
        /* After the copy above on the same stream: out is reused. */
        FD_TRY(mode_sums(g, n, g->y, F_MEAN, R));
        CK(cudaMemcpyAsync(v + i0 * R, g->out + i0 * R, (i1 - i0) * R * sizeof(double), cudaMemcpyDeviceToHost,
                           g->stream));
    }
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}
