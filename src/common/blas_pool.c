/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenBLAS's pthread build (Debian's default, and what liblapack.so
 * points to there) starts one thread per core when the library loads,
 * and each spins on sched_yield for about 2^28 cycles (~0.1 s) before it
 * sleeps.  fcbo-dist never uses them (fd_dgemm runs one-thread calls on
 * its own threads, bcp's LAPACK factorisations are R x R): on the GPU
 * machine's 16 cores they took the cores of a short lattice run's
 * workers (bench/results/ab.csv, "blas-pool").  The symbols are weak: an
 * OpenMP or serial BLAS, or none, lacks them and nothing is done. */
#include "gemm.h"

#include <stddef.h>

extern void openblas_set_num_threads(int) __attribute__((weak));
/* OpenBLAS's own fork handler uses it (driver/others/blas_server.c):
 * wakes the pool, joins it, and marks the server unavailable, so that a
 * later threaded call would start it again. */
extern int blas_thread_shutdown_(void) __attribute__((weak));

void fd_blas_pool_stop(void)
{
    if (openblas_set_num_threads) openblas_set_num_threads(1);
    if (blas_thread_shutdown_) (void)blas_thread_shutdown_();
}
