/* SPDX-License-Identifier: BSD-3-Clause */
/* Density peaks on the GPU (see dpc_gpu.h).
 *
 * Brute force: one thread per row i; the block walks through the points in
 * tiles of tile_w(MAXD) staged in shared memory by column, so that every thread
 * reads each point's coordinates from shared memory.  Within a thread j
 * ascends, which gives the CPU's tie rule (the smaller j) with a strict
 * comparison; delta may split the points among blocks (blockIdx.y), and
 * the merge takes the splits in order with the same strict comparison.
 *
 * Grid: the points are copied into cell order (coordinates by column), a
 * thread takes one row, and the rows are handed out in cell order too, so
 * that a warp's threads read the same cells.  The cells of one row of the
 * grid along the first coordinate are consecutive in cell order, so a
 * thread scans them as one run of points. */
#include "../common/clock.h"
#include "../common/env.h"
#include "../cuda/check.cuh"
#include "../cuda/fdcuda.h"
#include "dpc_gpu.h"
#include "dpc_exp.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 256
/* Points a block's splits of the points are counted in (host side). */
#define TJ 256

/* Points per shared-memory tile for coordinates up to maxd: 256 up to 16
 * coordinates, whose thread's own point sits in registers; beyond, 32
 * points (32 KiB at 128 coordinates), whose distances a thread sums in
 * registers chunk of 16 coordinates by chunk (over_points). */
__host__ __device__ constexpr int tile_w(int maxd) { return maxd <= 16 ? 256 : 32; }
/* Coordinates a chunk of the thread's own point holds (beyond 16). */
#define DCHUNK 16

typedef struct {
    void *p;
    uint64_t cap;
} dbuf;

struct dpc_gpu {
    int device, sms;
    cudaStream_t stream;
    uint64_t n;
    uint32_t d;
    double *x;      /* d x n: coordinate k of point j at x[k n + j] */
    /* Every point's results, by index: a pass writes its rows; the
     * all-gather (or the host's copy of rho) fills the rest. */
    double *rho, *delta;
    int64_t *parent;
    /* The grid of one call (see grid_build). */
    dbuf xs, rhos, start, rows, list, list2;
    dbuf keys[2], vals[2], flags, temp; /* building the grid */
    dbuf pbest, pfar, pbj; /* brute-force delta: one value per split and row */
    dbuf hist, nbrows, nbsel; /* d_c by neighbours */
    dbuf lab, ptr;         /* labels by pointer jumping */
    unsigned long long *count;
    uint64_t brute_rows;
    int rho_whole; /* the device computed every point's rho (no host copy needed) */
    int verbose;   /* FD_GPU_VERBOSE: each step's time, the stream waited for */
    double mark;   /* the last step's end (fd_now) */
};

/* ---------------- device: distances ---------------- */

/* The squared distance of the CPU: (xi_k - xj_k)^2 summed over k in order,
 * each operation rounded on its own. */
#define D2_STEP(s, a, b)                                                                                               \
    do {                                                                                                               \
        const double t_ = __dsub_rn(a, b);                                                                             \
        s = __dadd_rn(s, __dmul_rn(t_, t_));                                                                           \
    } while (0)

/* From the thread's point (xi, MAXD a compile-time bound on d that keeps it
 * in registers) to point jj of a shared-memory tile. */
template <int MAXD>
__device__ __forceinline__ double tile_d2(const double (&xi)[MAXD], const double *tile, uint32_t d, uint32_t jj)
{
    double s = 0;
#pragma unroll
    for (int k = 0; k < MAXD; k++)
        if (k < (int)d) D2_STEP(s, xi[k], tile[k * tile_w(MAXD) + jj]);
    return s;
}

/* From the thread's point to slot u of the points in cell order. */
template <int D> __device__ __forceinline__ double slot_d2(const double (&xi)[D], const double *xs, uint64_t n, uint32_t u)
{
    double s = 0;
#pragma unroll
    for (int k = 0; k < D; k++) D2_STEP(s, xi[k], xs[k * n + u]);
    return s;
}

template <int MAXD> __device__ __forceinline__ void load_point(double (&xi)[MAXD], const double *x, uint64_t n, uint32_t d, uint64_t i, bool live)
{
#pragma unroll
    for (int k = 0; k < MAXD; k++) xi[k] = live && k < (int)d ? x[k * n + i] : 0;
}

/* Points [j0, min(j0 + TW, jend)) into shared memory by column (and their
 * rho when trho is given). */
template <int TW>
__device__ __forceinline__ void load_tile(double *tile, double *trho, const double *x, const double *rho, uint64_t n,
                                          uint32_t d, uint64_t j0, uint64_t jend)
{
    for (uint32_t v = threadIdx.x; v < d * TW; v += blockDim.x) {
        const uint32_t k = v / TW, jj = v % TW;
        const uint64_t j = j0 + jj;
        tile[v] = j < jend ? x[k * n + j] : 0;
    }
    if (trho)
        for (uint32_t jj = threadIdx.x; jj < TW; jj += blockDim.x) trho[jj] = j0 + jj < jend ? rho[j0 + jj] : 0;
}

/* Points [ja, jb) tile by tile through shared memory (with their rho
 * when trho is given), f(jj, j, s) for each, j ascending, s the squared
 * distance from the thread's point i: the loop every brute-force kernel
 * runs.  Up to 16 coordinates the thread's point stays in registers and
 * each distance is summed at once; beyond, a tile's 32 distances are
 * summed together, 16 coordinates of the thread's point (from global
 * memory, coalesced) at a time, the running sums in registers.  Either
 * way each sum runs over k in order, as the CPU's (dpc_d2). */
