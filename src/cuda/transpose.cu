/* SPDX-License-Identifier: BSD-3-Clause */
/* Bit-matrix transpose: each block takes a 64 x 64 tile; the tile is read
 * as 64 words (one per row), transposed in shared memory bit by bit with a
 * ballot per output word, and written as 64 words (one per column).
 * Reads and writes are coalesced along words. */
#include "check.cuh"
#include "fdcuda.h"

#include <stdint.h>

__global__ void bit_transpose_tile(const uint64_t *__restrict__ in, uint32_t rows, uint32_t cols, uint32_t in_words,
                                   uint64_t *__restrict__ out, uint32_t out_words)
{
    __shared__ uint64_t tile[64];
    const uint32_t tr = blockIdx.y * 64; /* first row of the tile */
    const uint32_t tw = blockIdx.x;      /* word column of the tile: columns 64*tw.. */
    const uint32_t t = threadIdx.x;      /* 0..63 */
    tile[t] = (tr + t < rows) ? in[(size_t)(tr + t) * in_words + tw] : 0;
    __syncthreads();
    /* Thread t builds output word for column c = 64*tw + t over rows tr..tr+63. */
    const uint32_t c = tw * 64 + t;
    uint64_t w = 0;
#pragma unroll 8
    for (int r = 0; r < 64; r++) w |= ((tile[r] >> t) & 1ull) << r;
    if (c < cols) out[(size_t)c * out_words + blockIdx.y] = w;
}

extern "C" fd_status fd_cuda_bit_transpose(const uint64_t *in, uint32_t rows, uint32_t cols, uint32_t in_words,
                                           uint64_t *out, uint32_t out_words)
{
    fd_status st = FD_OK;
    uint64_t *din = NULL, *dout = NULL;
    size_t inb = (size_t)rows * in_words * sizeof(uint64_t);
    size_t outb = (size_t)cols * out_words * sizeof(uint64_t);
    if (in_words * 64u < cols || out_words * 64u < rows)
        return fd_fail(FD_ERR_INTERNAL, "bit transpose: %u x %u does not fit %u / %u words", rows, cols, in_words,
                       out_words);
    CUDA_CHECK_GOTO(cudaMalloc(&din, inb ? inb : 8), st, done);
    CUDA_CHECK_GOTO(cudaMalloc(&dout, outb ? outb : 8), st, done);
    CUDA_CHECK_GOTO(cudaMemcpy(din, in, inb, cudaMemcpyHostToDevice), st, done);
    CUDA_CHECK_GOTO(cudaMemset(dout, 0, outb), st, done);
    if (rows && cols) {
        dim3 grid((cols + 63) / 64, (rows + 63) / 64);
        bit_transpose_tile<<<grid, 64>>>(din, rows, cols, in_words, dout, out_words);
        CUDA_CHECK_GOTO(cudaGetLastError(), st, done);
    }
    CUDA_CHECK_GOTO(cudaMemcpy(out, dout, outb, cudaMemcpyDeviceToHost), st, done);
done:
    if (din) cudaFree(din);
    if (dout) cudaFree(dout);
    return st;
}
