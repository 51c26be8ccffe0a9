/* SPDX-License-Identifier: BSD-3-Clause */
/* cuBLAS, loaded when bcp's CUDA backend first needs it rather than
 * linked: libcublas and the libcublasLt it pulls in (over 500 MB) took
 * about 90 ms of every start and exit of the binary, whatever the
 * subcommand, in their loading and static initialisers (bench/startup.sh:
 * `fcbo-dist version` 0.016 s against 0.104 s on the one-GPU machine).
 * Only the four functions bcp calls. */
#ifndef FD_CUBLAS_LOAD_H
#define FD_CUBLAS_LOAD_H

#include "../common/status.h"

#include <cublas_v2.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    cublasStatus_t (*create)(cublasHandle_t *handle);
    cublasStatus_t (*destroy)(cublasHandle_t handle);
    cublasStatus_t (*set_stream)(cublasHandle_t handle, cudaStream_t stream);
    cublasStatus_t (*dgemm)(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const double *alpha, const double *A, int lda, const double *B, int ldb,
                            const double *beta, double *C, int ldc);
} fd_cublas;

/* A cuBLAS call whose status is not success: the failing call and its
 * line into st (FD_ERR_CUDA), then a jump to the function's cleanup
 * label, as CUDA_CHECK_GOTO (check.cuh) does for the runtime's calls. */
#define CUBLAS_CHECK_GOTO(call, st, label)                                                                             \
    do {                                                                                                               \
        const cublasStatus_t cublas_rc_ = (call);                                                                      \
        if (cublas_rc_ != CUBLAS_STATUS_SUCCESS) {                                                                     \
            (st) = fd_fail_at(FD_ERR_CUDA, __FILE__, __LINE__, "%s: cuBLAS status %d", #call, (int)cublas_rc_);        \
            goto label;                                                                                                \
        }                                                                                                              \
    } while (0)

/* The functions, loaded on the first call (thread-safe); a library that
 * cannot be found or lacks one of them is an FD_ERR_CUDA that names it,
 * each time it is asked for. */
fd_status fd_cublas_get(const fd_cublas **out);
/* The library loaded now, silently (fd_dynlib_preload): bcp's warm-up
 * thread, beside the read. */
void fd_cublas_preload(void);

#ifdef __cplusplus
}
#endif

#endif