template <int MAXD, class F>
__device__ __forceinline__ void over_points(double *tile, double *trho, const double *x, const double *rho, uint64_t n,
                                            uint32_t d, uint64_t i, bool live, uint64_t ja, uint64_t jb, F f)
{
    constexpr int TW = tile_w(MAXD);
    if constexpr (MAXD <= DCHUNK) {
        double xi[MAXD];
        load_point<MAXD>(xi, x, n, d, i, live);
        for (uint64_t j0 = ja; j0 < jb; j0 += TW) {
            __syncthreads();
            load_tile<TW>(tile, trho, x, rho, n, d, j0, jb);
            __syncthreads();
            const uint32_t m = jb - j0 < TW ? (uint32_t)(jb - j0) : TW;
            for (uint32_t jj = 0; jj < m; jj++) f(jj, j0 + jj, tile_d2<MAXD>(xi, tile, d, jj));
        }
    } else {
        for (uint64_t j0 = ja; j0 < jb; j0 += TW) {
            __syncthreads();
            load_tile<TW>(tile, trho, x, rho, n, d, j0, jb);
            __syncthreads();
            double acc[TW];
#pragma unroll
            for (int jj = 0; jj < TW; jj++) acc[jj] = 0;
            for (uint32_t c = 0; c < d; c += DCHUNK) {
                double xc[DCHUNK];
#pragma unroll
                for (int k = 0; k < DCHUNK; k++) xc[k] = live && c + k < d ? x[(uint64_t)(c + k) * n + i] : 0;
#pragma unroll
                for (int jj = 0; jj < TW; jj++) {
                    double a = acc[jj];
#pragma unroll
                    for (int k = 0; k < DCHUNK; k++)
                        if (c + k < d) D2_STEP(a, xc[k], tile[(c + k) * TW + jj]);
                    acc[jj] = a;
                }
            }
            const uint32_t m = jb - j0 < TW ? (uint32_t)(jb - j0) : TW;
#pragma unroll
            for (int jj = 0; jj < TW; jj++)
                if ((uint32_t)jj < m) f((uint32_t)jj, j0 + jj, acc[jj]);
        }
    }
}

/* ---------------- device: brute force ---------------- */

template <int MAXD, int KERNEL>
__global__ void __launch_bounds__(THREADS) k_rho(const double *x, uint64_t n, uint32_t d, double dc2, uint64_t i0,
                                                  uint64_t i1, double *out)
{
    extern __shared__ double tile[];
    const uint64_t i = i0 + (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = i < i1;
    uint64_t cnt = 0;
    double sum = 0;
    over_points<MAXD>(tile, NULL, x, NULL, n, d, i, live, 0, n, [&](uint32_t jj, uint64_t j, double s) {
        (void)jj;
        const bool other = j != i;
        if (KERNEL == 0) cnt += other && s < dc2;
        else if (other) sum = __dadd_rn(sum, dpc_exp_neg(-__ddiv_rn(s, dc2)));
    });
    if (live) out[i - i0] = KERNEL == 0 ? (double)cnt : sum;
}

/* Row t is list[t] (or i0 + t without a list); blockIdx.y takes points
 * [y jspan, (y + 1) jspan).  Out per split and row: the nearest denser
 * point's squared distance and index, and the largest squared distance
 * (for the densest point, which has no denser one). */
template <int MAXD>
__global__ void __launch_bounds__(THREADS) k_delta_part(const double *x, const double *rho, uint64_t n, uint32_t d,
                                                         const uint32_t *list, uint64_t nrows, uint64_t i0,
                                                         uint64_t jspan, double *pbest, double *pfar, int64_t *pbj)
{
    extern __shared__ double tile[];
    double *trho = tile + (size_t)d * tile_w(MAXD);
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = t < nrows;
    const uint64_t i = live ? (list ? list[t] : i0 + t) : 0;
    const double ri = live ? rho[i] : 0;
    double best = INFINITY, far = 0;
    int64_t bj = -1;
    const uint64_t ja = (uint64_t)blockIdx.y * jspan, jb = ja + jspan < n ? ja + jspan : n;
    over_points<MAXD>(tile, trho, x, rho, n, d, i, live, ja, jb, [&](uint32_t jj, uint64_t j, double s) {
        const double rj = trho[jj];
        far = s > far ? s : far;
        if ((rj > ri || (rj == ri && j < i)) && s < best) {
            best = s;
            bj = (int64_t)j;
        }
    });
    if (live) {
        const uint64_t o = (uint64_t)blockIdx.y * nrows + t;
        pbest[o] = best;
        pfar[o] = far;
        pbj[o] = bj;
    }
}

__global__ void k_delta_merge(uint64_t nrows, uint32_t splits, const uint32_t *list, uint64_t i0, const double *pbest,
                              const double *pfar, const int64_t *pbj, double *delta, int64_t *parent)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nrows) return;
    double best = INFINITY, far = 0;
    int64_t bj = -1;
    for (uint32_t y = 0; y < splits; y++) {
        const uint64_t o = (uint64_t)y * nrows + t;
        if (pbest[o] < best) {
            best = pbest[o];
            bj = pbj[o];
        }
        far = pfar[o] > far ? pfar[o] : far;
    }
    const uint64_t r = (list ? list[t] : i0 + t) - i0;
    delta[r] = __dsqrt_rn(bj < 0 ? far : best);
    parent[r] = bj;
}

/* One digit of a radix select over the squared distances from rows
 * rows[0 .. s) to every other point: the histogram, in bins of the w bits
 * below the top pbits, of the distances whose top pbits are prefix (a
 * non-negative double's bits order as the double does).  Counts per
 * block in shared memory (a block sees fewer than 2^32 pairs), then one
 * atomic per bin and block. */
#define NB_BINS 4096
template <int MAXD>
__global__ void __launch_bounds__(THREADS) k_nb_hist(const double *x, uint64_t n, uint32_t d, const uint32_t *rows,
                                                      uint64_t s, uint64_t jspan, unsigned long long prefix, int pbits,
                                                      int w, unsigned long long *hist)
{
    extern __shared__ double tile[];
    __shared__ unsigned int h[NB_BINS];
    for (uint32_t v = threadIdx.x; v < NB_BINS; v += blockDim.x) h[v] = 0;
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = t < s;
    const uint64_t i = live ? rows[t] : 0;
    const int shift = 64 - pbits - w;
    const unsigned long long mask = (1ull << w) - 1;
    const uint64_t ja = (uint64_t)blockIdx.y * jspan, jb = ja + jspan < n ? ja + jspan : n;
    over_points<MAXD>(tile, NULL, x, NULL, n, d, i, live, ja, jb, [&](uint32_t jj, uint64_t j, double s) {
        (void)jj;
        const unsigned long long bits = (unsigned long long)__double_as_longlong(s);
        const bool match = live && j != i && (pbits == 0 || (bits >> (64 - pbits)) == prefix);
        if (match) atomicAdd(&h[(bits >> shift) & mask], 1u);
    });
    __syncthreads();
    for (uint32_t v = threadIdx.x; v < NB_BINS; v += blockDim.x)
        if (h[v]) atomicAdd(&hist[v], (unsigned long long)h[v]);
}

/* The last digit's alternative: once few distances (cap or fewer) match
 * the prefix, their bits are appended to out (in any order; the host
 * sorts them), so that one pass ends the selection instead of one per
 * remaining 12 bits. */
