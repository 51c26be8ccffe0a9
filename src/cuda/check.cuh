/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA check macros: record the failing call and its line, then jump to the
 * function's single cleanup label; and the allocation helpers both device
 * engines use. */
#ifndef FD_CUDA_CHECK_CUH
#define FD_CUDA_CHECK_CUH

#include "../common/status.h"

#include <cuda_runtime.h>
#include <stdint.h>

#define CUDA_CHECK_GOTO(call, st, label)                                      \
    do {                                                                      \
        cudaError_t cuda_rc_ = (call);                                        \
        if (cuda_rc_ != cudaSuccess) {                                        \
            (st) = fd_fail_at(FD_ERR_CUDA, __FILE__, __LINE__, "%s: %s",      \
                              #call, cudaGetErrorString(cuda_rc_));           \
            goto label;                                                       \
        }                                                                     \
    } while (0)

/* cudaMalloc with an out-of-memory error that says for what, how much,
 * and what the user can change (fd_cuda_set_oom_hint; FD_ERR_NOMEM, exit
 * status 2).  device.cu. */
#ifdef __cplusplus
extern "C"
#endif
fd_status fd_cuda_alloc(void **p, size_t bytes, const char *what);

/* A device buffer grown to hold n elements, at least doubling (contents
 * not kept). */
static inline fd_status fd_cuda_grow(void **p, uint64_t *cap, uint64_t n, size_t elem, const char *what)
{
    if (n <= *cap && *p) return FD_OK;
    uint64_t c = *cap * 2 > n ? *cap * 2 : n;
    cudaFree(*p);
    *p = NULL;
    *cap = 0;
    FD_TRY(fd_cuda_alloc(p, c * elem, what));
    *cap = c;
    return FD_OK;
}

/* The same for pinned host memory. */
static inline fd_status fd_cuda_host_grow(void **p, uint64_t *cap, uint64_t n, size_t elem)
{
    if (n <= *cap && *p) return FD_OK;
    uint64_t c = *cap * 2 > n ? *cap * 2 : n;
    if (*p) cudaFreeHost(*p);
    *p = NULL;
    *cap = 0;
    cudaError_t rc = cudaHostAlloc(p, (c ? c : 1) * elem, cudaHostAllocDefault);
    if (rc != cudaSuccess) {
        cudaGetLastError();
        *p = NULL;
        return fd_fail(FD_ERR_NOMEM, "out of pinned host memory (%.1f MiB): %s", (double)(c * elem) / 1048576.0,
                       cudaGetErrorString(rc));
    }
    *cap = c;
    return FD_OK;
}

#endif
