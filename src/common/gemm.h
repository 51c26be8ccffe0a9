/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense double products for the CPU backends, by OpenBLAS where the
 * build found it (libopenblas-dev; FD_HAVE_OPENBLAS in version.h), else
 * not at all: callers keep their own loops for that case (the GPU
 * machine has no BLAS).  One of gemm_openblas.c and gemm_none.c is built. */
#ifndef FD_GEMM_H
#define FD_GEMM_H

#include "status.h"

#include <stdint.h>

/* Whether fd_dgemm can take a product of these sizes (BLAS takes int
 * sizes). */
int fd_dgemm_can(uint64_t m, uint64_t n, uint64_t k);

/* Row-major C (m x n) = op(A) B, op(A) = A (m x k, leading dimension
 * lda) or, with trans_a, A^T (A k x m), B k x n; on `threads` threads.
 * Each entry of C sums over k in an order that does not depend on the
 * threads (OpenBLAS splits C, not k, among them). */
void fd_dgemm(int trans_a, uint64_t m, uint64_t n, uint64_t k, const double *A, uint64_t lda, const double *B,
              uint64_t ldb, double *C, uint64_t ldc, int threads);

/* Row-major C (m x n) = A B^T, A m x k and B n x k (leading dimensions
 * lda, ldb): products of rows with rows, as a Gram matrix's.  C goes out
 * in smaller fixed blocks of rows than fd_dgemm's (a Gram has few rows),
 * so that its bits too do not depend on the threads. */
void fd_dgemm_abt(uint64_t m, uint64_t n, uint64_t k, const double *A, uint64_t lda, const double *B, uint64_t ldb,
                  double *C, uint64_t ldc, int threads);

/* The upper triangle of row-major C (n x n) = A A^T, A n x k, on the
 * calling thread, one BLAS call (for callers that split the work among
 * their threads themselves; fd_blas_one_thread first): half a Gram
 * matrix's products.  The lower triangle is not written. */
void fd_dsyrk_upper_here(uint64_t n, uint64_t k, const double *A, uint64_t lda, double *C, uint64_t ldc);

/* Loads OpenBLAS (src/common/dynlib.h; a no-op in a build without it)
 * and stops the pool it starts: before fd_dgemm or fd_blas_one_thread.
 * Its failure names the library. */
fd_status fd_blas_load(void);

/* OpenBLAS's own threads off (a no-op without OpenBLAS): our threads split
 * the work, so that the bits do not depend on their number, and LAPACK's
 * small R x R factorisations pay no thread start (bcp/chol.c). */
void fd_blas_one_thread(void);

/* OPENBLAS_CORETYPE from the CPU's features, where the user has not set
 * it: SkylakeX with AVX-512 (F, DQ, BW, VL), Haswell with AVX2 and FMA.
 * OpenBLAS picks its kernels by the CPU's model number, and on the
 * virtual CPUs of the dev VM and the GPU machines ("Intel(R) Xeon(R)
 * Processor") it fell back to its generic Prescott (SSE3) kernels: a bcp
 * start's products ran at half speed or less (bench/results/
 * bcp-cpu-history.txt).  Before any thread starts (main): OpenBLAS reads
 * the variable when it loads, and setenv is not thread-safe. */
void fd_blas_core_hint(void);

/* Stops the thread pool a pthread OpenBLAS starts when it loads (its
 * threads spin for ~0.1 s, taking cores from ours), right after a dlopen
 * of it or of a library that pulls it in (a LAPACK on OpenBLAS): lib is
 * the handle, whose dependencies are searched too.  Always built
 * (blas_pool.c), whatever BLAS the binary was built with. */
void fd_blas_pool_stop(void *lib);

#endif