template <int MAXD>
__global__ void __launch_bounds__(THREADS) k_nb_collect(const double *x, uint64_t n, uint32_t d, const uint32_t *rows,
                                                         uint64_t s, uint64_t jspan, unsigned long long prefix,
                                                         int pbits, unsigned long long *out,
                                                         unsigned long long *count, unsigned long long cap)
{
    extern __shared__ double tile[];
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = t < s;
    const uint64_t i = live ? rows[t] : 0;
    const uint64_t ja = (uint64_t)blockIdx.y * jspan, jb = ja + jspan < n ? ja + jspan : n;
    over_points<MAXD>(tile, NULL, x, NULL, n, d, i, live, ja, jb, [&](uint32_t jj, uint64_t j, double s) {
        (void)jj;
        const unsigned long long bits = (unsigned long long)__double_as_longlong(s);
        if (live && j != i && (bits >> (64 - pbits)) == prefix) {
            const unsigned long long k = atomicAdd(count, 1ull);
            if (k < cap) out[k] = bits;
        }
    });
}

/* One round of pointer jumping: a point without a label takes its
 * pointer's label if it has one, else points to its pointer's pointer.
 * A pointer always leads up the chain of parents with no centre strictly
 * between, so the label taken is the first centre's.  Rounds race
 * harmlessly: a label read as 0 or a pointer read before its jump only
 * leaves the work to the next round. */
__global__ void k_jump(int32_t *lab, int64_t *ptr, uint64_t n, unsigned long long *more)
{
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || lab[i]) return;
    const int64_t p = ptr[i];
    const int32_t l = lab[p];
    if (l) lab[i] = l;
    else ptr[i] = ptr[p];
    *more = 1;
}

/* ---------------- device: grid ---------------- */

typedef struct {
    double h, lo[3];
    int64_t dim[3]; /* 1 past the grid's coordinates */
    uint64_t ncells;
    const double *x;       /* d x n: the points by index (rows given by index) */
    const double *rho;     /* rho by index (rows given by index) */
    const uint32_t *start; /* ncells + 1 */
    const uint32_t *idx;   /* slot -> point */
    const double *xs;      /* d x n: the points in cell order */
    const double *rhos;    /* rho in cell order (delta) */
} gdev;

/* Coordinate k of point i's cell, as grid.c computes it (correctly
 * rounded (x - lo) / h, floored, clamped to the grid). */
__device__ __forceinline__ int64_t cell_coord(const double *x, uint64_t n, uint64_t i, int k, double lo, double h,
                                              int64_t m)
{
    double q = floor(__ddiv_rn(__dsub_rn(x[(uint64_t)k * n + i], lo), h));
    q = q < 0 ? 0 : q > (double)(m - 1) ? (double)(m - 1) : q;
    return (int64_t)q;
}

/* Point i's cell and i itself: the radix sort's pairs. */
__global__ void k_cells(const double *x, uint64_t n, uint32_t d, double3 lo, double h, longlong3 dim,
                        unsigned long long *keys, uint32_t *vals)
{
    const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double l[3] = {lo.x, lo.y, lo.z};
    const long long m[3] = {dim.x, dim.y, dim.z};
    unsigned long long cell = 0;
    for (int k = (int)d - 1; k >= 0; k--)
        cell = cell * (unsigned long long)m[k] + (unsigned long long)cell_coord(x, n, i, k, l[k], h, m[k]);
    keys[i] = cell;
    vals[i] = (uint32_t)i;
}

/* start[c]: the first slot whose cell is c or later (keys sorted). */
__global__ void k_starts(const unsigned long long *keys, uint64_t n, uint64_t ncells, uint32_t *start)
{
    const uint64_t c = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c > ncells) return;
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    start[c] = (uint32_t)lo;
}

/* Every slot, and whether its point is one of rows [i0, i1). */
__global__ void k_row_flags(const uint32_t *idx, uint64_t n, uint64_t i0, uint64_t i1, uint32_t *slots, uint8_t *flags)
{
    const uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    slots[s] = (uint32_t)s;
    flags[s] = idx[s] >= i0 && idx[s] < i1;
}

/* Points and rho into cell order. */
__global__ void k_gather(const double *x, const double *rho, uint64_t n, uint32_t d, const uint32_t *idx, double *xs,
                         double *rhos)
{
    const uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    const uint32_t i = idx[s];
    for (uint32_t k = 0; k < d; k++) xs[k * n + s] = x[k * n + i];
    if (rho) rhos[s] = rho[i];
}

/* The coordinates of the cell of slot s: the cell c with start[c] <= s <
 * start[c + 1], by bisection (no cell is kept per point). */
__device__ __forceinline__ void slot_cell(const gdev &G, uint32_t s, int64_t c[3])
{
    uint64_t lo = 0, hi = G.ncells; /* start[lo] <= s < start[hi] */
    while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (G.start[mid] <= s) lo = mid;
        else hi = mid;
    }
    c[0] = (int64_t)(lo % (uint64_t)G.dim[0]);
    lo /= (uint64_t)G.dim[0];
    c[1] = (int64_t)(lo % (uint64_t)G.dim[1]);
    c[2] = (int64_t)(lo / (uint64_t)G.dim[1]);
}

/* The slots of cells (q0a .. q0b, q1, q2), consecutive in cell order. */
__device__ __forceinline__ void cell_run(const gdev &G, int64_t q0a, int64_t q0b, int64_t q1, int64_t q2, uint32_t *a,
                                         uint32_t *b)
{
    const uint64_t base = ((uint64_t)q2 * (uint64_t)G.dim[1] + (uint64_t)q1) * (uint64_t)G.dim[0];
    *a = G.start[base + (uint64_t)q0a];
    *b = G.start[base + (uint64_t)q0b + 1];
}

__device__ __forceinline__ int64_t clip(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Cutoff rho of the row at slot rows[t]: the points of every cell within
 * reach cells in each coordinate. */
template <int D>
__global__ void __launch_bounds__(THREADS) k_rho_grid(gdev G, uint64_t n, int reach, const uint32_t *rows,
                                                       uint64_t nrows, double dc2, uint64_t i0, double *out)
{
    const uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nrows) return;
    const uint32_t s = rows[t];
    double xi[D];
#pragma unroll
    for (int k = 0; k < D; k++) xi[k] = G.xs[k * n + s];
    int64_t c[3], lo[3], hi[3];
    slot_cell(G, s, c);
    for (int k = 0; k < 3; k++) {
        lo[k] = clip(c[k] - reach, 0, G.dim[k] - 1);
        hi[k] = clip(c[k] + reach, 0, G.dim[k] - 1);
    }
    uint64_t cnt = 0;
    for (int64_t q2 = lo[2]; q2 <= hi[2]; q2++)
        for (int64_t q1 = lo[1]; q1 <= hi[1]; q1++) {
            uint32_t a, b;
            cell_run(G, lo[0], hi[0], q1, q2, &a, &b);
            for (uint32_t u = a; u < b; u++) cnt += (u != s) & (slot_d2<D>(xi, G.xs, n, u) < dc2);
        }
    out[G.idx[s] - i0] = (double)cnt;
}

