/* SPDX-License-Identifier: BSD-3-Clause */
#include "lattice.h"

#include "lattice_ckpt.h"
#include "../common/clock.h"
#include "../common/env.h"
#include "../common/interrupt.h"
#include "../io/h5util.h"
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

task_source list_source_as(list_source *s) { return (task_source){list_next, s, NULL, NULL}; }

fd_status list_source_one(list_source *s, task_list *one, const uint64_t *task)
{
    task_list_init(one);
    list_source_init(s, one);
    return task_list_push(one, task);
}

fd_status list_source_rest(list_source *s, task_list *out)
{
    fd_status st = FD_OK;
    /* A cursor past the end counts the workers that found the list empty. */
    for (size_t i = atomic_load(&s->next); st == FD_OK && i < s->list->n; i++) st = task_list_push(out, task_at(s->list, i));
    return st;
}

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
    uint64_t id;
    fd_pool_next(self, task, &len, &id);
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
    h5u_quiet(); /* the backend's sink writes from here */
    run_args *r = arg;
    r->st = r->ops->run(r->p, r->o, r->sink, &r->src, &r->stats);
    if (r->st != FD_OK) atomic_store(&r->sink->failed, 1);
    return NULL;
}

/* One part of a node shared by several threads (fcbo_ws_set_part). */
typedef struct {
    fcbo_ws *w;
    const uint64_t *task;
    task_list out;
    fd_status st;
} split_part;

static void *split_part_run(void *arg)
{
    split_part *s = arg;
    s->st = fcbo_expand(s->w, s->task, &s->out);
    return NULL;
}

typedef struct {
    fcbo_ws **ws;
    int n;
} split_team;

/* Expands one task with every worker of the team, each taking every n-th
 * candidate: the top nodes are the largest of the tree (10^5 objects), and
 * rank 0 splits them while every other rank waits. */
static fd_status expand_shared(void *ctx, const uint64_t *task, task_list *out)
{
    split_team *team = ctx;
    const int n = team->n;
    fd_status st = FD_OK;
    split_part *parts = calloc((size_t)n, sizeof *parts);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    char *started = calloc((size_t)n, 1);
    if (!parts || !th || !started) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int t = 0; t < n; t++) {
        fcbo_ws_set_part(team->ws[t], (uint32_t)t, (uint32_t)n);
        parts[t] = (split_part){team->ws[t], task, {0}, FD_OK};
        task_list_init(&parts[t].out);
    }
    for (int t = 1; t < n; t++) started[t] = pthread_create(&th[t], NULL, split_part_run, &parts[t]) == 0;
    for (int t = 0; t < n; t++)
        if (!started[t]) split_part_run(&parts[t]); /* part 0, and any thread that did not start */
    for (int t = 1; t < n; t++)
        if (started[t]) pthread_join(th[t], NULL);
    for (int t = 0; t < n && st == FD_OK; t++) {
        st = parts[t].st;
        for (size_t i = 0; st == FD_OK && i < parts[t].out.n; i++) st = task_list_push(out, task_at(&parts[t].out, i));
    }
done:
    if (parts)
        for (int t = 0; t < n; t++) task_list_free(&parts[t].out);
    free(parts);
    free(th);
    free(started);
    return st;
}

fd_status lattice_split(const fcbo_prep *p, const lattice_opts *o, int device, concept_sink *sink,
                            task_list *tasks, size_t target, fcbo_stats *stats)
{
    fd_status st = FD_OK;
    const int n = device && o->threads > 1 ? o->threads : 1;
    fcbo_ws **ws = calloc((size_t)n, sizeof *ws);
    if (!ws) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (int t = 0; t < n && st == FD_OK; t++) {
        st = fcbo_ws_create(&ws[t], p, sink);
        if (st == FD_OK && device) fcbo_ws_without_failed_sets(ws[t]);
    }
    if (st == FD_OK && n == 1) st = fcbo_split(ws[0], tasks, target);
    if (st == FD_OK && n > 1) {
        split_team team = {ws, n};
        st = fcbo_split_by(p, tasks, target, expand_shared, &team);
    }
    for (int t = 0; t < n; t++)
        if (ws[t]) {
            if (st == FD_OK) st = fcbo_ws_flush(ws[t]);
            fcbo_stats_add(stats, fcbo_ws_stats(ws[t]));
            fcbo_ws_destroy(&ws[t]);
        }
    free(ws);
    return st;
}

