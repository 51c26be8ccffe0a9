/* SPDX-License-Identifier: BSD-3-Clause */
/* --edges' up pass by rows on the GPU (lattice_gpu.h; docs/algorithms.md,
 * "Edges").  The CPU's way (lattice_edges.c) gathers a concept's distinct
 * candidates B ∩ g', then keeps the maximal ones; a warp cannot hold
 * thousands of candidates, so here a warp keeps the maximal ones of those
 * seen so far (an antichain) as it goes through the objects 32 at a time:
 *
 *   each lane ANDs B with its object's row (an object of the extent gives
 *   B itself and is skipped) and drops its candidate when a kept one
 *   holds it; the survivors, one at a time, drop the kept ones they hold
 *   and join them.
 *
 * The antichain at the end is the maximal candidates, the same set the CPU
 * finds.  A warp keeps at most KEPT of them at once; a concept that needs
 * more is left to the host, as is one that finds the output full.  The
 * covers' concept ids come from a hash table of every intent as a bitset
 * (open addressing, built here with atomicCAS), sorted within the warp. */
#include "../common/clock.h"
#include "../cuda/check.cuh"
#include "hash_words.h"
#include "lattice_gpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W_MAX LATTICE_GPU_COVERS_MAX_WORDS
#define KEPT 64          /* maximal candidates a warp holds at once */
#define WARPS 4          /* a block's warps: 4 x KEPT x W_MAX words of shared memory (32 KiB) */
#define FULL 0xffffffffu
#define BATCH ((uint64_t)1 << 20) /* concepts a launch */

#define CK(call) CUDA_CHECK_GOTO(call, st, done)

/* Concept i's intent as a bitset (bits zeroed first). */
__global__ void intent_bits(const uint64_t *ioff, const uint32_t *iidx, uint64_t n, uint32_t w, uint64_t *bits)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        for (uint64_t p = ioff[i] - ioff[0]; p < ioff[i + 1] - ioff[0]; p++)
            bits[i * w + iidx[p] / 64] |= 1ull << (iidx[p] % 64);
}

/* slot: concept id + 1, 0 empty; 2^k >= 2n slots. */
__global__ void intent_table(const uint64_t *bits, uint64_t n, uint32_t w, unsigned long long *slot, uint64_t smask)
{
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        for (uint64_t s = fd_hash_words(bits + i * w, w) & smask;; s = (s + 1) & smask)
            if (atomicCAS(&slot[s], 0ull, (unsigned long long)i + 1) == 0) break;
}

__device__ __forceinline__ int64_t find_bits(const uint64_t *key, const uint64_t *bits, uint32_t w,
                                             const unsigned long long *slot, uint64_t smask)
{
    for (uint64_t s = fd_hash_words(key, w) & smask;; s = (s + 1) & smask) {
        const uint64_t v = slot[s];
        if (!v) return -1;
        const uint64_t *b = bits + (v - 1) * w;
        bool eq = true;
        for (uint32_t q = 0; q < w; q++) eq &= b[q] == key[q];
        if (eq) return (int64_t)(v - 1);
    }
}

/* a ⊆ b over w words (a in registers, b anywhere). */
__device__ __forceinline__ bool subset(const uint64_t *a, const uint64_t *b, uint32_t w)
{
    bool in = true;
#pragma unroll
    for (uint32_t q = 0; q < W_MAX; q++)
        if (q < w) in &= (a[q] & ~b[q]) == 0;
    return in;
}

struct up_args {
    const uint64_t *rows, *bits, *list;
    const unsigned long long *slot;
    uint64_t smask, nlist, cap;
    uint32_t n_obj, w;
    uint64_t *start, *ids;
    uint32_t *cnt;
    unsigned long long *used;  /* output entries reserved */
    unsigned long long *bad;   /* the first concept (+ 1) with a cover not among the concepts */
};