/* The nearer of the denser points of slots a, a + step, ... below b to
 * the row (i, ri). */
template <int D>
__device__ __forceinline__ void nearest_denser(const gdev &G, uint64_t n, const double (&xi)[D], uint32_t i, double ri,
                                               uint32_t a, uint32_t b, uint32_t step, double *best, int64_t *bj)
{
    for (uint64_t u = a; u < b; u += step) {
        const uint32_t j = G.idx[u];
        const double rj = G.rhos[u];
        if (!(rj > ri || (rj == ri && j < i))) continue;
        const double s = slot_d2<D>(xi, G.xs, n, u);
        if (s < *best || (s == *best && (int64_t)j < *bj)) {
            *best = s;
            *bj = j;
        }
    }
}

/* delta of a row by rings of cells around its own, as dpc.c's
 * gdelta_range: after ring r every point not yet seen is at least
 * (r - slack) h away, so a nearest denser point closer than that is
 * final, as is one found once the rings cover the whole grid.  A row
 * whose rings run out goes to list (a coarser grid's pass, or the brute
 * force).  BY_INDEX: rows[t] is the row's index (rows a finer grid
 * left), and a warp takes it, its lanes taking every 32nd point of a
 * cell run: such rows are few and search cells of thousands of points,
 * which a thread each took longer than the brute force
 * (dpc-gpu-history.txt); the lanes' nearest points are merged after each
 * ring by the CPU's rule (smaller distance, then smaller index), which
 * does not depend on the order they were seen in.  Else rows[t] is the
 * row's slot in this grid, a thread each. */
template <int D, bool BY_INDEX>
__global__ void __launch_bounds__(THREADS) k_delta_grid(gdev G, uint64_t n, int rings, double slack,
                                                         const uint32_t *rows, uint64_t nrows, uint64_t i0,
                                                         double *delta, int64_t *parent, uint32_t *list,
                                                         unsigned long long *nlist)
{
    const uint64_t gt = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, t = BY_INDEX ? gt / 32 : gt;
    const uint32_t lane = BY_INDEX ? threadIdx.x % 32 : 0, step = BY_INDEX ? 32 : 1;
    if (t >= nrows) return; /* a whole warp at once when BY_INDEX (THREADS is a multiple of 32) */
    uint32_t i;
    double ri, xi[D];
    int64_t c[3] = {0, 0, 0};
    if (BY_INDEX) {
        i = rows[t];
        ri = G.rho[i];
#pragma unroll
        for (int k = 0; k < D; k++) {
            xi[k] = G.x[(uint64_t)k * n + i];
            c[k] = cell_coord(G.x, n, i, k, G.lo[k], G.h, G.dim[k]);
        }
    } else {
        const uint32_t s = rows[t];
        i = G.idx[s];
        ri = G.rhos[s];
#pragma unroll
        for (int k = 0; k < D; k++) xi[k] = G.xs[k * n + s];
        slot_cell(G, s, c);
    }
    double best = INFINITY;
    int64_t bj = -1;
    bool done = false;
    for (int r = 0; r <= rings && !done; r++) {
        const int64_t lo1 = clip(c[1] - r, 0, G.dim[1] - 1), hi1 = clip(c[1] + r, 0, G.dim[1] - 1);
        const int64_t lo2 = clip(c[2] - r, 0, G.dim[2] - 1), hi2 = clip(c[2] + r, 0, G.dim[2] - 1);
        const int64_t lo0 = clip(c[0] - r, 0, G.dim[0] - 1), hi0 = clip(c[0] + r, 0, G.dim[0] - 1);
        for (int64_t q2 = lo2; q2 <= hi2; q2++)
            for (int64_t q1 = lo1; q1 <= hi1; q1++) {
                const bool edge = r == 0 || (D > 1 && (q1 == c[1] - r || q1 == c[1] + r)) ||
                                  (D > 2 && (q2 == c[2] - r || q2 == c[2] + r));
                uint32_t a, b;
                if (edge) {
                    cell_run(G, lo0, hi0, q1, q2, &a, &b);
                    nearest_denser<D>(G, n, xi, i, ri, a + lane, b, step, &best, &bj);
                    continue;
                }
                /* Inside the ring in the other coordinates: only its two
                 * ends along the first. */
                if (c[0] - r >= 0) {
                    cell_run(G, c[0] - r, c[0] - r, q1, q2, &a, &b);
                    nearest_denser<D>(G, n, xi, i, ri, a + lane, b, step, &best, &bj);
                }
                if (c[0] + r < G.dim[0]) {
                    cell_run(G, c[0] + r, c[0] + r, q1, q2, &a, &b);
                    nearest_denser<D>(G, n, xi, i, ri, a + lane, b, step, &best, &bj);
                }
            }
        if (BY_INDEX)
            for (int o = 16; o > 0; o >>= 1) {
                const double ob = __shfl_xor_sync(0xffffffffu, best, o);
                const long long oj = __shfl_xor_sync(0xffffffffu, (long long)bj, o);
                if (ob < best || (ob == best && oj < bj)) {
                    best = ob;
                    bj = oj;
                }
            }
        const double reach = ((double)r - slack) * G.h;
        const bool all = lo0 == 0 && hi0 == G.dim[0] - 1 && lo1 == 0 && hi1 == G.dim[1] - 1 && lo2 == 0 &&
                         hi2 == G.dim[2] - 1;
        done = bj >= 0 && (all || (reach > 0 && best < reach * reach));
    }
    if (lane) return;
    if (done) {
        delta[i - i0] = __dsqrt_rn(best);
        parent[i - i0] = bj;
    } else {
        list[atomicAdd(nlist, 1ull)] = i;
    }
}

/* ---------------- host side ---------------- */

#define CK(call) CUDA_CHECK_GOTO(call, st, done)

/* FD_GPU_VERBOSE: the time since the last mark, the stream waited for
 * (which only verbose runs do), to stderr. */
static void vmark(dpc_gpu *g, const char *what)
{
    if (!g->verbose) return;
    cudaStreamSynchronize(g->stream);
    const double t = fd_now();
    if (what) fprintf(stderr, "gpu dpc: %s %.2f ms\n", what, (t - g->mark) * 1e3);
    g->mark = t;
}

static fd_status grow(dbuf *b, uint64_t n, size_t elem, const char *what)
{
    return fd_cuda_grow(&b->p, &b->cap, n, elem, what);
}

