/* SPDX-License-Identifier: BSD-3-Clause */
/* Fast Close-by-One (Outrata & Vychodil, Information Sciences 185(1), 2012)
 * on the CPU: the engine every lattice backend and the MPI layer drive.
 *
 * fcbo_prep  the context prepared for enumeration (attributes with enough
 *            support, sorted by ascending support; rows and columns as
 *            bitsets; rows as lists for occurrence delivery).  Read-only,
 *            shared by all threads.
 * fcbo_ws    one worker's state: the inherited failed closures M_j, an arena
 *            for node data, a concept batch, counters.  One per thread.
 * tasks      subtrees in a flat, self-contained form (extent, intent, next
 *            attribute y, and every non-empty M_k with k >= y), so that a
 *            subtree can be continued by another thread or rank exactly as
 *            the serial run would continue it.
 *
 * Extents are bitsets when large and sorted object lists when small; a
 * list node computes all its children's extents at once by occurrence
 * delivery (one pass over its objects' rows), which is what makes sparse
 * data fast. */
#ifndef FD_FCBO_H
#define FD_FCBO_H

#include "../common/bitset.h"
#include "concepts.h"
#include "context.h"

typedef struct fcbo_stats {
    uint64_t concepts;       /* concepts emitted */
    uint64_t closures;       /* closures computed */
    uint64_t fails;          /* of which failed the canonicity test */
    uint64_t skipped_nj;     /* candidates pruned by the inherited N_j test */
    uint64_t skipped_support;/* candidates below the minimum support */
    uint64_t skipped_empty;  /* empty extents that cannot be canonical */
    uint64_t tasks;          /* subtrees run */
    double busy_seconds;     /* thread-seconds spent running subtrees */
    double split_seconds;    /* rank 0: splitting the top of the tree into tasks */
    /* rank 0 of a device backend: the host's threads on the top of the
     * tree while the device started (lattice.c, lattice_host_start) */
    uint64_t host_concepts;
    double host_seconds;
} fcbo_stats;

typedef struct fcbo_prep {
    uint32_t n_obj, n_attr;  /* n_attr: attributes kept, internal order */
    uint32_t ow, aw;         /* words per extent / intent bitset */
    int sparse;              /* the sparse layout: no rows or cols bitsets, cl_* instead */
    fd_word *rows;           /* n_obj x aw (dense layout) */
    fd_word *cols;           /* n_attr x ow (dense layout) */
    uint64_t *cl_ptr;        /* sparse layout: columns as ascending object lists */
    uint32_t *cl_idx;
    uint64_t *rl_ptr;        /* rows as lists of internal ids, descending */
    uint32_t *rl_idx;
    uint32_t *supp;          /* support of each internal attribute */
    fd_word *all;            /* aw words: every internal attribute */
    uint32_t *to_user;       /* internal attribute -> user attribute index */
    const uint32_t *label;   /* user attribute index -> id written out */
    uint32_t n_user_attr, uw;
    uint32_t min_support;
    uint32_t list_max;       /* extents up to this size are object lists */
    uint64_t *occ_base;      /* n_attr + 1: each attribute's bucket in a worker's
                              * occurrence store, min(support, list_max) long;
                              * NULL when the store would be too large */
} fcbo_prep;

/* The layout of the context: bitsets of rows and columns (dense: what the
 * GPU takes, and fastest where they are small), or lists only (sparse:
 * memory in proportion to the incidences, for wide sparse data, where the
 * bitsets are objects x attributes bits twice); auto picks by size and
 * density (fcbo.c, choose_layout).  FD_LATTICE_LAYOUT=dense|sparse
 * overrides auto. */
enum { FCBO_LAYOUT_AUTO = 0, FCBO_LAYOUT_DENSE, FCBO_LAYOUT_SPARSE };

/* Prepares ctx for enumeration with the given minimum extent size.  ctx
 * must outlive the prep (its labels are used for output). */
fd_status fcbo_prep_create(fcbo_prep **out, const fca_context *ctx, uint32_t min_support, int layout);
void fcbo_prep_destroy(fcbo_prep **p);
/* Sets list_max (tests force either node layout) and resizes the
 * occurrence store's index to match. */
fd_status fcbo_prep_set_list_max(fcbo_prep *p, uint32_t list_max);

/* Growable list of serialized tasks (see fcbo.c for the layout). */
typedef struct task_list {
    uint64_t *data;
    size_t nwords, capwords;
    size_t *off;             /* start of task i in data */
    size_t n, cap;
} task_list;

void task_list_init(task_list *t);
void task_list_free(task_list *t);
void task_list_clear(task_list *t);
static inline const uint64_t *task_at(const task_list *t, size_t i) { return t->data + t->off[i]; }
/* Size in 64-bit words of the task starting at task. */
size_t fcbo_task_words(const uint64_t *task);
/* Appends a copy of a serialized task. */
fd_status task_list_push(task_list *t, const uint64_t *task);
/* What a backend needs to start a task from scratch: the node and the
 * next attribute.  The inherited failed sets M_k are left out; they only
 * prune closures whose canonicity test would fail anyway. */
