/* SPDX-License-Identifier: BSD-3-Clause */
/* par_rows and par_rows_chunk on one team kept for the process (see
 * par_rows.h). */
#include "par_rows.h"

#include <pthread.h>
#include <stdlib.h>

/* The passes of the process share one team, kept between them: bcp's
 * products run a dozen short passes a sweep, and starting T - 1 threads
 * for each cost more than the products of a small tensor.  A pass that
 * finds it busy (a pass inside a pass's rows, or on another thread) or
 * made for another T gets its own team, or replaces it. */
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static par_team *kept;
static int kept_T; /* the T it was asked for; fewer may have started */

static void kept_release(void)
{
    if (pthread_mutex_trylock(&kept_mu) != 0) return; /* a pass still runs: exit takes the threads */
    par_team_destroy(&kept);
    pthread_mutex_unlock(&kept_mu);
}

/* A thread that cannot start leaves its rows to the others. */
fd_status par_rows_chunk(int T, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx, fd_progress *prog)
{
    if (T < 1) T = 1;
    if (T > 1 && pthread_mutex_trylock(&kept_mu) == 0) {
        static int registered;
        fd_status st = FD_OK;
        if (kept && kept_T != T) par_team_destroy(&kept);
        if (!kept) {
            st = par_team_create(&kept, T);
            kept_T = T;
            if (st == FD_OK && !registered) registered = atexit(kept_release) == 0;
        }
        if (st == FD_OK) st = par_team_pass(kept, i0, i1, chunk, fn, ctx, prog);
        pthread_mutex_unlock(&kept_mu);
        return st;
    }
    par_team *tm;
    FD_TRY(par_team_create(&tm, T));
    const fd_status st = par_team_pass(tm, i0, i1, chunk, fn, ctx, prog);
    par_team_destroy(&tm);
    return st;
}

fd_status par_rows(int T, uint64_t i0, uint64_t i1, row_fn fn, void *ctx, fd_progress *prog)
{
    return par_rows_chunk(T, i0, i1, 64, fn, ctx, prog);
}