extern "C" void dpc_gpu_destroy(dpc_gpu **pg)
{
    dpc_gpu *g = *pg;
    if (!g) return;
    cudaSetDevice(g->device);
    if (g->stream) cudaStreamSynchronize(g->stream);
    dbuf *bufs[] = {&g->xs,      &g->rhos,    &g->start, &g->rows,  &g->list, &g->list2, &g->keys[0],
                    &g->keys[1], &g->vals[0], &g->vals[1], &g->flags, &g->temp, &g->pbest, &g->pfar,
                    &g->pbj,     &g->hist,    &g->nbrows,  &g->nbsel, &g->lab,  &g->ptr};
    for (size_t k = 0; k < sizeof bufs / sizeof *bufs; k++) cudaFree(bufs[k]->p);
    cudaFree(g->x);
    cudaFree(g->rho);
    cudaFree(g->delta);
    cudaFree(g->parent);
    cudaFree(g->count);
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
    g->verbose = getenv("FD_GPU_VERBOSE") != NULL;
    CK(cudaSetDevice(device));
    CK(cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, device));
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->x, n * d * sizeof(double), "the points"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->rho, n * sizeof(double), "rho"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->delta, n * sizeof(double), "delta"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->parent, n * sizeof(int64_t), "the parents"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&g->count, sizeof *g->count, "a counter"), st, done);
    FD_TRY_GOTO(fd_cuda_upload(g->x, xt, n * d * sizeof(double)), st, done);
    *out = g;
    g = NULL;
done:
    dpc_gpu_destroy(&g);
    return st;
}

static unsigned blocks_for(uint64_t rows);

/* CUB's scratch space: asked for, grown, then the call made. */
#define CUB_CALL(...)                                                                                                  \
    do {                                                                                                               \
        size_t bytes_ = 0;                                                                                             \
        void *tmp_ = NULL;                                                                                             \
        CK(__VA_ARGS__);                                                                                               \
        FD_TRY_GOTO(grow(&g->temp, bytes_, 1, "scratch space"), st, done);                                             \
        tmp_ = g->temp.p;                                                                                              \
        CK(__VA_ARGS__);                                                                                               \
    } while (0)

/* The grid on the device: every point's cell, a radix sort of the points
 * by cell (stable: within a cell by index, as grid.c lists them), each
 * cell's first slot; the points (and g->rho, with_rho) into cell order;
 * and, nrows given, the slots of rows [i0, i1), in cell order. */
static fd_status grid_build(dpc_gpu *g, const dpc_gpu_grid *grid, int with_rho, uint64_t i0, uint64_t i1, gdev *G,
                            uint64_t *nrows)
{
    fd_status st = FD_OK;
    const uint64_t n = g->n;
    int bits = 1;
    while (bits < 64 && (grid->ncells - 1) >> bits) bits++;
    for (int b = 0; b < 2; b++) {
        FD_TRY(grow(&g->keys[b], n, sizeof(unsigned long long), "the grid"));
        FD_TRY(grow(&g->vals[b], n, sizeof(uint32_t), "the grid"));
    }
    FD_TRY(grow(&g->start, grid->ncells + 1, sizeof(uint32_t), "the grid"));
    FD_TRY(grow(&g->xs, n * g->d, sizeof(double), "the points in cell order"));
    if (nrows) {
        FD_TRY(grow(&g->rows, n, sizeof(uint32_t), "the rows"));
        FD_TRY(grow(&g->flags, n, 1, "the rows"));
    }
    if (with_rho) FD_TRY(grow(&g->rhos, n, sizeof(double), "rho in cell order"));
    {
        const double3 lo = make_double3(grid->lo[0], grid->lo[1], grid->lo[2]);
        const longlong3 dim = make_longlong3(grid->dim[0], grid->d > 1 ? grid->dim[1] : 1, grid->d > 2 ? grid->dim[2] : 1);
        k_cells<<<blocks_for(n), THREADS, 0, g->stream>>>(g->x, n, g->d, lo, grid->h, dim,
                                                          (unsigned long long *)g->keys[0].p, (uint32_t *)g->vals[0].p);
        CK(cudaGetLastError());
    }
    {
        cub::DoubleBuffer<unsigned long long> keys((unsigned long long *)g->keys[0].p,
                                                   (unsigned long long *)g->keys[1].p);
        cub::DoubleBuffer<uint32_t> vals((uint32_t *)g->vals[0].p, (uint32_t *)g->vals[1].p);
        CUB_CALL(cub::DeviceRadixSort::SortPairs(tmp_, bytes_, keys, vals, (int64_t)n, 0, bits, g->stream));
        k_starts<<<blocks_for(grid->ncells + 1), THREADS, 0, g->stream>>>(keys.Current(), n, grid->ncells,
                                                                            (uint32_t *)g->start.p);
        CK(cudaGetLastError());
        G->idx = vals.Current();
    }
    k_gather<<<blocks_for(n), THREADS, 0, g->stream>>>(g->x, with_rho ? g->rho : NULL, n, g->d, G->idx, (double *)g->xs.p,
                                                       (double *)g->rhos.p);
    CK(cudaGetLastError());
    if (nrows) {
        k_row_flags<<<blocks_for(n), THREADS, 0, g->stream>>>(G->idx, n, i0, i1, (uint32_t *)g->rows.p,
                                                              (uint8_t *)g->flags.p);
        CK(cudaGetLastError());
        CUB_CALL(cub::DeviceSelect::Flagged(tmp_, bytes_, (uint32_t *)g->rows.p, (const uint8_t *)g->flags.p,
                                            g->count, (int64_t)n, g->stream));
        unsigned long long m = 0;
        CK(cudaMemcpyAsync(&m, g->count, sizeof m, cudaMemcpyDeviceToHost, g->stream));
        CK(cudaStreamSynchronize(g->stream));
        *nrows = m;
    }
    G->h = grid->h;
    for (int k = 0; k < 3; k++) {
        G->dim[k] = k < (int)grid->d ? grid->dim[k] : 1;
        G->lo[k] = k < (int)grid->d ? grid->lo[k] : 0;
    }
    G->x = g->x;
    G->rho = g->rho;
    G->ncells = grid->ncells;
    G->start = (const uint32_t *)g->start.p;
    G->xs = (const double *)g->xs.p;
    G->rhos = (const double *)g->rhos.p;
done:
    return st;
}

static unsigned blocks_for(uint64_t rows) { return (unsigned)((rows + THREADS - 1) / THREADS); }

/* The kernels for the smallest bound of 2, 4, 8, 16, 32, 64 and 128 that
 * holds d (d_bound), each with its tile's shared memory. */
