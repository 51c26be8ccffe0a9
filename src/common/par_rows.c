/* SPDX-License-Identifier: BSD-3-Clause */
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

/* How long a thread of a team watches for the next pass, or the caller
 * for the end of this one, before it sleeps on a condition: bcp's short
 * passes follow each other within microseconds, and a wake-up through
 * the kernel costs more than a pass of a small tensor.  2,000 pause
 * instructions: 10 to 100 microseconds, as the processor's pause is
 * short or long. */
#define TEAM_SPIN 2000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

struct par_team {
    int started; /* threads that wait for passes, besides the caller */
    atomic_int quit, done;
    _Atomic unsigned long gen; /* passes begun */
    row_pool pool;
    row_worker_arg *w; /* w[0] is the caller's */
    struct team_arg {
        par_team *team;
        int t;
    } *arg;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t go, idle;
};

static void *team_worker(void *p)
{
    const struct team_arg *a = p;
    par_team *tm = a->team;
    unsigned long seen = 0;
    for (;;) {
        for (int k = 0; k < TEAM_SPIN && atomic_load(&tm->gen) == seen && !atomic_load(&tm->quit); k++) cpu_relax();
        if (atomic_load(&tm->gen) == seen) {
            pthread_mutex_lock(&tm->mu);
            while (atomic_load(&tm->gen) == seen && !atomic_load(&tm->quit)) pthread_cond_wait(&tm->go, &tm->mu);
            pthread_mutex_unlock(&tm->mu);
        }
        if (atomic_load(&tm->quit)) return NULL;
        seen = atomic_load(&tm->gen);
        row_worker(&tm->w[a->t]);
        /* the caller may sleep on idle: signal under the mutex it checks
         * done under, so that the signal cannot fall between */
        if (atomic_fetch_add(&tm->done, 1) + 1 == tm->started) {
            pthread_mutex_lock(&tm->mu);
            pthread_cond_signal(&tm->idle);
            pthread_mutex_unlock(&tm->mu);
        }
    }
}

fd_status par_team_create(par_team **out, int T)
{
    *out = NULL;
    if (T < 1) T = 1;
    par_team *tm = calloc(1, sizeof *tm);
    if (!tm) return fd_fail(FD_ERR_NOMEM, "out of memory");
    tm->w = calloc((size_t)T, sizeof *tm->w);
    tm->arg = calloc((size_t)T, sizeof *tm->arg);
    tm->th = calloc((size_t)T, sizeof *tm->th);
    int sync = 0; /* how many of the mutex and the two conditions exist */
    if (tm->w && tm->arg && tm->th && !pthread_mutex_init(&tm->mu, NULL) && ++sync &&
        !pthread_cond_init(&tm->go, NULL) && ++sync && !pthread_cond_init(&tm->idle, NULL))
        sync++;
    if (sync < 3) {
        if (sync > 1) pthread_cond_destroy(&tm->go);
        if (sync > 0) pthread_mutex_destroy(&tm->mu);
        free(tm->w);
        free(tm->arg);
        free(tm->th);
        free(tm);
        return fd_fail(FD_ERR_NOMEM, "out of memory for a team of %d threads", T);
    }
    for (int t = 0; t < T; t++) tm->w[t] = (row_worker_arg){&tm->pool, t, FD_OK};
    /* A thread that cannot start leaves the team smaller. */
    for (int t = 1; t < T; t++) {
        const int k = tm->started + 1;
        tm->arg[k] = (struct team_arg){tm, k};
        if (pthread_create(&tm->th[k], NULL, team_worker, &tm->arg[k]) == 0) tm->started++;
    }
    *out = tm;
    return FD_OK;
}

int par_team_size(const par_team *team) { return team->started + 1; }

void par_team_destroy(par_team **team)
{
    par_team *tm = *team;
    if (!tm) return;
    pthread_mutex_lock(&tm->mu);
    atomic_store(&tm->quit, 1);
    pthread_cond_broadcast(&tm->go);
    pthread_mutex_unlock(&tm->mu);
    for (int t = 1; t <= tm->started; t++) pthread_join(tm->th[t], NULL);
    pthread_cond_destroy(&tm->go);
    pthread_cond_destroy(&tm->idle);
    pthread_mutex_destroy(&tm->mu);
    free(tm->w);
    free(tm->arg);
    free(tm->th);
    free(tm);
    *team = NULL;
}

/* A pass begun on the team's threads (not the caller's), counting the
 * rows done in prog (or not, when NULL). */
static void team_start(par_team *tm, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx,
                       fd_progress *prog)
{
    /* the team is idle here: the last pass waited for every thread */
    tm->pool.fn = fn;
    tm->pool.ctx = ctx;
    tm->pool.prog = prog;
    tm->pool.end = i1;
    tm->pool.chunk = chunk ? chunk : 1;
    atomic_store(&tm->pool.next, i0);
    atomic_store(&tm->pool.failed, 0);
    for (int t = 0; t <= tm->started; t++) tm->w[t].st = FD_OK;
    atomic_store(&tm->done, 0);
    pthread_mutex_lock(&tm->mu);
    atomic_fetch_add(&tm->gen, 1);
    pthread_cond_broadcast(&tm->go);
    pthread_mutex_unlock(&tm->mu);
}

/* The caller takes what rows are left of the pass, then waits for the
 * team's threads. */
fd_status par_team_finish(par_team *tm)
{
    row_worker(&tm->w[0]);
    for (int k = 0; k < TEAM_SPIN && atomic_load(&tm->done) < tm->started; k++) cpu_relax();
    if (atomic_load(&tm->done) < tm->started) {
        pthread_mutex_lock(&tm->mu);
        while (atomic_load(&tm->done) < tm->started) pthread_cond_wait(&tm->idle, &tm->mu);
        pthread_mutex_unlock(&tm->mu);
    }
    fd_status st = FD_OK;
    for (int t = 0; t <= tm->started && st == FD_OK; t++) st = tm->w[t].st;
    return st;
}

fd_status par_team_pass(par_team *tm, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx,
                        fd_progress *prog)
{
    team_start(tm, i0, i1, chunk, fn, ctx, prog);
    return par_team_finish(tm);
}

fd_status par_team_rows(par_team *tm, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx)
{
    return par_team_pass(tm, i0, i1, chunk, fn, ctx, NULL);
}

void par_team_start(par_team *tm, uint64_t i0, uint64_t i1, uint64_t chunk, row_fn fn, void *ctx)
{
    team_start(tm, i0, i1, chunk, fn, ctx, NULL);
}

