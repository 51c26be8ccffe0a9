/* SPDX-License-Identifier: BSD-3-Clause */
/* par_rows and par_rows_chunk by OpenMP (see par_rows.h), built with
 * -DFD_PAR_ROWS=openmp: the A/B of issue #38 against the kept team of
 * par_rows_team.c (bench/par-rows-ab.sh).  They tie; the team is the
 * default, as ThreadSanitizer cannot follow libgomp's synchronisation. */
#include "par_rows.h"

#include <omp.h>
#include <stdatomic.h>

fd_status par_rows_chunk(int T, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx, fd_progress *prog)
{
    if (T < 1) T = 1;
    if (chunk < 1) chunk = 1;
    if (i1 <= i0) return FD_OK;
    atomic_int failed;
    atomic_init(&failed, 0);
    fd_status first = FD_OK;
    const uint64_t chunks = (i1 - i0 + chunk - 1) / chunk;
#pragma omp parallel for num_threads(T) schedule(dynamic, 1)
    for (uint64_t c = 0; c < chunks; c++) {
        if (atomic_load_explicit(&failed, memory_order_relaxed)) continue;
        const uint64_t a = i0 + c * chunk, b = a + chunk < i1 ? a + chunk : i1;
        const fd_status st = fn(ctx, a, b, omp_get_thread_num());
        if (prog) fd_progress_add(prog, b - a);
        if (st != FD_OK && !atomic_exchange(&failed, 1)) first = st;
    }
    return first;
}

fd_status par_rows(int T, uint64_t i0, uint64_t i1, row_fn fn, void *ctx, fd_progress *prog)
{
    return par_rows_chunk(T, i0, i1, 64, fn, ctx, prog);
}
