/* CUDA check macros: record the failing call and its line, then jump to the
 * function's single cleanup label. */
#ifndef FD_CUDA_CHECK_CUH
#define FD_CUDA_CHECK_CUH

#include "../common/status.h"

#include <cuda_runtime.h>

#define CUDA_CHECK_GOTO(call, st, label)                                      \
    do {                                                                      \
        cudaError_t cuda_rc_ = (call);                                        \
        if (cuda_rc_ != cudaSuccess) {                                        \
            (st) = fd_fail_at(FD_ERR_CUDA, __FILE__, __LINE__, "%s: %s",      \
                              #call, cudaGetErrorString(cuda_rc_));           \
            goto label;                                                       \
        }                                                                     \
    } while (0)

/* cudaMalloc with an out-of-memory error that says for what and how
 * much (FD_ERR_NOMEM: the user can shrink the problem or a chunk). */
static inline fd_status fd_cuda_alloc(void **p, size_t bytes, const char *what)
{
    cudaError_t rc = cudaMalloc(p, bytes ? bytes : 8);
    if (rc != cudaSuccess) {
        cudaGetLastError();
        *p = NULL;
        return fd_fail(FD_ERR_NOMEM, "out of GPU memory for %s (%.1f MiB more): %s", what, (double)bytes / 1048576.0,
                       cudaGetErrorString(rc));
    }
    return FD_OK;
}

#endif
