/* SPDX-License-Identifier: BSD-3-Clause */
/* What the SIMT pair kernels beside the int8 one (spearman_gpu_missing.cu,
 * spearman_gpu_wide.cu) bring back to the host, and how: three counters
 * (pairs, kept for certain, records), the rho histogram, and a buffer of
 * records that grows (a launch that overflows it runs again with room for
 * all).  A kernel's block starts with pair_out_begin, takes a slot per
 * record with pair_out_slot, and ends with pair_out_flush; the host side
 * runs its launches through pair_out_run. */
#ifndef FD_SPEARMAN_GPU_OUT_CUH
#define FD_SPEARMAN_GPU_OUT_CUH

#include "../cuda/check.cuh"
#include "spearman_hist.h"

#include <cooperative_groups.h>
#include <string.h>

/* ---------------- device ---------------- */

/* A block's shared tallies: its pairs and keeps, and its histogram. */
struct pair_tally {
    unsigned long long cnt[2];
    unsigned int hist[SPEARMAN_HIST_BINS];
};

__device__ __forceinline__ void pair_out_begin(pair_tally *t, int hist)
{
    if (hist)
        for (uint32_t b = threadIdx.x; b < SPEARMAN_HIST_BINS; b += blockDim.x) t->hist[b] = 0;
    if (threadIdx.x == 0) t->cnt[0] = t->cnt[1] = 0;
}

/* This thread's record slot, counted in cnt[2] a warp's worth at a time;
 * a slot at or past the buffer's room is dropped (pair_out_run runs the
 * launch again). */
__device__ __forceinline__ unsigned long long pair_out_slot(unsigned long long *cnt)
{
    cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
    unsigned long long at = 0;
    if (g.thread_rank() == 0) at = atomicAdd(&cnt[2], (unsigned long long)g.size());
    return g.shfl(at, 0) + g.thread_rank();
}

/* A block's end, from every thread: its tallies into the device's. */
__device__ __forceinline__ void pair_out_flush(pair_tally *t, unsigned long long pairs, unsigned long long kept,
                                               int hist, unsigned long long *cnt, unsigned long long *hist_out)
{
    if (pairs) atomicAdd(&t->cnt[0], pairs);
    if (kept) atomicAdd(&t->cnt[1], kept);
    __syncthreads();
    if (threadIdx.x == 0) {
        if (t->cnt[0]) atomicAdd(&cnt[0], t->cnt[0]);
        if (t->cnt[1]) atomicAdd(&cnt[1], t->cnt[1]);
    }
    if (hist)
        for (uint32_t b = threadIdx.x; b < SPEARMAN_HIST_BINS; b += blockDim.x)
            if (t->hist[b]) atomicAdd(&hist_out[b], (unsigned long long)t->hist[b]);
}

/* ---------------- host ---------------- */

struct pair_out {
    unsigned long long *d_cnt, *h_cnt, *d_hist, *h_hist;
    void *d_rec, *h_rec;
    uint64_t cap_d, cap_h;
    size_t rec_size;
    const char *what; /* the records, for an out-of-memory message */
};

static void pair_out_free(pair_out *o)
{
    cudaFree(o->d_cnt);
    cudaFree(o->d_hist);
    cudaFree(o->d_rec);
    if (o->h_cnt) cudaFreeHost(o->h_cnt);
    if (o->h_hist) cudaFreeHost(o->h_hist);
    if (o->h_rec) cudaFreeHost(o->h_rec);
    memset(o, 0, sizeof *o);
}

/* first: the records the buffer holds at first (FD_GPU_RECORDS). */
static fd_status pair_out_make(pair_out *o, size_t rec_size, uint64_t first, const char *what)
{
    fd_status st = FD_OK;
    memset(o, 0, sizeof *o);
    o->rec_size = rec_size;
    o->what = what;
    o->cap_d = first ? first : 1;
    FD_TRY_GOTO(fd_cuda_alloc((void **)&o->d_cnt, 3 * 8, "counters"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc((void **)&o->d_hist, SPEARMAN_HIST_BINS * 8, "the histogram"), st, done);
    FD_TRY_GOTO(fd_cuda_alloc(&o->d_rec, o->cap_d * rec_size, what), st, done);
    CUDA_CHECK_GOTO(cudaHostAlloc((void **)&o->h_cnt, 3 * 8, cudaHostAllocDefault), st, done);
    CUDA_CHECK_GOTO(cudaHostAlloc((void **)&o->h_hist, SPEARMAN_HIST_BINS * 8, cudaHostAllocDefault), st, done);
    return FD_OK;
done:
    pair_out_free(o);
    return st;
}

/* Clears the counters (and the histogram), runs launch(arg, records,
 * room) on stream s and brings the counts, the histogram and the records
 * back, running it again with room for every record where the buffer was
 * short.  *nrec: the records, at o->h_rec. */
static fd_status pair_out_run(pair_out *o, cudaStream_t s, int hist,
                              fd_status (*launch)(void *arg, void *rec, unsigned long long cap), void *arg,
                              uint64_t *nrec)
{
    fd_status st = FD_OK;
    uint64_t n = 0;
    for (;;) {
        CUDA_CHECK_GOTO(cudaMemsetAsync(o->d_cnt, 0, 3 * 8, s), st, done);
        if (hist) CUDA_CHECK_GOTO(cudaMemsetAsync(o->d_hist, 0, SPEARMAN_HIST_BINS * 8, s), st, done);
        FD_TRY(launch(arg, o->d_rec, o->cap_d));
        CUDA_CHECK_GOTO(cudaMemcpyAsync(o->h_cnt, o->d_cnt, 3 * 8, cudaMemcpyDeviceToHost, s), st, done);
        CUDA_CHECK_GOTO(cudaStreamSynchronize(s), st, done);
        n = o->h_cnt[2];
        if (n <= o->cap_d) break;
        FD_TRY(fd_cuda_grow(&o->d_rec, &o->cap_d, n, o->rec_size, o->what));
    }
    if (n) {
        FD_TRY(fd_cuda_host_grow(&o->h_rec, &o->cap_h, n, o->rec_size));
        CUDA_CHECK_GOTO(cudaMemcpyAsync(o->h_rec, o->d_rec, n * o->rec_size, cudaMemcpyDeviceToHost, s), st, done);
    }
    if (hist)
        CUDA_CHECK_GOTO(cudaMemcpyAsync(o->h_hist, o->d_hist, SPEARMAN_HIST_BINS * 8, cudaMemcpyDeviceToHost, s), st,
                        done);
    CUDA_CHECK_GOTO(cudaStreamSynchronize(s), st, done);
    *nrec = n;
done:
    return st;
}

#endif