static int d_bound(uint32_t d) { return d <= 2 ? 2 : d <= 4 ? 4 : d <= 8 ? 8 : d <= 16 ? 16 : d <= 32 ? 32 : d <= 64 ? 64 : 128; }
/* fn<MAXD>(...) for MAXD = d_bound(d). */
#define BY_D_BOUND(d, fn, ...)                                                                                         \
    do {                                                                                                               \
        switch (d_bound(d)) {                                                                                          \
        case 2: fn<2>(__VA_ARGS__); break;                                                                             \
        case 4: fn<4>(__VA_ARGS__); break;                                                                             \
        case 8: fn<8>(__VA_ARGS__); break;                                                                             \
        case 16: fn<16>(__VA_ARGS__); break;                                                                           \
        case 32: fn<32>(__VA_ARGS__); break;                                                                           \
        case 64: fn<64>(__VA_ARGS__); break;                                                                           \
        default: fn<128>(__VA_ARGS__); break;                                                                          \
        }                                                                                                              \
    } while (0)
template <int MAXD> static size_t tile_bytes(uint32_t d, int with_rho)
{
    return ((size_t)d + (with_rho ? 1 : 0)) * tile_w(MAXD) * sizeof(double);
}

template <int MAXD> static void rho_d(dpc_gpu *g, double dc2, int kernel, uint64_t i0, uint64_t i1)
{
    double *out = g->rho + i0;
    const size_t smem = tile_bytes<MAXD>(g->d, 0);
    if (kernel == 0) k_rho<MAXD, 0><<<blocks_for(i1 - i0), THREADS, smem, g->stream>>>(g->x, g->n, g->d, dc2, i0, i1, out);
    else k_rho<MAXD, 1><<<blocks_for(i1 - i0), THREADS, smem, g->stream>>>(g->x, g->n, g->d, dc2, i0, i1, out);
}

template <int D> static void rho_grid_d(dpc_gpu *g, const gdev &G, int reach, uint64_t nrows, double dc2, uint64_t i0)
{
    k_rho_grid<D><<<blocks_for(nrows), THREADS, 0, g->stream>>>(G, g->n, reach, (const uint32_t *)g->rows.p, nrows,
                                                               dc2, i0, g->rho + i0);
}