__global__ void __launch_bounds__(WARPS * 32) up_covers(up_args a)
{
    __shared__ uint64_t kept_all[WARPS][KEPT][W_MAX];
    __shared__ uint64_t B_all[WARPS][W_MAX];
    __shared__ uint64_t id_all[WARPS][KEPT];
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32, w = a.w;
    uint64_t(*kept)[W_MAX] = kept_all[warp];
    uint64_t *B = B_all[warp], *idk = id_all[warp];
    for (uint64_t t = blockIdx.x * (uint64_t)WARPS + warp; t < a.nlist; t += (uint64_t)gridDim.x * WARPS) {
        const uint64_t i = a.list[t];
        if (lane < w) B[lane] = a.bits[i * w + lane];
        __syncwarp();
        uint32_t K = 0;
        bool overflow = false;
        for (uint32_t g0 = 0; g0 < a.n_obj && !overflow; g0 += 32) {
            const uint32_t g = g0 + lane;
            uint64_t c[W_MAX];
            bool cand = g < a.n_obj, all = true;
#pragma unroll
            for (uint32_t q = 0; q < W_MAX; q++)
                if (q < w) {
                    c[q] = cand ? B[q] & a.rows[(uint64_t)g * w + q] : 0;
                    all &= c[q] == B[q];
                }
            cand = cand && !all; /* an object of the extent */
            for (uint32_t j = 0; cand && j < K; j++) cand = !subset(c, kept[j], w);
            for (uint32_t m = __ballot_sync(FULL, cand); m; m &= m - 1) {
                const uint32_t src = __ffs(m) - 1;
                uint64_t x[W_MAX], mine = 0;
#pragma unroll
                for (uint32_t q = 0; q < W_MAX; q++)
                    if (q < w) {
                        x[q] = __shfl_sync(FULL, c[q], src);
                        if (q == lane) mine = x[q];
                    }
                /* Held by a kept one (one that joined in this round)? */
                bool held = false;
                for (uint32_t j = lane; j < K; j += 32) held |= subset(x, kept[j], w);
                if (__any_sync(FULL, held)) continue;
                /* The kept ones it holds go; the rest move down in order. */
                const bool go0 = lane < K && subset(kept[lane], x, w);
                const bool go1 = lane + 32 < K && subset(kept[lane + 32], x, w);
                const uint64_t gone = (uint64_t)__ballot_sync(FULL, go0) | (uint64_t)__ballot_sync(FULL, go1) << 32;
                __syncwarp();
                if (gone) {
                    uint32_t to = 0;
                    for (uint32_t j = 0; j < K; j++)
                        if (!((gone >> j) & 1)) {
                            if (to != j && lane < w) kept[to][lane] = kept[j][lane];
                            to++;
                            __syncwarp();
                        }
                    K = to;
                }
                if (K == KEPT) {
                    overflow = true;
                    break;
                }
                if (lane < w) kept[K][lane] = mine;
                K++;
                __syncwarp();
            }
        }
        if (overflow) {
            if (lane == 0) a.cnt[t] = UINT32_MAX;
            __syncwarp();
            continue;
        }
        /* The covers' ids, then each one's place among them (distinct). */
        bool lost = false;
        for (uint32_t j = lane; j < K; j += 32) {
            const int64_t id = find_bits(kept[j], a.bits, w, a.slot, a.smask);
            lost |= id < 0;
            idk[j] = (uint64_t)id;
        }
        if (__any_sync(FULL, lost)) {
            if (lane == 0) atomicCAS(a.bad, 0ull, (unsigned long long)i + 1);
            __syncwarp();
            continue;
        }
        __syncwarp();
        unsigned long long base = 0;
        if (lane == 0) base = atomicAdd(a.used, (unsigned long long)K);
        base = __shfl_sync(FULL, base, 0);
        if (base + K > a.cap) {
            if (lane == 0) a.cnt[t] = UINT32_MAX;
        } else {
            for (uint32_t j = lane; j < K; j += 32) {
                uint32_t r = 0;
                for (uint32_t q = 0; q < K; q++) r += idk[q] < idk[j];
                a.ids[base + r] = idk[j];
            }
            if (lane == 0) {
                a.start[t] = base;
                a.cnt[t] = K;
            }
        }
        __syncwarp();
    }
}

