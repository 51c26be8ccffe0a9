/* SPDX-License-Identifier: BSD-3-Clause */
/* The lattice workload: backends and the driver that runs one.
 *
 * A backend enumerates the subtrees that a task source hands it and writes
 * their concepts to a sink.  The driver (lattice_enumerate) is the same for
 * every backend: it splits the top of the tree into tasks on the host and
 * feeds them to the backend, so the concept set never depends on the
 * backend, the thread count or the rank count. */
#ifndef FD_LATTICE_H
#define FD_LATTICE_H

#include "../common/backend.h"
#include "concepts.h"
#include "fcbo.h"
#include "lattice_gpu.h" /* lattice_gpu_covers: a plain C interface */

struct lattice_ckpt;

typedef struct lattice_opts {
    uint32_t min_support;
    int threads;             /* worker threads per rank, >= 1 */
    int device;              /* the GPU this rank drives (GPU backends) */
    int quiet;
    int lone_rank;           /* the job's only rank: a device takes its tasks many at a time */
    struct lattice_ckpt *ckpt;  /* checkpoints, or NULL */
    /* A device still starting (job.h, device_late; one rank only): device_ready(arg)
     * says whether it is ready without waiting (from any thread), and
     * device_open(arg) waits for it and opens it, before the backend's
     * first device call.  Meanwhile the rank's threads run the top of the
     * tree (lattice_enumerate).  NULL: the device is open. */
    int (*device_ready)(void *arg);
    fd_status (*device_open)(void *arg);
    void *device_arg;
} lattice_opts;

/* Hands out tasks to concurrent workers.  next() is called from several
 * threads at once and must be thread-safe; it sets *task to NULL when no
 * work is left.  The task memory stays valid until the run ends. */
typedef struct task_source {
    fd_status (*next)(void *self, const uint64_t **task);
    void *self;
    /* Checkpoints (lattice_ckpt.h), NULL when off.  quiet: the calling
     * consumer has finished every task it took and handed all their
     * concepts to the sink.  due: a checkpoint waits for the consumer:
     * it should finish what it holds, hand it to the sink and call quiet
     * (until then it need not flush between tasks). */
    fd_status (*quiet)(void *self);
    int (*due)(void *self);
} task_source;

struct lattice_ops {
    fd_device_ops dev; /* name, devices, the context (common/backend.h) */
    /* How rank 0 splits the tree for it.  0: one consumer per host thread
     * (the CPU).  Otherwise the backend is one consumer per rank (a
     * device) that wants about this many subtrees: splitting on the host
     * is serial, so a single device rank gets the root alone.  Such tasks
     * carry no failed sets (the device does not use them). */
    int device_tasks;
    fd_status (*run)(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, task_source *src,
                     fcbo_stats *stats);
    /* The subtree of task until pause(arg) says stop (asked between
     * steps), then every node not yet visited appended to frontier as a
     * task (none: the subtree is done); its concepts go to sink as they
     * come.  This is how a lone consumer commits checkpoints without a
     * split of the tree first (lattice.c, lattice_prefix). */
    fd_status (*run_until)(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, const uint64_t *task,
                           fcbo_pause_fn pause, void *arg, task_list *frontier, fcbo_stats *stats);
    /* --edges' up pass by rows on the device (lattice_edges.h), or NULL. */
    fd_status (*up_covers)(const lattice_gpu_covers *in, uint64_t *start, uint32_t *cnt, uint64_t **ids,
                           uint64_t *nids);
};

/* The CPU backend's threads (ops->run, ops->run_until and the host start
 * in lattice.c): each takes tasks from src until none is left, or, with
 * pause, until pause(arg) says stop (asked before each task but a
 * worker's first, before its first child and every pause_every nodes,
 * from every thread; it must stay true once it is).
 * Then each appends the nodes it did not visit to frontier as tasks; what
 * src did not hand out is the caller's (list_source_rest). */
fd_status lattice_cpu_threads(const fcbo_prep *p, int threads, concept_sink *sink, task_source *src,
                              fcbo_pause_fn pause, void *arg, uint32_t pause_every, task_list *frontier,
                              fcbo_stats *stats);

/* Looks a backend up by name: "cpu", "cuda", or "auto" (the best one that
 * is available).  FD_ERR_UNAVAILABLE with the list of built backends when
 * the name is unknown or the backend cannot run here. */
fd_status lattice_backend_get(const char *name, const struct lattice_ops **ops);
/* The same without asking whether it can run here (fd_backend_find). */
fd_status lattice_backend_find(const char *name, const struct lattice_ops **ops);

/* The last backend built (the fastest), whether or not it can run here:
 * --backend auto asks that only when the input's size calls for it, as
 * asking starts the GPU's driver (0.1 s; lattice_job.c). */
const struct lattice_ops *lattice_backend_fastest(void);

/* A task source over a fixed list (an atomic cursor). */
typedef struct {
    const task_list *list;
    _Atomic size_t next;
} list_source;
void list_source_init(list_source *s, const task_list *list);
task_source list_source_as(list_source *s);
/* A source of one task (a run_until's root): *one, which the caller
 * frees, holds its copy. */
fd_status list_source_one(list_source *s, task_list *one, const uint64_t *task);
/* Appends to out the tasks the source has not handed out, in order. */
fd_status list_source_rest(list_source *s, task_list *out);

/* Rank 0's split: replaces the root task in *tasks with at least target
 * tasks, emitting the concepts of the nodes it expands through sink.  For
 * a device backend (device != 0) the tasks carry no failed sets, and the
 * o->threads host threads share each node's candidates. */
fd_status lattice_split(const fcbo_prep *p, const lattice_opts *o, int device, concept_sink *sink, task_list *tasks,
                        size_t target, fcbo_stats *stats);

/* The threads that begin the search while a lone GPU rank's device
 * starts (FD_GPU_HOST_START), of the rank's threads. */
int lattice_host_threads(int threads);

/* Splits the search for `threads` workers and runs it on ops.  Concepts of
 * the split itself go through the same sink. */
fd_status lattice_enumerate(const fcbo_prep *p, const lattice_opts *o, const struct lattice_ops *ops,
                            concept_sink *sink, fcbo_stats *stats);

extern const struct lattice_ops lattice_cpu_ops;
extern const struct lattice_ops lattice_cuda_ops;

#endif
