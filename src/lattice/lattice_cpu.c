/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend: T threads take tasks from the source until it is empty,
 * each with its own FCbO worker state (PCbO-style dynamic distribution). */
#include "lattice.h"

#include "../common/clock.h"
#include "../io/h5util.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    const fcbo_prep *p;
    concept_sink *sink;
    task_source *src;
    fcbo_pause_fn pause; /* NULL: every task to its end */
    void *arg;
    uint32_t pause_every;
    task_list left;      /* with a pause: the nodes this worker did not visit */
    fcbo_stats stats;
    fd_status st;
} worker;

static void *work(void *arg)
{
    h5u_quiet(); /* the sink writes from every worker */
    worker *wk = arg;
    fcbo_ws *w = NULL;
    fd_status st = fcbo_ws_create(&w, wk->p, wk->sink);
    if (w && wk->pause) fcbo_ws_set_pause_every(w, wk->pause_every);
    double busy = 0;
    /* A pause never ends once it begins: no new subtree after it.  A
     * worker's first subtree starts regardless, and fcbo_run_until asks
     * before its first child: a pause due at once still leaves the root's
     * children as the frontier (a lone thread's first checkpoint, with a
     * one-task source), not the root again. */
    for (int first = 1; st == FD_OK && (first || !(wk->pause && wk->pause(wk->arg))); first = 0) {
        const uint64_t *t;
        st = wk->src->next(wk->src->self, &t);
        if (st != FD_OK || !t) break;
        double t0 = fd_now();
        st = wk->pause ? fcbo_run_until(w, t, wk->pause, wk->arg, &wk->left) : fcbo_run(w, t);
        /* With checkpoints, a subtree counts as done once its concepts
         * are in the sink; the worker flushes for a checkpoint that waits
         * for it, not after every subtree (a flush per subtree of
         * mushroom's 1,024 on 16 threads cost more than the run). */
        if (st == FD_OK && wk->src->due && wk->src->due(wk->src->self)) {
            st = fcbo_ws_flush(w);
            if (st == FD_OK) st = wk->src->quiet(wk->src->self);
        }
        busy += fd_now() - t0;
    }
    if (w) {
        if (st == FD_OK) st = fcbo_ws_flush(w);
        wk->stats = *fcbo_ws_stats(w);
        wk->stats.busy_seconds = busy;
        fcbo_ws_destroy(&w);
    }
    if (st != FD_OK) atomic_store(&wk->sink->failed, 1);
    wk->st = st;
    return NULL;
}

fd_status lattice_cpu_threads(const fcbo_prep *p, int threads, concept_sink *sink, task_source *src,
                              fcbo_pause_fn pause, void *arg, uint32_t pause_every, task_list *frontier,
                              fcbo_stats *stats)
{
    int T = threads > 0 ? threads : 1;
    worker *wk = calloc((size_t)T, sizeof *wk);
    pthread_t *th = calloc((size_t)T, sizeof *th);
    fd_status st = FD_OK;
    int started = 0;
    if (!wk || !th) {
        free(wk);
        free(th);
        return fd_fail(FD_ERR_NOMEM, "out of memory for %d workers", T);
    }
    for (int i = 0; i < T; i++) {
        wk[i] = (worker){p, sink, src, pause, arg, pause_every, {0}, {0}, FD_OK};
        task_list_init(&wk[i].left);
    }
    /* Thread 0 is the caller: with one thread nothing is spawned. */
    for (int i = 1; i < T; i++) {
        if (pthread_create(&th[i], NULL, work, &wk[i]) != 0) {
            st = fd_fail(FD_ERR_INTERNAL, "cannot start worker thread %d of %d", i, T);
            atomic_store(&sink->failed, 1);
            break;
        }
        started = i;
    }
    if (st == FD_OK) work(&wk[0]);
    for (int i = 1; i <= started; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < T; i++) {
        fcbo_stats_add(stats, &wk[i].stats);
        if (st == FD_OK && wk[i].st != FD_OK) st = wk[i].st;
        for (size_t k = 0; st == FD_OK && frontier && k < wk[i].left.n; k++)
            st = task_list_push(frontier, task_at(&wk[i].left, k));
        task_list_free(&wk[i].left);
    }
    free(wk);
    free(th);
    return st;
}

static fd_status cpu_run(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, task_source *src,
                         fcbo_stats *stats)
{
    return lattice_cpu_threads(p, o->threads, sink, src, NULL, NULL, 0, NULL, stats);
}

/* One thread (a lone consumer's prefix, lattice.c): its pause reads the
 * clock, so it is asked at fcbo's default period. */
static fd_status cpu_run_until(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, const uint64_t *task,
                               fcbo_pause_fn pause, void *arg, task_list *frontier, fcbo_stats *stats)
{
    (void)o;
    task_list one;
    list_source ls;
    fd_status st = list_source_one(&ls, &one, task);
    task_source src = list_source_as(&ls);
    if (st == FD_OK) st = lattice_cpu_threads(p, 1, sink, &src, pause, arg, FCBO_PAUSE_EVERY, frontier, stats);
    /* Paused before it began: the root itself is the frontier. */
    if (st == FD_OK) st = list_source_rest(&ls, frontier);
    task_list_free(&one);
    return st;
}

const struct lattice_ops lattice_cpu_ops = {.dev = {.name = "cpu"}, .run = cpu_run, .run_until = cpu_run_until};
