/* Density peaks on the GPU (see dpc_gpu.h).  One thread per row i; the
 * block walks through all points in tiles of TJ, staged in shared memory
 * by column, so every thread reads each point's coordinates from shared
 * memory once.  The order of j within a thread is ascending, which gives
 * the CPU's tie rule (the smaller j) with a strict comparison. */
#include "check.cuh"
#include "dpc_gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 256
#define TJ 256

struct dpc_gpu {
    int device;
    cudaStream_t stream;
    uint64_t n;
    uint32_t d;
    double *x;      /* d x n: coordinate k of point j at x[k n + j] */
    double *rho;    /* n: every rho (for delta) */
    double *out_a;  /* rows of one call: rho or delta */
    int64_t *out_b; /* rows of one call: parent */
    uint64_t cap;   /* rows out_a and out_b hold */
};

/* The squared distance from the thread's point (xi) to point jj of the
 * tile, in the CPU's order and rounding.  MAXD, a compile-time bound on d,
 * keeps xi in registers. */
template <int MAXD>
__device__ __forceinline__ double tile_d2(const double (&xi)[MAXD], const double *tile, uint32_t d, uint32_t jj)
{
    double s = 0;
#pragma unroll
    for (int k = 0; k < MAXD; k++)
        if (k < (int)d) {
            const double t = __dsub_rn(xi[k], tile[k * TJ + jj]);
            s = __dadd_rn(s, __dmul_rn(t, t));
        }
    return s;
}

template <int MAXD> __device__ __forceinline__ void load_point(double (&xi)[MAXD], const double *x, uint64_t n, uint32_t d, uint64_t i, bool live)
{
#pragma unroll
    for (int k = 0; k < MAXD; k++) xi[k] = live && k < (int)d ? x[k * n + i] : 0;
}

/* Points [j0, j0 + TJ) into shared memory by column (and their rho). */
__device__ __forceinline__ void load_tile(double *tile, double *trho, const double *x, const double *rho, uint64_t n,
                                          uint32_t d, uint64_t j0)
{
    for (uint32_t v = threadIdx.x; v < d * TJ; v += blockDim.x) {
        const uint32_t k = v / TJ, jj = v % TJ;
        const uint64_t j = j0 + jj;
        tile[v] = j < n ? x[k * n + j] : 0;
    }
    if (trho)
        for (uint32_t jj = threadIdx.x; jj < TJ; jj += blockDim.x) trho[jj] = j0 + jj < n ? rho[j0 + jj] : 0;
}

template <int MAXD, int KERNEL>
__global__ void __launch_bounds__(THREADS) k_rho(const double *x, uint64_t n, uint32_t d, double dc2, uint64_t i0,
                                                  uint64_t i1, double *out)
{
    extern __shared__ double tile[];
    const uint64_t i = i0 + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = i < i1;
    double xi[MAXD];
    load_point<MAXD>(xi, x, n, d, i, live);
    uint64_t cnt = 0;
    double sum = 0;
    for (uint64_t j0 = 0; j0 < n; j0 += TJ) {
        __syncthreads();
        load_tile(tile, NULL, x, NULL, n, d, j0);
        __syncthreads();
        const uint32_t m = n - j0 < TJ ? (uint32_t)(n - j0) : TJ;
        for (uint32_t jj = 0; jj < m; jj++) {
            const double s = tile_d2<MAXD>(xi, tile, d, jj);
            const bool other = j0 + jj != i;
            if (KERNEL == 0) cnt += other && s < dc2;
            else if (other) sum = __dadd_rn(sum, exp(-__ddiv_rn(s, dc2)));
        }
    }
    if (live) out[i - i0] = KERNEL == 0 ? (double)cnt : sum;
}

template <int MAXD>
__global__ void __launch_bounds__(THREADS) k_delta(const double *x, const double *rho, uint64_t n, uint32_t d,
                                                    uint64_t i0, uint64_t i1, double *delta, int64_t *parent)
{
    extern __shared__ double tile[];
    double *trho = tile + (size_t)d * TJ;
    const uint64_t i = i0 + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = i < i1;
    double xi[MAXD];
    load_point<MAXD>(xi, x, n, d, i, live);
    const double ri = live ? rho[i] : 0;
    double best = INFINITY, far = 0;
    int64_t bj = -1;
    for (uint64_t j0 = 0; j0 < n; j0 += TJ) {
        __syncthreads();
        load_tile(tile, trho, x, rho, n, d, j0);
        __syncthreads();
        const uint32_t m = n - j0 < TJ ? (uint32_t)(n - j0) : TJ;
        for (uint32_t jj = 0; jj < m; jj++) {
            const double s = tile_d2<MAXD>(xi, tile, d, jj), rj = trho[jj];
            const uint64_t j = j0 + jj;
            far = s > far ? s : far;
            if ((rj > ri || (rj == ri && j < i)) && s < best) {
                best = s;
                bj = (int64_t)j;
            }
        }
    }
    if (live) {
        delta[i - i0] = __dsqrt_rn(bj < 0 ? far : best);
        parent[i - i0] = bj;
    }
}

/* ---------------- host side ---------------- */

#define CK(call) CUDA_CHECK_GOTO(call, st, done)

extern "C" void dpc_gpu_destroy(dpc_gpu **pg)
{
    dpc_gpu *g = *pg;
    if (!g) return;
    cudaSetDevice(g->device);
    if (g->stream) cudaStreamSynchronize(g->stream);
    cudaFree(g->x);
    cudaFree(g->rho);
    cudaFree(g->out_a);
    cudaFree(g->out_b);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
    *pg = NULL;
}

