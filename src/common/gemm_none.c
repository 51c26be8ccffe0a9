/* SPDX-License-Identifier: BSD-3-Clause */
/* No BLAS in this build (see gemm.h): callers use their own loops. */
#include "gemm.h"

int fd_dgemm_can(uint64_t m, uint64_t n, uint64_t k)
{
    (void)m, (void)n, (void)k;
    return 0;
}

void fd_dgemm(int trans_a, uint64_t m, uint64_t n, uint64_t k, const double *A, uint64_t lda, const double *B,
              uint64_t ldb, double *C, uint64_t ldc, int threads)
{
    (void)trans_a, (void)m, (void)n, (void)k, (void)A, (void)lda, (void)B, (void)ldb, (void)C, (void)ldc, (void)threads;
}

void fd_dgemm_abt(uint64_t m, uint64_t n, uint64_t k, const double *A, uint64_t lda, const double *B, uint64_t ldb,
                  double *C, uint64_t ldc, int threads)
{
    (void)m, (void)n, (void)k, (void)A, (void)lda, (void)B, (void)ldb, (void)C, (void)ldc, (void)threads;
}

void fd_dsyrk_upper_here(uint64_t n, uint64_t k, const double *A, uint64_t lda, double *C, uint64_t ldc)
{
    (void)n, (void)k, (void)A, (void)lda, (void)C, (void)ldc;
}

fd_status fd_blas_load(void) { return FD_OK; }

void fd_blas_one_thread(void) {}
