/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA backend: the subtrees this rank is handed run on its GPU.
 *
 * This thread takes tasks from the source while the device stack is
 * shallower than one chunk (a few at a time, so that other ranks still get
 * their share of a short task list), pushes them, and runs steps.  Each
 * step's concepts land in one of two pinned buffers; a writer thread hands
 * the other one to the sink (HDF5, text) while the GPU keeps working. */
#include "lattice.h"

#include "../common/clock.h"
#include "../common/env.h"
#include "lattice_gpu.h"
#include "../cuda/fdcuda.h"
#include "../io/h5util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tasks taken per refill: few, so that one rank does not drain a short
 * list meant for many; the stack is refilled before it runs dry, so steps
 * stay full anyway.  The job's only rank shares the list with no one and
 * takes more: a list of many small subtrees (the host's frontier after
 * it ran the top of the tree) then fills each step (T10I4D100K's last
 * fifth on one H100: 389 steps of 8 at a time, 105 of 64). */
#define REFILL_TASKS 8
#define REFILL_TASKS_LONE 64
/* Subtrees per GPU rank when rank 0 splits the tree for several: enough
 * that the last ones are small next to a GPU's share. */
#define GPU_TASKS 256

typedef struct {
    lattice_gpu_out out;
    int full;
} out_slot;

typedef struct {
    concept_sink *sink;
    out_slot slot[2];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    fd_status st;
} writer;

/* Hands one step's concepts to the sink (a view of the pinned buffers). */
static fd_status flush_out(concept_sink *sink, const lattice_gpu_out *o)
{
    concept_batch b = {.n = o->n, .cap_n = o->n, .supp = o->supp, .int_end = o->int_end, .int_ids = o->int_ids,
                       .nint = o->nint, .cap_int = o->nint, .ext_end = o->ext_end, .ext_ids = o->ext_ids,
                       .next = o->next, .cap_ext = o->next};
    return concept_sink_flush(sink, &b);
}