extern "C" fd_status dpc_gpu_create(dpc_gpu **out, int device, const double *xt, uint64_t n, uint32_t d)
{
    fd_status st = FD_OK;
    *out = NULL;
    if (d == 0 || d > DPC_GPU_MAX_D)
        return fd_fail(FD_ERR_INTERNAL, "dpc_gpu_create: %u coordinates (the GPU takes 1 to %d)", d, DPC_GPU_MAX_D);
    dpc_gpu *g = (dpc_gpu *)calloc(1, sizeof *g);
    if (!g) return fd_fail(FD_ERR_NOMEM, "out of memory");
    g->device = device;
    g->n = n;
    g->d = d;
    CK(cudaSetDevice(device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->x, n * d * sizeof(double), "the points"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->rho, n * sizeof(double), "rho"), st, done);
    CK(cudaMemcpy(g->x, xt, n * d * sizeof(double), cudaMemcpyHostToDevice));
    *out = g;
    g = NULL;
done:
    dpc_gpu_destroy(&g);
    return st;
}

/* The kernels for the smallest bound of 2, 4, 8 and 16 that holds d. */
template <int MAXD> static void rho_d(dpc_gpu *g, unsigned blocks, size_t smem, double dc2, int kernel, uint64_t i0, uint64_t i1)
{
    if (kernel == 0) k_rho<MAXD, 0><<<blocks, THREADS, smem, g->stream>>>(g->x, g->n, g->d, dc2, i0, i1, g->out_a);
    else k_rho<MAXD, 1><<<blocks, THREADS, smem, g->stream>>>(g->x, g->n, g->d, dc2, i0, i1, g->out_a);
}

static void launch_rho(dpc_gpu *g, unsigned blocks, size_t smem, double dc2, int kernel, uint64_t i0, uint64_t i1)
{
    if (g->d <= 2) rho_d<2>(g, blocks, smem, dc2, kernel, i0, i1);
    else if (g->d <= 4) rho_d<4>(g, blocks, smem, dc2, kernel, i0, i1);
    else if (g->d <= 8) rho_d<8>(g, blocks, smem, dc2, kernel, i0, i1);
    else rho_d<16>(g, blocks, smem, dc2, kernel, i0, i1);
}

static void launch_delta(dpc_gpu *g, unsigned blocks, size_t smem, uint64_t i0, uint64_t i1)
{
    if (g->d <= 2) k_delta<2><<<blocks, THREADS, smem, g->stream>>>(g->x, g->rho, g->n, g->d, i0, i1, g->out_a, g->out_b);
    else if (g->d <= 4) k_delta<4><<<blocks, THREADS, smem, g->stream>>>(g->x, g->rho, g->n, g->d, i0, i1, g->out_a, g->out_b);
    else if (g->d <= 8) k_delta<8><<<blocks, THREADS, smem, g->stream>>>(g->x, g->rho, g->n, g->d, i0, i1, g->out_a, g->out_b);
    else k_delta<16><<<blocks, THREADS, smem, g->stream>>>(g->x, g->rho, g->n, g->d, i0, i1, g->out_a, g->out_b);
}

/* Room for the rows of one call. */
static fd_status rows_room(dpc_gpu *g, uint64_t rows)
{
    if (rows <= g->cap) return FD_OK;
    cudaFree(g->out_a);
    cudaFree(g->out_b);
    g->out_a = NULL;
    g->out_b = NULL;
    g->cap = 0;
    FD_TRY(fd_cuda_alloc((void **)&g->out_a, rows * sizeof(double), "the rows' results"));
    FD_TRY(fd_cuda_alloc((void **)&g->out_b, rows * sizeof(int64_t), "the rows' results"));
    g->cap = rows;
    return FD_OK;
}

extern "C" fd_status dpc_gpu_rho(dpc_gpu *g, double dc, int kernel, uint64_t i0, uint64_t i1, double *rho)
{
    fd_status st = FD_OK;
    if (i1 <= i0) return FD_OK;
    const uint64_t rows = i1 - i0, blocks = (rows + THREADS - 1) / THREADS;
    const size_t smem = (size_t)g->d * TJ * sizeof(double);
    CK(cudaSetDevice(g->device));
    FD_TRY(rows_room(g, rows));
    launch_rho(g, (unsigned)blocks, smem, dc * dc, kernel, i0, i1);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(rho, g->out_a, rows * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}

extern "C" fd_status dpc_gpu_delta(dpc_gpu *g, const double *rho, uint64_t i0, uint64_t i1, double *delta,
                                   int64_t *parent)
{
    fd_status st = FD_OK;
    if (i1 <= i0) return FD_OK;
    const uint64_t rows = i1 - i0, blocks = (rows + THREADS - 1) / THREADS;
    const size_t smem = ((size_t)g->d + 1) * TJ * sizeof(double);
    CK(cudaSetDevice(g->device));
    FD_TRY(rows_room(g, rows));
    CK(cudaMemcpyAsync(g->rho, rho, g->n * sizeof(double), cudaMemcpyHostToDevice, g->stream));
    launch_delta(g, (unsigned)blocks, smem, i0, i1);
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(delta, g->out_a, rows * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemcpyAsync(parent, g->out_b, rows * sizeof(int64_t), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}