/* A lone consumer with checkpoints (one rank with one CPU thread, or one
 * GPU rank).  Splitting the tree up front, as for many consumers, bought
 * it nothing but a cost-ordered list of subtrees and a second segment to
 * copy at the end (mushroom on one thread: 0.14 s to 0.22 s; T10I4D100K
 * on one GPU: the enumeration 0.10 s to 0.20 s, the host splitting the
 * top of the tree and the device fed 8 subtrees at a time).  Instead the
 * backend runs the root itself until the first checkpoint is due (or a
 * signal comes), and only then leaves what it has not visited as the work
 * list (ops->run_until): the concepts so far are the split's segment, the
 * frontier the list, the same files and the same resume as a split.  A
 * run that ends first has one segment, which becomes the result by a
 * rename.  Returns the seconds it ran. */
typedef struct {
    const lattice_ckpt *ck;
    double t0;
} prefix_clock;

static int prefix_pause(void *arg)
{
    const prefix_clock *c = arg;
    return fd_interrupted() || lattice_ckpt_due(c->ck, c->t0);
}

static double lattice_prefix(const fcbo_prep *p, const lattice_opts *o, const struct lattice_ops *ops,
                             concept_sink *sink, task_list *tasks, fcbo_stats *stats, fd_status *st)
{
    task_list left;
    task_list_init(&left);
    prefix_clock c = {o->ckpt, fd_now()};
    *st = FD_OK;
    if (tasks->n) *st = ops->run_until(p, o, sink, task_at(tasks, 0), prefix_pause, &c, &left, stats);
    task_list tmp = *tasks;
    *tasks = left;
    task_list_free(&tmp);
    return fd_now() - c.t0;
}

/* The host's threads on the top of the tree while the device starts.
 * A GPU's start (the driver, then its context: 0.2 s on an H100) is more
 * than 16 cores' whole enumeration of T10I4D100K (bench/results/
 * lattice-gpu-auto.txt), and waiting for it idles them.  Instead the
 * threads split the root (as for GPU ranks) and run its subtrees,
 * fcbo_run_until asking between nodes whether the device is ready (or a
 * checkpoint due, or a signal come).  Once it is, every thread stops
 * where it is, and what none has visited, their frontiers and the
 * subtrees none took, becomes the device's work list, as a checkpoint's
 * frontier does: the concepts are those of one straight run. */
#define HOST_TASKS_PER_THREAD 8

typedef struct {
    const lattice_opts *o;
    double t0;
    _Atomic int due; /* a checkpoint came due: sticky, as the others are */
} host_clock;

/* Asked at every node (the top of the tree's nodes are large, and the
 * device waits for the threads' frontier): two atomic loads, and with
 * checkpoints the clock every HOST_CLOCK_EVERY questions of a thread (a
 * checkpoint is due in seconds, a node takes microseconds). */
#define HOST_CLOCK_EVERY 64

static int host_pause(void *arg)
{
    static _Thread_local unsigned asked;
    host_clock *c = arg;
    if (c->o->device_ready(c->o->device_arg) || fd_interrupted() || atomic_load(&c->due)) return 1;
    if (!c->o->ckpt || ++asked % HOST_CLOCK_EVERY) return 0;
    if (!lattice_ckpt_due(c->o->ckpt, c->t0)) return 0;
    atomic_store(&c->due, 1);
    return 1;
}

/* The late device opened; returns the seconds it took (its start-up's
 * rest, not the split's). */
static double open_device(const lattice_opts *o, fd_status *st)
{
    const double t = fd_now();
    *st = o->device_open(o->device_arg);
    return fd_now() - t;
}

int lattice_host_threads(int threads)
{
    /* One core stays with the device's start (its thread is busy on the
     * CPU too): the start is the critical path. */
    return threads - 1 > 0 ? threads - 1 : 1;
}

/* Replaces the root in *tasks with what the host's threads left; returns
 * the seconds they ran (the split before them is the caller's). */
static double lattice_host_start(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, task_list *tasks,
                                 fcbo_stats *stats, fd_status *st)
{
    const int T = lattice_host_threads(o->threads);
    host_clock clock = {o, fd_now(), 0};
    const uint64_t before = stats->concepts; /* the split's are the host's too */
    *st = lattice_split(p, o, 1, sink, tasks, (size_t)T * HOST_TASKS_PER_THREAD, stats);
    const double t0 = fd_now();
    if (*st == FD_OK) {
        list_source ls;
        list_source_init(&ls, tasks);
        task_source src = list_source_as(&ls);
        task_list left;
        task_list_init(&left);
        fcbo_stats hs = {0};
        *st = lattice_cpu_threads(p, T, sink, &src, host_pause, &clock, 1, &left, &hs);
        /* The rank's busy time is its device's (h5part_rank_times). */
        hs.busy_seconds = 0;
        fcbo_stats_add(stats, &hs);
        /* Then the subtrees none took, after the frontiers. */
        if (*st == FD_OK) *st = list_source_rest(&ls, &left);
        task_list tmp = *tasks;
        *tasks = left;
        task_list_free(&tmp);
    }
    const double ran = fd_now() - t0;
    stats->host_concepts += stats->concepts - before;
    stats->host_seconds += ran;
    return ran;
}

