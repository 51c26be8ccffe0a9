/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_dgemm by OpenBLAS (see gemm.h).  OpenBLAS's own threads split C in
 * ways that depend on their number, and with them the rounding of an
 * entry (a bcp test caught -t 3 and -t 2 differing): instead C goes out in
 * row blocks of a fixed size to our threads, each a one-thread OpenBLAS
 * call, so every entry comes from the same call whatever the threads. */
#include "gemm.h"

#include "dynlib.h"
#include "par_rows.h"

#include <cblas.h>
#include <limits.h>

static struct {
    __typeof__(&cblas_dgemm) dgemm;
    __typeof__(&cblas_dsyrk) dsyrk;
    __typeof__(&openblas_set_num_threads) set_threads;
} ob;

static const fd_dynsym syms[] = {
    {"cblas_dgemm", (void **)&ob.dgemm, 0},
    {"cblas_dsyrk", (void **)&ob.dsyrk, 0},
    {"openblas_set_num_threads", (void **)&ob.set_threads, 0},
    {NULL, NULL, 0},
};

static fd_dynlib lib = {FD_OPENBLAS_SONAME, FD_OPENBLAS_DIR, "bcp on the CPU", FD_ERR_UNAVAILABLE, syms,
                        fd_blas_pool_stop, FD_DYNLIB_STATE};

fd_status fd_blas_load(void) { return fd_dynlib_load(&lib); }

/* Rows of C a call: large enough for OpenBLAS's blocking, small enough
 * for several per thread. */
#define GEMM_ROWS 256
#define GRAM_ROWS 64

typedef struct {
    int trans_a, trans_b;
    uint64_t n, k, lda, ldb, ldc;
    const double *A, *B;
    double *C;
} gemm_ctx;

static fd_status gemm_rows(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const gemm_ctx *g = arg;
    (void)thread;
    /* Rows i0.. of op(A): rows of A, or its columns when transposed. */
    const double *a = g->trans_a ? g->A + i0 : g->A + i0 * g->lda;
    ob.dgemm(CblasRowMajor, g->trans_a ? CblasTrans : CblasNoTrans, g->trans_b ? CblasTrans : CblasNoTrans,
             (int)(i1 - i0), (int)g->n,
             (int)g->k, 1.0, a, (int)g->lda, g->B, (int)g->ldb, 0.0, g->C + i0 * g->ldc, (int)g->ldc);
    return FD_OK;
}

int fd_dgemm_can(uint64_t m, uint64_t n, uint64_t k)
{
    return m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
}

void fd_blas_one_thread(void)
{
    if (ob.set_threads) ob.set_threads(1);
}

void fd_dgemm(int trans_a, uint64_t m, uint64_t n, uint64_t k, const double *A, uint64_t lda, const double *B,
              uint64_t ldb, double *C, uint64_t ldc, int threads)
{
    gemm_ctx g = {trans_a, 0, n, k, lda, ldb, ldc, A, B, C};
    fd_blas_one_thread();
    (void)par_rows_chunk(threads > 0 ? threads : 1, 0, m, GEMM_ROWS, gemm_rows, &g, NULL);
}

void fd_dgemm_abt(uint64_t m, uint64_t n, uint64_t k, const double *A, uint64_t lda, const double *B, uint64_t ldb,
                  double *C, uint64_t ldc, int threads)
{
    gemm_ctx g = {0, 1, n, k, lda, ldb, ldc, A, B, C};
    fd_blas_one_thread();
    /* A Gram's rows are few (a mode's length) and each long: blocks of
     * fewer rows, still of a fixed size, so that several threads share
     * them. */
    (void)par_rows_chunk(threads > 0 ? threads : 1, 0, m, GRAM_ROWS, gemm_rows, &g, NULL);
}

void fd_dsyrk_upper_here(uint64_t n, uint64_t k, const double *A, uint64_t lda, double *C, uint64_t ldc)
{
    ob.dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, (int)n, (int)k, 1.0, A, (int)lda, 0.0, C, (int)ldc);
}