extern "C" fd_status dpc_gpu_rho(dpc_gpu *g, const dpc_gpu_grid *grid, double dc, double dc2, int kernel, uint64_t i0,
                                 uint64_t i1, double *rho)
{
    fd_status st = FD_OK;
    if (i1 <= i0) return FD_OK;
    const uint64_t rows = i1 - i0;
    CK(cudaSetDevice(g->device));
    vmark(g, NULL);
    if (grid) {
        gdev G;
        uint64_t nrows;
        FD_TRY(grid_build(g, grid, 0, i0, i1, &G, &nrows));
        vmark(g, "rho: the grid");
        /* Two points closer than d_c are less than d_c / h cells apart,
         * and each computed cell coordinate is off by at most the slack. */
        const int reach = (int)ceil(dc / grid->h + 2 * grid->slack);
        if (grid->d == 1) rho_grid_d<1>(g, G, reach, nrows, dc2, i0);
        else if (grid->d == 2) rho_grid_d<2>(g, G, reach, nrows, dc2, i0);
        else rho_grid_d<3>(g, G, reach, nrows, dc2, i0);
    } else {
        BY_D_BOUND(g->d, rho_d, g, dc2, kernel, i0, i1);
    }
    CK(cudaGetLastError());
    vmark(g, "rho: the kernel");
    g->rho_whole = i0 == 0 && i1 == g->n;
    CK(cudaMemcpyAsync(rho, g->rho + i0, rows * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    vmark(g, "rho: to the host");
done:
    return st;
}

template <int MAXD>
static void delta_part_d(dpc_gpu *g, dim3 grid, const uint32_t *list, uint64_t nrows, uint64_t i0, uint64_t jspan)
{
    const size_t smem = tile_bytes<MAXD>(g->d, 1);
    k_delta_part<MAXD><<<grid, THREADS, smem, g->stream>>>(g->x, g->rho, g->n, g->d, list, nrows, i0, jspan,
                                                           (double *)g->pbest.p, (double *)g->pfar.p,
                                                           (int64_t *)g->pbj.p);
}

/* Blocks per SM the brute-force passes (delta's, d_c's) aim at when
 * they split the points among blocks: FD_DPC_GPU_BLOCKS, 4 unless set.
 * The split does not change a result (the merge takes the splits in the
 * order of their points, strictly). */
static fd_status blocks_per_sm(uint64_t *v) { return fd_env_count("FD_DPC_GPU_BLOCKS", 1, 64, 4, "blocks per SM", v); }

/* Brute-force delta of rows list[0 .. nrows) (or i0 .. i0 + nrows without
 * a list) into g->delta and g->parent; g->rho holds every rho.  Few rows split
 * the points among more blocks, so that every SM has work. */
static fd_status delta_brute(dpc_gpu *g, const uint32_t *list, uint64_t nrows, uint64_t i0)
{
    fd_status st = FD_OK;
    const uint64_t n = g->n, bx = blocks_for(nrows), tiles = (n + TJ - 1) / TJ;
    uint64_t per_sm;
    FD_TRY(blocks_per_sm(&per_sm));
    uint64_t splits = (per_sm * (uint64_t)g->sms + bx - 1) / bx;
    splits = splits < 1 ? 1 : splits > tiles ? tiles : splits > 65535 ? 65535 : splits;
    const uint64_t jspan = (tiles + splits - 1) / splits * TJ;
    splits = (n + jspan - 1) / jspan;
    FD_TRY(grow(&g->pbest, splits * nrows, sizeof(double), "delta's partial results"));
    FD_TRY(grow(&g->pfar, splits * nrows, sizeof(double), "delta's partial results"));
    FD_TRY(grow(&g->pbj, splits * nrows, sizeof(int64_t), "delta's partial results"));
    const dim3 grid((unsigned)bx, (unsigned)splits);
    BY_D_BOUND(g->d, delta_part_d, g, grid, list, nrows, i0, jspan);
    CK(cudaGetLastError());
    k_delta_merge<<<(unsigned)bx, THREADS, 0, g->stream>>>(nrows, (uint32_t)splits, list, i0,
                                                           (const double *)g->pbest.p, (const double *)g->pfar.p,
                                                           (const int64_t *)g->pbj.p, g->delta + i0,
                                                           g->parent + i0);
    CK(cudaGetLastError());
done:
    return st;
}

template <int D, bool BY_INDEX>
static void delta_grid_d(dpc_gpu *g, const gdev &G, const dpc_gpu_grid *grid, const uint32_t *rows, uint64_t nrows,
                         uint64_t i0, uint32_t *list)
{
    k_delta_grid<D, BY_INDEX><<<blocks_for(BY_INDEX ? nrows * 32 : nrows), THREADS, 0, g->stream>>>(
        G, g->n, grid->rings, grid->slack, rows, nrows, i0, g->delta + i0, g->parent + i0, list, g->count);
}

/* One grid's ring pass over nrows rows (slots of the grid just built, or
 * indices); the rows it leaves into list, their count into *left. */
static fd_status delta_rings(dpc_gpu *g, const gdev &G, const dpc_gpu_grid *grid, bool by_index, const uint32_t *rows,
                             uint64_t nrows, uint64_t i0, uint32_t *list, uint64_t *left)
{
    fd_status st = FD_OK;
    unsigned long long m = 0;
    CK(cudaMemsetAsync(g->count, 0, sizeof *g->count, g->stream));
#define DELTA_RINGS(D)                                                                                                 \
    (by_index ? delta_grid_d<D, true>(g, G, grid, rows, nrows, i0, list)                                               \
              : delta_grid_d<D, false>(g, G, grid, rows, nrows, i0, list))
    if (grid->d == 1) DELTA_RINGS(1);
    else if (grid->d == 2) DELTA_RINGS(2);
    else DELTA_RINGS(3);
#undef DELTA_RINGS
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(&m, g->count, sizeof m, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    *left = m;
done:
    return st;
}

extern "C" fd_status dpc_gpu_delta(dpc_gpu *g, const dpc_gpu_grid *grids, int ngrids, uint64_t coarse_rows,
                                   const double *rho, uint64_t i0, uint64_t i1, double *delta, int64_t *parent)
{
    fd_status st = FD_OK;
    if (i1 <= i0) return FD_OK;
    const uint64_t rows = i1 - i0;
    CK(cudaSetDevice(g->device));
    vmark(g, NULL);
    /* The host's rho is the device's own when this device computed every
     * row (one rank); else it holds the other ranks' rows too. */
    if (rho && !g->rho_whole) {
        CK(cudaMemcpyAsync(g->rho, rho, g->n * sizeof(double), cudaMemcpyHostToDevice, g->stream));
        vmark(g, "delta: rho to the device");
    }
    g->brute_rows = rows;
    if (ngrids > 0) {
        gdev G;
        uint64_t nrows, left = 0;
        FD_TRY(grid_build(g, &grids[0], 1, i0, i1, &G, &nrows));
        vmark(g, "delta: the grid");
        FD_TRY(grow(&g->list, nrows, sizeof(uint32_t), "the rows left to brute force"));
        FD_TRY(delta_rings(g, G, &grids[0], false, (const uint32_t *)g->rows.p, nrows, i0, (uint32_t *)g->list.p,
                           &left));
        vmark(g, "delta: the grid kernel");
        /* The rows left (local density peaks, points far from any denser
         * one) through the coarser grid when there are coarse_rows or more:
         * at 10^8 points the 33,557 rows' brute force took 4.2 s, the
         * first coarser grid 42 ms (a warp a row) and the brute force of
         * the 142 rows it left 28 ms; at 10^7 the 2,242 rows' 37 ms
         * against 5.6 ms and 3.0 ms (one H100, bench/results/
         * dpc-gpu-history.txt).  Both the brute force of a row and the
         * grid's pass grow with the points. */
        for (int k = 1; k < ngrids && left && left >= coarse_rows; k++) {
            FD_TRY(grid_build(g, &grids[k], 1, 0, 0, &G, NULL));
            FD_TRY(grow(&g->list2, left, sizeof(uint32_t), "the rows left to brute force"));
            FD_TRY(delta_rings(g, G, &grids[k], true, (const uint32_t *)g->list.p, left, i0, (uint32_t *)g->list2.p,
                               &left));
            const dbuf t = g->list;
            g->list = g->list2;
            g->list2 = t;
            vmark(g, "delta: a coarser grid");
        }
        g->brute_rows = left;
        if (left) FD_TRY(delta_brute(g, (const uint32_t *)g->list.p, left, i0));
    } else {
        FD_TRY(delta_brute(g, NULL, rows, i0));
    }
    vmark(g, "delta: brute force");
    CK(cudaMemcpyAsync(delta, g->delta + i0, rows * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaMemcpyAsync(parent, g->parent + i0, rows * sizeof(int64_t), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    vmark(g, "delta: to the host");
done:
    return st;
}

extern "C" uint64_t dpc_gpu_delta_brute_rows(const dpc_gpu *g) { return g->brute_rows; }

extern "C" void dpc_gpu_arrays(dpc_gpu *g, void **rho, void **delta, void **parent, void **stream)
{
    *rho = g->rho;
    *delta = g->delta;
    *parent = g->parent;
    *stream = g->stream;
}

extern "C" fd_status dpc_gpu_fetch(dpc_gpu *g, double *rho, double *delta, int64_t *parent)
{
    fd_status st = FD_OK;
    const uint64_t n = g->n;
    CK(cudaSetDevice(g->device));
    if (rho) CK(cudaMemcpyAsync(rho, g->rho, n * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    if (delta) CK(cudaMemcpyAsync(delta, g->delta, n * sizeof(double), cudaMemcpyDeviceToHost, g->stream));
    if (parent) CK(cudaMemcpyAsync(parent, g->parent, n * sizeof(int64_t), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}

template <int MAXD>
static void nb_hist_d(dpc_gpu *g, dim3 grid, uint64_t s, uint64_t jspan, unsigned long long prefix, int pbits, int w)
{
    const size_t smem = tile_bytes<MAXD>(g->d, 0);
    k_nb_hist<MAXD><<<grid, THREADS, smem, g->stream>>>(g->x, g->n, g->d, (const uint32_t *)g->nbrows.p, s, jspan,
                                                        prefix, pbits, w, (unsigned long long *)g->hist.p);
}

template <int MAXD>
static void nb_collect_d(dpc_gpu *g, dim3 grid, uint64_t s, uint64_t jspan, unsigned long long prefix, int pbits,
                         unsigned long long cap)
{
    const size_t smem = tile_bytes<MAXD>(g->d, 0);
    k_nb_collect<MAXD><<<grid, THREADS, smem, g->stream>>>(g->x, g->n, g->d, (const uint32_t *)g->nbrows.p, s, jspan,
                                                           prefix, pbits, (unsigned long long *)g->nbsel.p, g->count,
                                                           cap);
}

static int cmp_u64(const void *a, const void *b)
{
    const unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return (x > y) - (x < y);
}

/* Distances left after a digit that are collected and sorted on the host
 * rather than narrowed by more digits (a sort of 65,536 is milliseconds);
 * FD_DPC_GPU_COLLECT sets it (0: every digit, as before). */
#define NB_COLLECT_MAX 65536

extern "C" fd_status dpc_gpu_kth_d2(dpc_gpu *g, const uint64_t *rows, uint64_t s, uint64_t m, double *d2)
{
    fd_status st = FD_OK;
    const uint64_t n = g->n, bx = blocks_for(s), tiles = (n + TJ - 1) / TJ;
    unsigned long long h[NB_BINS], prefix = 0, *sel = NULL;
    uint64_t per_sm;
    FD_TRY(blocks_per_sm(&per_sm));
    uint32_t *r32 = (uint32_t *)malloc(s * sizeof *r32);
    if (!r32) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint64_t q = 0; q < s; q++) r32[q] = (uint32_t)rows[q];
    /* Splits of the points: enough blocks for every SM, and fewer than
     * 2^32 pairs a block (256 rows x 2^23 points). */
    uint64_t splits = (per_sm * (uint64_t)g->sms + bx - 1) / bx;
    const uint64_t least = (n + (1ull << 23) - 1) >> 23;
    splits = splits < least ? least : splits;
    splits = splits > tiles ? tiles : splits;
    const uint64_t jspan = (tiles + splits - 1) / splits * TJ;
    splits = (n + jspan - 1) / jspan;
    const dim3 grid((unsigned)bx, (unsigned)splits);
    uint64_t r = m; /* the rank sought among the distances that match the prefix */
    uint64_t collect;
    FD_TRY_GOTO(fd_env_count("FD_DPC_GPU_COLLECT", 0, 1ull << 24, NB_COLLECT_MAX, "distances", &collect), st, done);
    CK(cudaSetDevice(g->device));
    FD_TRY_GOTO(grow(&g->hist, NB_BINS, sizeof(unsigned long long), "a histogram"), st, done);
    FD_TRY_GOTO(grow(&g->nbrows, s, sizeof(uint32_t), "the rows"), st, done);
    CK(cudaMemcpyAsync(g->nbrows.p, r32, s * sizeof *r32, cudaMemcpyHostToDevice, g->stream));
    vmark(g, NULL);
    for (int pbits = 0; pbits < 64;) {
        const int w = 64 - pbits < 12 ? 64 - pbits : 12;
        CK(cudaMemsetAsync(g->hist.p, 0, NB_BINS * sizeof(unsigned long long), g->stream));
        BY_D_BOUND(g->d, nb_hist_d, g, grid, s, jspan, prefix, pbits, w);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(h, g->hist.p, sizeof h, cudaMemcpyDeviceToHost, g->stream));
        CK(cudaStreamSynchronize(g->stream));
        uint64_t b = 0, below = 0;
        while (b < (1ull << w) - 1 && below + h[b] < r) below += h[b++];
        if (below + h[b] < r) {
            st = fd_fail(FD_ERR_INTERNAL, "dpc_gpu_kth_d2: rank %llu beyond the %llu distances of prefix %llx/%d",
                         (unsigned long long)r, (unsigned long long)(below + h[b]), prefix, pbits);
            goto done;
        }
        r -= below;
        prefix = prefix << w | b;
        pbits += w;
        vmark(g, "d_c: a digit");
        if (pbits < 64 && h[b] <= collect) {
            /* The h[b] distances of this prefix, sorted: the r-th is the
             * one the remaining digits would have found, bit for bit. */
            const uint64_t left = h[b];
            unsigned long long got = 0;
            FD_TRY_GOTO(grow(&g->nbsel, left, sizeof(unsigned long long), "the nearest distances"), st, done);
            if (!(sel = (unsigned long long *)malloc(left * sizeof *sel))) {
                st = fd_fail(FD_ERR_NOMEM, "out of memory");
                goto done;
            }
            CK(cudaMemsetAsync(g->count, 0, sizeof *g->count, g->stream));
            BY_D_BOUND(g->d, nb_collect_d, g, grid, s, jspan, prefix, pbits, left);
            CK(cudaGetLastError());
            CK(cudaMemcpyAsync(&got, g->count, sizeof got, cudaMemcpyDeviceToHost, g->stream));
            CK(cudaMemcpyAsync(sel, g->nbsel.p, left * sizeof *sel, cudaMemcpyDeviceToHost, g->stream));
            CK(cudaStreamSynchronize(g->stream));
            if (got != left) {
                st = fd_fail(FD_ERR_INTERNAL, "dpc_gpu_kth_d2: %llu distances of prefix %llx/%d, the histogram said %llu",
                             got, prefix, pbits, (unsigned long long)left);
                goto done;
            }
            qsort(sel, left, sizeof *sel, cmp_u64);
            prefix = sel[r - 1];
            pbits = 64;
            vmark(g, "d_c: the last distances, sorted");
        }
    }
    memcpy(d2, &prefix, sizeof *d2);
done:
    free(r32);
    free(sel);
    return st;
}

extern "C" fd_status dpc_gpu_labels(dpc_gpu *g, const int64_t *parent, int32_t *labels, int *rounds)
{
    fd_status st = FD_OK;
    const uint64_t n = g->n;
    unsigned long long more = 1;
    *rounds = 0;
    CK(cudaSetDevice(g->device));
    FD_TRY(grow(&g->lab, n, sizeof(int32_t), "the labels"));
    FD_TRY(grow(&g->ptr, n, sizeof(int64_t), "the label pointers"));
    if (parent) CK(cudaMemcpyAsync(g->ptr.p, parent, n * sizeof(int64_t), cudaMemcpyHostToDevice, g->stream));
    else CK(cudaMemcpyAsync(g->ptr.p, g->parent, n * sizeof(int64_t), cudaMemcpyDeviceToDevice, g->stream));
    CK(cudaMemcpyAsync(g->lab.p, labels, n * sizeof(int32_t), cudaMemcpyHostToDevice, g->stream));
    /* Each round at least halves what is left of every unlabelled chain,
     * so 64 rounds cover any chain; more means a cycle of parents. */
    while (more) {
        if (++*rounds > 64) {
            st = fd_fail(FD_ERR_INTERNAL, "dpc_gpu_labels: no end after 64 rounds (a cycle of parents?)");
            goto done;
        }
        CK(cudaMemsetAsync(g->count, 0, sizeof *g->count, g->stream));
        k_jump<<<blocks_for(n), THREADS, 0, g->stream>>>((int32_t *)g->lab.p, (int64_t *)g->ptr.p, n, g->count);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(&more, g->count, sizeof more, cudaMemcpyDeviceToHost, g->stream));
        CK(cudaStreamSynchronize(g->stream));
    }
    CK(cudaMemcpyAsync(labels, g->lab.p, n * sizeof(int32_t), cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
done:
    return st;
}
