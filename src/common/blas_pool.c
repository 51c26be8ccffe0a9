/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenBLAS's pthread build (Debian's default, and what liblapack.so
 * points to there) starts one thread per core when the library loads,
 * and each spins on sched_yield for about 2^28 cycles (~0.1 s) before it
 * sleeps.  fcbo-dist never uses them (fd_dgemm runs one-thread calls on
 * its own threads, bcp's LAPACK factorisations are R x R): on the GPU
 * machine's 16 cores they took the cores of a short lattice run's
 * workers (bench/results/ab.csv, "blas-pool").  OpenBLAS is loaded when
 * bcp first needs it (dynlib.h), and this runs right after: a BLAS without
 * these symbols (OpenMP or serial) is left alone. */
#include "gemm.h"

#include <dlfcn.h>
#include <stdlib.h>

void fd_blas_core_hint(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (getenv("OPENBLAS_CORETYPE")) return;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
        setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        setenv("OPENBLAS_CORETYPE", "Haswell", 0);
#endif
}

void fd_blas_pool_stop(void *lib)
{
    void (*set_threads)(int);
    /* OpenBLAS's own fork handler uses it (driver/others/blas_server.c):
     * wakes the pool, joins it, and marks the server unavailable, so that
     * a later threaded call would start it again. */
    int (*shutdown)(void);
    *(void **)&set_threads = dlsym(lib, "openblas_set_num_threads");
    *(void **)&shutdown = dlsym(lib, "blas_thread_shutdown_");
    if (set_threads) set_threads(1);
    if (shutdown) (void)shutdown();
}
