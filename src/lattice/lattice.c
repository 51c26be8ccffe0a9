#include "lattice.h"

#include "../common/clock.h"
#include "../mpi/taskpool.h"

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void list_source_init(list_source *s, const task_list *list)
{
    s->list = list;
    atomic_init(&s->next, 0);
}

static fd_status list_next(void *self, const uint64_t **task)
{
    list_source *s = self;
    size_t i = atomic_fetch_add(&s->next, 1);
    *task = i < s->list->n ? task_at(s->list, i) : NULL;
    return FD_OK;
}

task_source list_source_as(list_source *s) { return (task_source){list_next, s}; }

/* Tasks per worker: enough that the largest subtrees, taken first, are a
 * small part of the whole and the rest evens out the finish. */
#define TASKS_PER_WORKER 64
/* A device rank keeps this many tasks queued (it takes a few at a time and
 * must not wait for rank 0 between them), and polls for them often: its
 * host cores are idle. */
#define DEVICE_QUEUE 16
#define DEVICE_MAX_SLEEP_NS 20000L

static fd_status pool_next(void *self, const uint64_t **task)
{
    size_t len;
    fd_pool_next(self, task, &len);
    return FD_OK;
}

typedef struct {
    const fcbo_prep *p;
    const lattice_opts *o;
    const struct lattice_ops *ops;
    concept_sink *sink;
    task_source src;
    fcbo_stats stats;
    fd_status st;
} run_args;

static void *run_thread(void *arg)
{
    run_args *r = arg;
    r->st = r->ops->run(r->p, r->o, r->sink, &r->src, &r->stats);
    if (r->st != FD_OK) atomic_store(&r->sink->failed, 1);
    return NULL;
}

fd_status lattice_enumerate(const fcbo_prep *p, const lattice_opts *o, const struct lattice_ops *ops,
                            concept_sink *sink, fcbo_stats *stats)
{
    fd_status st = FD_OK, split_st = FD_OK;
    task_list tasks;
    fcbo_ws *w = NULL;
    fd_pool *pool = NULL;
    task_list_init(&tasks);
    const int device = ops->device_tasks > 0;
    size_t per_consumer = device ? (size_t)ops->device_tasks : TASKS_PER_WORKER;
    const char *env = getenv("FD_DEVICE_TASKS"); /* a tuning knob, docs/performance.md */
    if (device && env && atoi(env) > 0) per_consumer = (size_t)atoi(env);
    FD_TRY_GOTO(fd_pool_create(&pool, device ? DEVICE_QUEUE : o->threads, &sink->failed), st, done);
    if (device) fd_pool_set_max_sleep(pool, DEVICE_MAX_SLEEP_NS);
    /* Rank 0 splits the top of the tree while the others wait for their
     * first tasks; a failure here must still let the others finish, so it
     * is kept aside and the pool is driven with no work. */
    if (fd_pool_rank(pool) == 0) {
        double t0 = fd_now();
        split_st = fcbo_root(p, &tasks);
        size_t consumers = (size_t)fd_pool_total_workers(pool);
        if (device) consumers /= DEVICE_QUEUE; /* one per rank */
        if (split_st == FD_OK && consumers > 1) {
            split_st = fcbo_ws_create(&w, p, sink);
            if (split_st == FD_OK && device) fcbo_ws_without_failed_sets(w);
            if (split_st == FD_OK) split_st = fcbo_split(w, &tasks, consumers * per_consumer);
            if (split_st == FD_OK) split_st = fcbo_ws_flush(w);
            if (w) fcbo_stats_add(stats, fcbo_ws_stats(w));
        }
        stats->split_seconds += fd_now() - t0;
        if (split_st != FD_OK) {
            atomic_store(&sink->failed, 1);
            task_list_clear(&tasks);
        }
        fd_records recs = {tasks.data, tasks.off, tasks.n, tasks.nwords};
        fd_pool_set_work(pool, &recs);
    }
    /* The backend runs in a thread of its own: this (main) thread is the
     * only one that talks MPI. */
    run_args r = {p, o, ops, sink, {pool_next, pool}, {0}, FD_OK};
    pthread_t th;
    if (pthread_create(&th, NULL, run_thread, &r) != 0) {
        atomic_store(&sink->failed, 1);
        st = fd_fail(FD_ERR_INTERNAL, "cannot start the backend thread");
        fd_pool_drive(pool, sink->progress);
        goto done;
    }
    st = fd_pool_drive(pool, sink->progress);
    if (st != FD_OK) atomic_store(&sink->failed, 1);
    pthread_join(th, NULL);
    fcbo_stats_add(stats, &r.stats);
    if (st == FD_OK) st = split_st;
    if (st == FD_OK) st = r.st;
done:
    fd_pool_destroy(&pool);
    fcbo_ws_destroy(&w);
    task_list_free(&tasks);
    return st;
}