static void *writer_main(void *arg)
{
    h5u_quiet();
    writer *w = arg;
    for (int i = 0;; i ^= 1) {
        pthread_mutex_lock(&w->mu);
        while (!w->slot[i].full && !w->done) pthread_cond_wait(&w->cv, &w->mu);
        int full = w->slot[i].full;
        pthread_mutex_unlock(&w->mu);
        if (!full) break; /* done, and every filled slot was written */
        fd_status st = flush_out(w->sink, &w->slot[i].out);
        pthread_mutex_lock(&w->mu);
        if (st != FD_OK && w->st == FD_OK) w->st = st;
        w->slot[i].full = 0;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

/* Nodes on their way to the device, in lattice_gpu_push's layout. */
typedef struct {
    uint64_t *intent;
    uint32_t *y, *size, *ext;
    size_t n, cap_int, cap_y, cap_size, next, cap_ext;
} host_nodes;

static void host_nodes_free(host_nodes *h)
{
    free(h->intent);
    free(h->y);
    free(h->size);
    free(h->ext);
    memset(h, 0, sizeof *h);
}

static fd_status host_nodes_add(host_nodes *h, const fcbo_prep *p, const fcbo_task_info *ti)
{
    FD_TRY(fd_grow((void **)&h->intent, &h->cap_int, (h->n + 1) * p->aw, sizeof *h->intent));
    FD_TRY(fd_grow((void **)&h->y, &h->cap_y, h->n + 1, sizeof *h->y));
    FD_TRY(fd_grow((void **)&h->size, &h->cap_size, h->n + 1, sizeof *h->size));
    FD_TRY(fd_grow((void **)&h->ext, &h->cap_ext, h->next + ti->size, sizeof *h->ext));
    fd_word *B = h->intent + h->n * p->aw;
    const fd_word *made = fcbo_task_intent(p, ti, B); /* B itself where the task holds ids */
    if (made != B) memcpy(B, made, p->aw * sizeof *B);
    h->y[h->n] = ti->y;
    h->size[h->n] = ti->size;
    uint32_t *e = h->ext + h->next;
    if (ti->is_bits) {
        uint32_t k = 0;
        BS_FOREACH(o, (const fd_word *)ti->ext, p->ow, e[k++] = o;);
    } else {
        memcpy(e, ti->ext, (size_t)ti->size * sizeof *e);
    }
    h->next += ti->size;
    h->n++;
    return FD_OK;
}

/* The engine's tuning and testing knobs (docs/performance.md), read when
 * the search starts: a bad value is refused even by a run whose engine
 * is never made (the host finished the search first). */
typedef struct {
    uint64_t chunk, bits_min; /* 0: the engine's defaults; bits off: UINT32_MAX */
    int how;                  /* FD_GPU_CLOSURE */
} gpu_knobs;

static fd_status gpu_knobs_read(gpu_knobs *k)
{
    static const char *const closures[] = {"rows", "columns", "auto", NULL};
    const char *bits = getenv("FD_GPU_BITS_MIN");
    k->how = 2;
    k->bits_min = UINT32_MAX;
    FD_TRY(fd_env_count("FD_GPU_CHUNK", 1, UINT32_MAX, 0, "nodes a step", &k->chunk));
    if (!(bits && strcmp(bits, "off") == 0))
        FD_TRY(fd_env_count("FD_GPU_BITS_MIN", 1, UINT32_MAX - 1, 0, "objects (or off)", &k->bits_min));
    return fd_env_word("FD_GPU_CLOSURE", closures, 2, &k->how);
}

typedef struct {
    const fcbo_prep *p;
    const lattice_opts *o;
    concept_sink *sink;
    gpu_knobs knobs;
    task_source *src;
    lattice_gpu *g;           /* made with the first task (engine_open) */
    host_nodes h;
    int exhausted, per_refill;
    int draining;             /* a checkpoint is due: finish what is on the device first */
    uint64_t tasks;
    double t_create;
} feeder;

static fd_status engine_open(lattice_gpu **g, const fcbo_prep *p, const lattice_opts *o, const concept_sink *sink,
                             const gpu_knobs *k);

static uint64_t pending(const feeder *f) { return f->g ? lattice_gpu_pending(f->g) : 0; }

/* Tops the device stack up with tasks while it holds less than a step.
 * The engine (its buffers, the context's copy on the device) is made for
 * the first task: a rank that gets none, or a lone GPU whose run_until
 * finished the whole search, makes none. */
static fd_status refill(feeder *f)
{
    if (!f->draining && f->src->due && f->src->due(f->src->self)) f->draining = 1;
    if (f->exhausted || f->draining || (f->g && pending(f) >= lattice_gpu_chunk(f->g))) return FD_OK;
    f->h.n = 0;
    f->h.next = 0;
    for (int t = 0; t < f->per_refill; t++) {
        const uint64_t *task;
        FD_TRY(f->src->next(f->src->self, &task));
        if (!task) {
            f->exhausted = 1;
            break;
        }
        fcbo_task_info ti;
        fcbo_task_info_get(f->p, task, &ti);
        FD_TRY(host_nodes_add(&f->h, f->p, &ti));
        f->tasks++;
    }
    if (f->h.n && !f->g) {
        const double t = fd_now();
        FD_TRY(engine_open(&f->g, f->p, f->o, f->sink, &f->knobs));
        f->t_create = fd_now() - t;
    }
    if (!f->h.n) return FD_OK;
    return lattice_gpu_push(f->g, (uint32_t)f->h.n, f->h.intent, f->h.y, f->h.size, f->h.ext, f->h.next);
}

/* Output order on the device: internal attributes by ascending user index. */
static fd_status rank_order(const fcbo_prep *p, uint32_t **rank_int, uint32_t **rank_label)
{
    uint32_t *u2i = malloc(((size_t)p->n_user_attr + 1) * sizeof *u2i);
    *rank_int = malloc(((size_t)p->n_attr + 1) * sizeof **rank_int);
    *rank_label = malloc(((size_t)p->n_attr + 1) * sizeof **rank_label);
    if (!u2i || !*rank_int || !*rank_label) {
        free(u2i);
        return fd_fail(FD_ERR_NOMEM, "out of memory");
    }
    for (uint32_t u = 0; u < p->n_user_attr; u++) u2i[u] = UINT32_MAX;
    for (uint32_t m = 0; m < p->n_attr; m++) u2i[p->to_user[m]] = m;
    uint32_t r = 0;
    for (uint32_t u = 0; u < p->n_user_attr; u++)
        if (u2i[u] != UINT32_MAX) {
            (*rank_int)[r] = u2i[u];
            (*rank_label)[r] = p->label[u];
            r++;
        }
    free(u2i);
    return FD_OK;
}

/* An engine on this rank's device for p. */
static fd_status engine_open(lattice_gpu **g, const fcbo_prep *p, const lattice_opts *o, const concept_sink *sink,
                             const gpu_knobs *k)
{
    static const lattice_gpu_closure closure_of[] = {FCA_GPU_CLOSE_ROWS, FCA_GPU_CLOSE_COLUMNS, FCA_GPU_CLOSE_AUTO};
    uint32_t *rank_int = NULL, *rank_label = NULL;
    FD_TRY(rank_order(p, &rank_int, &rank_label));
    lattice_gpu_ctx c = {.device = o->device, .n_obj = p->n_obj, .n_attr = p->n_attr, .aw = p->aw, .rows = p->rows,
                     .cols = p->cols, .all = p->all, .rank_int = rank_int, .rank_label = rank_label,
                     .min_support = p->min_support, .with_extents = sink->with_extents,
                     .chunk = (uint32_t)k->chunk, .bits_min = (uint32_t)k->bits_min, .closure = closure_of[k->how]};
    fd_cuda_set_oom_hint("the search stack outgrew the GPU: set FD_GPU_CHUNK lower (nodes a step; docs/performance.md), "
                         "spread the run over more GPUs (mpirun -np), or use --backend cpu");
    fd_status st = lattice_gpu_create(g, &c);
    free(rank_int);
    free(rank_label);
    return st;
}

static int cuda_devices(void) { return fd_cuda_device_count(); }
static int cuda_available(void) { return fd_cuda_device_count() > 0; }

/* Leaves what is on the device's stack as tasks in frontier. */
static fd_status hand_back(const fcbo_prep *p, lattice_gpu *g, task_list *frontier)
{
    lattice_gpu_nodes h;
    FD_TRY(lattice_gpu_pop_all(g, &h));
    fd_status st = fcbo_tasks_from_nodes(p, h.n, h.intents, h.y, h.size, h.ext, frontier);
    lattice_gpu_nodes_free(&h);
    return st;
}

/* Runs the source's tasks on the device until it is empty; with pause,
 * asks it after every step and, once it says so, hands the stack back as
 * frontier instead of finishing it. */
static fd_status gpu_search(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, task_source *src,
                            fcbo_pause_fn pause, void *arg, task_list *frontier, fcbo_stats *stats)
{
    fd_status st = FD_OK;
    feeder f = {.p = p, .o = o, .sink = sink, .src = src, .per_refill = REFILL_TASKS};
    uint64_t per_refill; /* a tuning knob, docs/performance.md */
    FD_TRY(fd_env_count("FD_GPU_REFILL", 1, 1u << 20, o->lone_rank ? REFILL_TASKS_LONE : REFILL_TASKS, "subtrees",
                        &per_refill));
    f.per_refill = (int)per_refill;
    FD_TRY(gpu_knobs_read(&f.knobs));
    double t_refill = 0, t_step = 0, t_wait = 0, tt;
    writer w = {.sink = sink, .st = FD_OK};
    int writer_started = 0, cur = 0;
    pthread_t th;
    uint64_t concepts = 0;
    double t0 = fd_now();
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);

    if (pthread_create(&th, NULL, writer_main, &w) != 0) {
        st = fd_fail(FD_ERR_INTERNAL, "cannot start the concept writer thread");
        goto done;
    }
    writer_started = 1;
    for (;;) {
        tt = fd_now();
        FD_TRY_GOTO(refill(&f), st, done);
        t_refill += fd_now() - tt;
        if (pending(&f) == 0 && f.draining) {
            /* Every task taken is finished: once the writer has handed
             * their concepts to the sink, the checkpoint may commit. */
            pthread_mutex_lock(&w.mu);
            while (w.slot[0].full || w.slot[1].full) pthread_cond_wait(&w.cv, &w.mu);
            fd_status wst = w.st;
            pthread_mutex_unlock(&w.mu);
            FD_TRY_GOTO(wst, st, done);
            FD_TRY_GOTO(f.src->quiet(f.src->self), st, done);
            f.draining = 0;
            continue;
        }
        if (pending(&f) == 0) break;
        tt = fd_now();
        pthread_mutex_lock(&w.mu);
        while (w.slot[cur].full) pthread_cond_wait(&w.cv, &w.mu);
        fd_status wst = w.st;
        pthread_mutex_unlock(&w.mu);
        t_wait += fd_now() - tt;
        if (wst != FD_OK || atomic_load_explicit(&sink->failed, memory_order_relaxed)) {
            st = wst != FD_OK ? wst : FD_ERR_IO;
            break;
        }
        tt = fd_now();
        FD_TRY_GOTO(lattice_gpu_step(f.g, &w.slot[cur].out), st, done);
        t_step += fd_now() - tt;
        concepts += w.slot[cur].out.n;
        pthread_mutex_lock(&w.mu);
        w.slot[cur].full = w.slot[cur].out.n > 0;
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
        cur ^= 1;
        if (pause && pending(&f) > 0 && pause(arg)) {
            FD_TRY_GOTO(hand_back(p, f.g, frontier), st, done);
            break;
        }
    }
done:
    if (st != FD_OK) atomic_store(&sink->failed, 1);
    if (writer_started) {
        pthread_mutex_lock(&w.mu);
        w.done = 1;
        pthread_cond_broadcast(&w.cv);
        pthread_mutex_unlock(&w.mu);
        pthread_join(th, NULL);
        if (st == FD_OK) st = w.st;
    }
    if (f.g) {
        lattice_gpu_stats gs;
        lattice_gpu_get_stats(f.g, &gs);
        stats->closures += gs.closures;
        stats->fails += gs.fails;
        stats->skipped_support += gs.skipped_support;
        if (getenv("FD_GPU_VERBOSE"))
            fprintf(stderr,
                    "gpu %d: %llu steps of up to %u nodes, stack at most %llu nodes and %llu extent words; "
                    "%llu closures, %llu by columns; "
                    "%llu tasks; seconds: start %.4f, taking tasks %.4f, steps %.4f, waiting for the writer %.4f\n",
                    o->device, (unsigned long long)gs.steps, lattice_gpu_chunk(f.g), (unsigned long long)gs.max_nodes,
                    (unsigned long long)gs.max_ext, (unsigned long long)gs.closures,
                    (unsigned long long)gs.by_columns, (unsigned long long)f.tasks, f.t_create, t_refill, t_step,
                    t_wait);
    }
    stats->concepts += concepts;
    stats->tasks += f.tasks;
    stats->busy_seconds += fd_now() - t0;
    for (int i = 0; i < 2; i++) lattice_gpu_out_free(&w.slot[i].out);
    lattice_gpu_destroy(&f.g);
    host_nodes_free(&f.h);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
    return st;
}

static fd_status cuda_run(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, task_source *src,
                         fcbo_stats *stats)
{
    return gpu_search(p, o, sink, src, NULL, NULL, NULL, stats);
}

static fd_status cuda_run_until(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, const uint64_t *task,
                                fcbo_pause_fn pause, void *arg, task_list *frontier, fcbo_stats *stats)
{
    task_list one;
    list_source ls;
    fd_status st = list_source_one(&ls, &one, task);
    task_source src = list_source_as(&ls);
    if (st == FD_OK) st = gpu_search(p, o, sink, &src, pause, arg, frontier, stats);
    task_list_free(&one);
    return st;
}

const struct lattice_ops lattice_cuda_ops = {
    .dev = {.name = "cuda", .available = cuda_available, .devices = cuda_devices, .open_device = fd_cuda_open, .warm_device = fd_cuda_warm,
            .release_device = fd_cuda_release, .present = fd_cuda_present},
    .device_tasks = GPU_TASKS,
    .run = cuda_run,
    .run_until = cuda_run_until,
    .up_covers = lattice_gpu_up_covers,
};
