/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_cuda_upload (fdcuda.h): a large host array to the device through a
 * ring of pinned buffers.  A cudaMemcpy from pageable memory stages the
 * bytes through the driver's own pinned buffers, copying them there on
 * the calling thread, one piece after the other: 87-94 ms for bcp's
 * 800 MB block on an H100 (9 GB/s, bench/results/bcp-gpu-history.txt).
 * Here UPLOAD_THREADS host threads copy each piece into a pinned buffer
 * while the copy engine moves the one before it (bench/gpu-upload.sh
 * times both). */
#include "fdcuda.h"

#include "../common/clock.h"
#include "../common/env.h"
#include "../common/par_rows.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C, for par_rows (its header is C11's); check.cuh's macro, here. */
#define CK(call)                                                                                              \
    do {                                                                                                      \
        cudaError_t rc_ = (call);                                                                             \
        if (rc_ != cudaSuccess) {                                                                             \
            st = fd_fail_at(FD_ERR_CUDA, __FILE__, __LINE__, "%s: %s", #call, cudaGetErrorString(rc_));       \
            goto done;                                                                                        \
        }                                                                                                     \
    } while (0)

/* A piece a buffer, UPLOAD_RING buffers: while one is copied to the
 * device the next is filled, and a third lets the host run ahead of an
 * engine that stalls.  Pinned memory costs its allocation (the pages are
 * locked one by one), so the ring is small; below two pieces the plain
 * copy is used (nothing to overlap).  Write-combined: the host only writes the ring, and
 * the device's reads of it need not snoop the host's caches.  With 4
 * threads the 800 MB went at 18-20 GB/s on an H100, against 6-8 GB/s
 * pageable (bench/results/gpu-upload.csv); other sizes and counts were
 * not tried. */
#define UPLOAD_PIECE ((uint64_t)8 << 20)
#define UPLOAD_RING 3
#define UPLOAD_THREADS 4
#define UPLOAD_FLAGS cudaHostAllocWriteCombined
#define UPLOAD_SLICE ((uint64_t)256 << 10) /* a thread's share at a time */

typedef struct {
    char *to;
    const char *from;
    uint64_t bytes;
} slice_job;

static fd_status copy_slices(void *ctx, uint64_t i0, uint64_t i1, int thread)
{
    const slice_job *j = ctx;
    (void)thread;
    const uint64_t a = i0 * UPLOAD_SLICE, b = i1 * UPLOAD_SLICE < j->bytes ? i1 * UPLOAD_SLICE : j->bytes;
    memcpy(j->to + a, j->from + a, b - a);
    return FD_OK;
}

fd_status fd_cuda_upload(void *dst, const void *src, uint64_t bytes)
{
    fd_status st = FD_OK;
    cudaStream_t s = NULL;
    char *ring[UPLOAD_RING] = {NULL};
    cudaEvent_t freed[UPLOAD_RING] = {NULL};
    const double t0 = fd_now();
    char what[96];
    if (bytes < 2 * UPLOAD_PIECE || fd_env_switched("FD_GPU_UPLOAD")) {
        CK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
        snprintf(what, sizeof what, "%.1f MB to the device (pageable)", (double)bytes / 1e6);
        fd_cuda_say_time(what, t0);
        return FD_OK;
    }
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int b = 0; b < UPLOAD_RING; b++) {
        CK(cudaHostAlloc((void **)&ring[b], UPLOAD_PIECE, UPLOAD_FLAGS));
        CK(cudaEventCreateWithFlags(&freed[b], cudaEventDisableTiming));
    }
    for (uint64_t off = 0, k = 0; off < bytes; off += UPLOAD_PIECE, k++) {
        const int b = (int)(k % UPLOAD_RING);
        const uint64_t n = bytes - off < UPLOAD_PIECE ? bytes - off : UPLOAD_PIECE;
        /* The buffer's last copy to the device is done with it. */
        if (k >= UPLOAD_RING) CK(cudaEventSynchronize(freed[b]));
        slice_job j = {ring[b], (const char *)src + off, n};
        FD_TRY_GOTO(par_rows_chunk(UPLOAD_THREADS, 0, (n + UPLOAD_SLICE - 1) / UPLOAD_SLICE, 1, copy_slices, &j, NULL),
                    st, done);
        CK(cudaMemcpyAsync((char *)dst + off, ring[b], n, cudaMemcpyHostToDevice, s));
        CK(cudaEventRecord(freed[b], s));
    }
    CK(cudaStreamSynchronize(s));
    snprintf(what, sizeof what, "%.1f MB to the device (staged)", (double)bytes / 1e6);
    fd_cuda_say_time(what, t0);
done:
    if (st != FD_OK && s) cudaStreamSynchronize(s); /* no copy may still read a buffer freed below */
    for (int b = 0; b < UPLOAD_RING; b++) {
        if (freed[b]) cudaEventDestroy(freed[b]);
        if (ring[b]) cudaFreeHost(ring[b]);
    }
    if (s) cudaStreamDestroy(s);
    return st;
}

struct fd_upload {
    pthread_t thread;
    int device;
    void *dst;
    const void *src;
    uint64_t bytes;
    fd_status st;
};

static void *upload_run(void *arg)
{
    fd_upload *u = arg;
    fd_status st = FD_OK;
    /* The current device is the thread's. */
    CK(cudaSetDevice(u->device));
    st = fd_cuda_upload(u->dst, u->src, u->bytes);
done:
    u->st = st;
    return NULL;
}

fd_status fd_cuda_upload_start(fd_upload **out, int device, void *dst, const void *src, uint64_t bytes)
{
    fd_upload *u = calloc(1, sizeof *u);
    *out = NULL;
    if (!u) return fd_fail(FD_ERR_NOMEM, "out of memory");
    *u = (fd_upload){.device = device, .dst = dst, .src = src, .bytes = bytes, .st = FD_OK};
    if (pthread_create(&u->thread, NULL, upload_run, u) != 0) {
        /* No thread: the copy now, on this one. */
        const fd_status st = fd_cuda_upload(dst, src, bytes);
        free(u);
        return st;
    }
    *out = u;
    return FD_OK;
}

fd_status fd_cuda_upload_finish(fd_upload **pu)
{
    fd_upload *u = *pu;
    if (!u) return FD_OK;
    pthread_join(u->thread, NULL);
    const fd_status st = u->st;
    free(u);
    *pu = NULL;
    return st;
}
