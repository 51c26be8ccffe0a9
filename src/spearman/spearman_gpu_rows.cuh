/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank matrix's int8 rows onto the device, for the pair kernels
 * (spearman_gpu.cu, spearman_gpu_wide.cu). */
#ifndef FD_SPEARMAN_GPU_ROWS_CUH
#define FD_SPEARMAN_GPU_ROWS_CUH

#include "../cuda/check.cuh"
#include "spearman_gpu.h"

/* m's rows (kp bytes each), S_ii and 1/sqrt(S_ii) into new device arrays,
 * padded with zero rows (S_ii = 0: never a pair) to whole tiles of `tile`
 * rows and one tile more, so that a block may read a full tile anywhere;
 * on stream s, waited for (the sources are pageable).  On failure the
 * caller frees what was made. */
static fd_status gpu_rows_upload(cudaStream_t s, uint32_t kp, uint64_t tile, const spearman_gpu_mat *m, void **a,
                                 long long **sii, float **inv)
{
    fd_status st = FD_OK;
    const uint64_t pad = (m->rows + tile - 1) / tile * tile + tile;
    FD_TRY(fd_cuda_alloc(a, pad * kp, "the rank matrix"));
    FD_TRY(fd_cuda_alloc((void **)sii, pad * 8, "the rank matrix"));
    FD_TRY(fd_cuda_alloc((void **)inv, pad * 4, "the rank matrix"));
    CUDA_CHECK_GOTO(cudaMemsetAsync(*a, 0, pad * kp, s), st, done);
    CUDA_CHECK_GOTO(cudaMemsetAsync(*sii, 0, pad * 8, s), st, done);
    CUDA_CHECK_GOTO(cudaMemsetAsync(*inv, 0, pad * 4, s), st, done);
    if (m->rows) {
        CUDA_CHECK_GOTO(cudaMemcpyAsync(*a, m->a, m->rows * kp, cudaMemcpyHostToDevice, s), st, done);
        CUDA_CHECK_GOTO(cudaMemcpyAsync(*sii, m->sii, m->rows * 8, cudaMemcpyHostToDevice, s), st, done);
        CUDA_CHECK_GOTO(cudaMemcpyAsync(*inv, m->inv_root, m->rows * 4, cudaMemcpyHostToDevice, s), st, done);
    }
    CUDA_CHECK_GOTO(cudaStreamSynchronize(s), st, done);
done:
    return st;
}

#endif
