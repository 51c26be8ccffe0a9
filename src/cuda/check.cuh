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

#endif