typedef struct fcbo_task_info {
    uint32_t y, size, is_bits;
    const fd_word *intent;   /* aw words, or NULL: the intent is held as ids */
    const uint32_t *intent_ids; /* with intent NULL: nintent internal attribute ids */
    uint32_t nintent;
    const void *ext;         /* ow words of bits, or size ascending uint32 ids */
} fcbo_task_info;
void fcbo_task_info_get(const fcbo_prep *p, const uint64_t *task, fcbo_task_info *ti);
/* Whether a task record of words words (one read from a checkpoint) is
 * one this prep could have made: every length, id and bitset within the
 * context, so that running it cannot read or write out of bounds. */
int fcbo_task_valid(const fcbo_prep *p, const uint64_t *task, size_t words);
/* The task's intent as aw words: in the task itself, or made in room. */
const fd_word *fcbo_task_intent(const fcbo_prep *p, const fcbo_task_info *ti, fd_word *room);
/* A rough cost for ordering: extent size times attributes left. */
double fcbo_task_cost(const fcbo_prep *p, const uint64_t *task);

typedef struct fcbo_ws fcbo_ws;

/* A worker that writes its concepts to sink (which must outlive it). */
fd_status fcbo_ws_create(fcbo_ws **out, const fcbo_prep *p, concept_sink *sink);
/* Flushes the worker's last batch and frees it. */
void fcbo_ws_destroy(fcbo_ws **w);
fd_status fcbo_ws_flush(fcbo_ws *w);
/* Tasks this worker writes carry no failed sets (for backends that do not
 * use them: smaller tasks, same concepts). */
void fcbo_ws_without_failed_sets(fcbo_ws *w);
/* For workers without failed sets, whose candidates are then independent:
 * fcbo_expand() computes only the children of candidates whose index is
 * part mod nparts, and emits the node only as part 0, so that nparts
 * workers (threads) can share one large node.  (1 of 1: everything.) */
void fcbo_ws_set_part(fcbo_ws *w, uint32_t part, uint32_t nparts);
const fcbo_stats *fcbo_ws_stats(const fcbo_ws *w);

/* The root subtree (the whole search), or no task when fewer objects than
 * the minimum support exist. */
fd_status fcbo_root(const fcbo_prep *p, task_list *out);
/* Appends n nodes as tasks without failed sets: intents n x aw words,
 * next attributes y, extent sizes, and the extents' ascending object ids
 * concatenated (a device's stack handed back: lattice_gpu_pop_all). */
fd_status fcbo_tasks_from_nodes(const fcbo_prep *p, uint64_t n, const fd_word *intents, const uint32_t *y,
                                const uint32_t *size, const uint32_t *ext, task_list *out);
/* Emits the task's own concept and appends its children as tasks to out
 * (one level of the tree), each carrying the M_k it inherits. */
fd_status fcbo_expand(fcbo_ws *w, const uint64_t *task, task_list *out);
/* Enumerates the whole subtree of task depth-first. */
fd_status fcbo_run(fcbo_ws *w, const uint64_t *task);
/* The same, asking pause(arg) before the first child and then every 64
 * nodes; once it returns nonzero, the search enters no further node and
 * appends every node it has not visited to frontier as a task, with the
 * failed sets it inherits, in the order the search would have taken them.
 * Running those tasks (on any worker, now or after a restart) finishes
 * the search with the very closures and concepts of an unpaused run; an
 * empty frontier means the subtree is done.  This is how a lone worker
 * commits a checkpoint without splitting the tree first. */
typedef int (*fcbo_pause_fn)(void *arg);
/* How often a pause is asked by default: a clock read costs about as much
 * as a small node, so a pause that reads the clock is asked once in this
 * many nodes. */
#define FCBO_PAUSE_EVERY 64u
/* Asks pause every n nodes instead (n >= 1): for a pause that is cheap
 * to ask and urgent (a device ready for the rest). */
void fcbo_ws_set_pause_every(fcbo_ws *w, uint32_t n);
fd_status fcbo_run_until(fcbo_ws *w, const uint64_t *task, fcbo_pause_fn pause, void *arg, task_list *frontier);

/* Expands the costliest task (emitting its concept through w) until there
 * are at least target tasks or only leaves are left; the result replaces
 * *tasks, ordered by decreasing estimated cost. */
fd_status fcbo_split(fcbo_ws *w, task_list *tasks, size_t target);
/* The same with another way to expand one task (fcbo_expand's contract). */
typedef fd_status (*fcbo_expander)(void *ctx, const uint64_t *task, task_list *out);
fd_status fcbo_split_by(const fcbo_prep *p, task_list *tasks, size_t target, fcbo_expander expand, void *ctx);

void fcbo_stats_add(fcbo_stats *acc, const fcbo_stats *s);

#endif
