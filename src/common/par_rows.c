/* Rows over threads (see par_rows.h). */
#include "par_rows.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* The rows of one pass, shared by its threads. */
typedef struct {
    row_fn fn;
    void *ctx;
    fd_progress *prog;
    uint64_t end, chunk;
    _Atomic uint64_t next;
    atomic_int failed;
} row_pool;

typedef struct {
    row_pool *pool;
    int thread;
    fd_status st;
} row_worker_arg;

static void *row_worker(void *arg)
{
    row_worker_arg *w = arg;
    row_pool *pl = w->pool;
    for (;;) {
        const uint64_t i0 = atomic_fetch_add(&pl->next, pl->chunk);
        if (i0 >= pl->end || atomic_load(&pl->failed)) break;
        const uint64_t i1 = i0 + pl->chunk < pl->end ? i0 + pl->chunk : pl->end;
        fd_status st = pl->fn(pl->ctx, i0, i1, w->thread);
        if (pl->prog) fd_progress_add(pl->prog, i1 - i0);
        if (st != FD_OK) {
            w->st = st;
            atomic_store(&pl->failed, 1);
            break;
        }
    }
    return NULL;
}

/* fn over [i0, i1) on T threads (thread 0 is the caller), counting the
 * rows done in prog (or not, when NULL).  A thread that cannot start
 * leaves its rows to the others. */
fd_status par_rows(int T, uint64_t i0, uint64_t i1, row_fn fn, void *ctx, fd_progress *prog)
{
    return par_rows_chunk(T, i0, i1, 64, fn, ctx, prog);
}

fd_status par_rows_chunk(int T, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx, fd_progress *prog)
{
    if (T < 1) T = 1;
    row_pool pool = {fn, ctx, prog, i1, chunk ? chunk : 1, i0, 0};
    row_worker_arg *w = calloc((size_t)T, sizeof *w);
    pthread_t *th = calloc((size_t)T, sizeof *th);
    int *started = calloc((size_t)T, sizeof *started);
    fd_status st = FD_OK;
    if (!w || !th || !started) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int t = 0; t < T; t++) w[t] = (row_worker_arg){&pool, t, FD_OK};
    for (int t = 1; t < T; t++) started[t] = pthread_create(&th[t], NULL, row_worker, &w[t]) == 0;
    row_worker(&w[0]);
    for (int t = 1; t < T; t++)
        if (started[t]) pthread_join(th[t], NULL);
    for (int t = 0; t < T && st == FD_OK; t++) st = w[t].st;
done:
    free(w);
    free(th);
    free(started);
    return st;
}