extern "C" fd_status lattice_gpu_up_covers(const lattice_gpu_covers *in, uint64_t *start, uint32_t *cnt, uint64_t **ids,
                                           uint64_t *nids)
{
    fd_status st = FD_OK;
    const uint64_t n = in->n, w = in->w, nint = in->ioff[n] - in->ioff[0];
    uint64_t *d_ioff = NULL, *d_rows = NULL, *d_bits = NULL, *d_list = NULL, *d_start = NULL, *d_ids = NULL;
    uint32_t *d_iidx = NULL, *d_cnt = NULL;
    unsigned long long *d_slot = NULL, *d_used = NULL, *d_bad = NULL;
    uint64_t slots = 2, total = 0;
    double tp = fd_now(), t_up = 0, t_kernel = 0, t_down = 0; /* FD_GPU_VERBOSE */
    const uint64_t cap = 16 * (in->nlist < BATCH ? in->nlist : BATCH) + 65536;
    *ids = NULL;
    *nids = 0;
    if (w == 0 || w > W_MAX) return fd_fail(FD_ERR_INTERNAL, "lattice_gpu_up_covers: %llu words a row", (unsigned long long)w);
    while (slots < 2 * n) slots *= 2;
    const char *what = "--edges on the GPU";
    CK(cudaSetDevice(in->device));
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_ioff, (n + 1) * 8, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_iidx, (nint + 1) * 4, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_rows, ((uint64_t)in->n_obj * w + 1) * 8, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_bits, (n * w + 1) * 8, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_slot, slots * 8, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_list, (in->nlist < BATCH ? in->nlist : BATCH) * 8 + 8, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_start, (in->nlist < BATCH ? in->nlist : BATCH) * 8 + 8, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_cnt, (in->nlist < BATCH ? in->nlist : BATCH) * 4 + 4, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_ids, cap * 8, what), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&d_used, 16, what), st, done);
    d_bad = d_used + 1;
    CK(cudaMemcpy(d_ioff, in->ioff, (n + 1) * 8, cudaMemcpyHostToDevice));
    if (nint) CK(cudaMemcpy(d_iidx, in->iidx, nint * 4, cudaMemcpyHostToDevice));
    if (in->n_obj) CK(cudaMemcpy(d_rows, in->rows, (uint64_t)in->n_obj * w * 8, cudaMemcpyHostToDevice));
    CK(cudaMemset(d_bits, 0, (n * w + 1) * 8));
    CK(cudaMemset(d_slot, 0, slots * 8));
    CK(cudaMemset(d_bad, 0, 8));
    {
        const unsigned blocks = (unsigned)((n + 255) / 256 < 65535 ? (n + 255) / 256 : 65535);
        intent_bits<<<blocks ? blocks : 1, 256>>>(d_ioff, d_iidx, n, (uint32_t)w, d_bits);
        CK(cudaGetLastError());
        intent_table<<<blocks ? blocks : 1, 256>>>(d_bits, n, (uint32_t)w, d_slot, slots - 1);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
    }
    t_up = fd_now() - tp;
    for (uint64_t t0 = 0; t0 < in->nlist; t0 += BATCH) {
        const uint64_t nb = in->nlist - t0 < BATCH ? in->nlist - t0 : BATCH;
        unsigned long long used = 0, bad = 0;
        CK(cudaMemcpy(d_list, in->list + t0, nb * 8, cudaMemcpyHostToDevice));
        CK(cudaMemset(d_used, 0, 8));
        up_args a = {d_rows, d_bits, d_list, d_slot, slots - 1, nb, cap, in->n_obj, (uint32_t)w,
                     d_start, d_ids, d_cnt, d_used, d_bad};
        const uint64_t want = (nb + WARPS - 1) / WARPS;
        tp = fd_now();
        up_covers<<<(unsigned)(want < (1u << 20) ? want : (1u << 20)), WARPS * 32>>>(a);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        t_kernel += fd_now() - tp;
        tp = fd_now();
        CK(cudaMemcpy(&bad, d_bad, 8, cudaMemcpyDeviceToHost));
        if (bad) {
            st = fd_fail(FD_ERR_INPUT, "--edges: an upper cover of concept %llu is not among the concepts", bad - 1);
            goto done;
        }
        CK(cudaMemcpy(&used, d_used, 8, cudaMemcpyDeviceToHost));
        if (used > cap) used = cap; /* the reservations past the end were not written */
        CK(cudaMemcpy(start + t0, d_start, nb * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(cnt + t0, d_cnt, nb * 4, cudaMemcpyDeviceToHost));
        uint64_t *grown = (uint64_t *)realloc(*ids, (total + used + 1) * 8);
        if (!grown) {
            st = fd_fail(FD_ERR_NOMEM, "out of memory for the covers");
            goto done;
        }
        *ids = grown;
        if (used) CK(cudaMemcpy(*ids + total, d_ids, used * 8, cudaMemcpyDeviceToHost));
        for (uint64_t t = 0; t < nb; t++)
            if (cnt[t0 + t] != UINT32_MAX) start[t0 + t] += total;
        total += used;
        t_down += fd_now() - tp;
    }
    *nids = total;
    if (getenv("FD_GPU_VERBOSE"))
        fprintf(stderr, "gpu edges: %llu concepts, %llu covers; intents and table %.3f s, kernel %.3f s, back %.3f s\n",
                (unsigned long long)in->nlist, (unsigned long long)total, t_up, t_kernel, t_down);
done:
    cudaFree(d_ioff);
    cudaFree(d_iidx);
    cudaFree(d_rows);
    cudaFree(d_bits);
    cudaFree(d_slot);
    cudaFree(d_list);
    cudaFree(d_start);
    cudaFree(d_cnt);
    cudaFree(d_ids);
    cudaFree(d_used);
    if (st != FD_OK) {
        free(*ids);
        *ids = NULL;
        *nids = 0;
    }
    return st;
}