fd_status lattice_enumerate(const fcbo_prep *p, const lattice_opts *o, const struct lattice_ops *ops,
                            concept_sink *sink, fcbo_stats *stats)
{
    fd_status st = FD_OK, split_st = FD_OK;
    task_list tasks;
    fd_pool *pool = NULL;
    int no_device = 0;
    task_list_init(&tasks);
    const int device = ops->device_tasks > 0;
    size_t per_consumer = TASKS_PER_WORKER;
    if (device) { /* a tuning knob of the device ranks, docs/performance.md */
        uint64_t n;
        FD_TRY(fd_env_count("FD_DEVICE_TASKS", 1, 1u << 20, (uint64_t)ops->device_tasks, "subtrees", &n));
        per_consumer = (size_t)n;
    }
    FD_TRY_GOTO(fd_pool_create(&pool, device ? DEVICE_QUEUE : o->threads, &sink->failed), st, done);
    if (device) fd_pool_set_max_sleep(pool, DEVICE_MAX_SLEEP_NS);
    /* Rank 0 splits the top of the tree while the others wait for their
     * first tasks; a failure here must still let the others finish, so it
     * is kept aside and the pool is driven with no work. */
    if (fd_pool_rank(pool) == 0) {
        double t0 = fd_now(), ran = 0;
        fd_records recs = {0};
        if (o->ckpt && lattice_ckpt_resuming(o->ckpt)) {
            /* The first run's list, less what its checkpoint holds. */
            split_st = lattice_ckpt_remaining(o->ckpt, p, &recs);
            if (split_st == FD_OK && o->device_open) ran += open_device(o, &split_st);
        } else {
            split_st = fcbo_root(p, &tasks);
            /* A device rank is one consumer; CPU threads are one each. */
            size_t consumers = (size_t)(device ? fd_pool_ranks(pool) : fd_pool_total_workers(pool));
            /* A lone device still starting: the host's threads begin. */
            const int host_first = split_st == FD_OK && device && consumers == 1 && o->device_ready &&
                                   o->threads > 1 && tasks.n && !o->device_ready(o->device_arg);
            if (host_first) ran = lattice_host_start(p, o, sink, &tasks, stats, &split_st);
            /* The threads finished the search before the device started:
             * it is never opened, and the job does not wait for it.  One
             * that started meanwhile is opened, as the open is where a
             * named backend that cannot run here is refused. */
            no_device = host_first && split_st == FD_OK && tasks.n == 0 && !o->device_ready(o->device_arg);
            if (split_st == FD_OK && o->device_open && !no_device) ran += open_device(o, &split_st);
            /* One consumer takes the root alone; with checkpoints, it runs
             * it here until the first is due (lattice_prefix). */
            if (host_first)
                ; /* the threads' frontier is the list, as it stands */
            else if (split_st == FD_OK && consumers == 1 && o->ckpt && ops->run_until)
                ran += lattice_prefix(p, o, ops, sink, &tasks, stats, &split_st);
            else if (split_st == FD_OK && (consumers > 1 || o->ckpt))
                split_st = lattice_split(p, o, device, sink, &tasks, consumers * per_consumer, stats);
            recs = (fd_records){tasks.data, tasks.off, tasks.n, tasks.nwords, NULL};
            /* The host's threads ran most of the search: the device's
             * subtrees join their segment (copied into one at the end,
             * 0.13 s of T10I4D100K's 0.45 on one GPU). */
            if (split_st == FD_OK && o->ckpt) split_st = lattice_ckpt_split_done(o->ckpt, &recs, host_first);
        }
        stats->split_seconds += fd_now() - t0 - ran;
        if (split_st != FD_OK) {
            atomic_store(&sink->failed, 1);
            recs = (fd_records){0};
        }
        fd_pool_set_work(pool, &recs);
    }
    /* The backend runs in a thread of its own: this (main) thread is the
     * only one that talks MPI. */
    task_source src = o->ckpt ? lattice_ckpt_source(o->ckpt, pool) : (task_source){pool_next, pool, NULL, NULL};
    /* The CPU's run finds the pool empty, as the device's would, but
     * starts nothing. */
    run_args r = {p, o, no_device ? &lattice_cpu_ops : ops, sink, src, {0}, FD_OK};
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
    /* Interrupted: the pool stopped handing out subtrees, and those
     * finished are committed before the run stops. */
    if (st == FD_OK && o->ckpt) st = lattice_ckpt_end(o->ckpt);
    if (st == FD_OK) st = fd_interrupt_check();
done:
    fd_pool_destroy(&pool);
    task_list_free(&tasks);
    return st;
}
