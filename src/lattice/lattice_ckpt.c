/* SPDX-License-Identifier: BSD-3-Clause */
#include "lattice_ckpt.h"

#include "../common/clock.h"
#include "../job/ckpt.h"
#include "../io/h5util.h"

#include <pthread.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A segment: one HDF5 file of concepts and the subtrees it holds whole.
 * Consumers share the rank's current segment (their writes are
 * serialised by the sink's lock anyway): a file per thread made a short
 * run on 16 threads create 17 files and copy 16 of them into the part
 * at the end, 3x the time of the run without checkpoints
 * (bench/results/lattice-threads-checkpoints.txt).  Once the current
 * segment is due, each consumer finishes its subtree, flushes, says so
 * (quiet) and moves to a new one at its next subtree; the old one commits
 * when the last consumer in it leaves, so that it only ever holds whole
 * subtrees.  Between checkpoints a consumer stays in its segment and
 * keeps the subtrees it finished in `taken`. */
typedef struct seg seg;
struct seg {
    lattice_h5 *w;
    double opened;
    uint64_t *held;              /* subtrees finished with their concepts in w */
    size_t nheld, capheld;
    int active;                  /* consumers that joined it and have not left */
    seg *next;                   /* the list of open segments */
};

/* One consumer: the segment its subtrees go to, and what it took. */
typedef struct {
    seg *seg;
    uint64_t *taken;             /* not finished yet */
    size_t ntaken, captaken;
} slot;

struct lattice_ckpt {
    ckpt *ck;
    const fca_context *ctx;
    int extents, rank, device;
    char *result;                /* lattice_ckpt_opts.result */
    slot *slots;                 /* 0: rank 0's split and a GPU rank's loop; 1..: CPU workers */
    int nslots;
    atomic_int next_slot;
    fd_pool *pool;
    pthread_mutex_t lock;        /* the segments, their list and the committed paths */
    seg *open, *cur;             /* every open segment; where new subtrees go */
    char **mine;
    size_t nmine, capmine;
    /* rank 0, --resume */
    uint8_t *done;
    uint64_t ndone;
    char **old;
    size_t nold, capold;
    fd_records recs;             /* the first run's list */
    fd_records left;             /* what this run still has to do (ckpt_records_left) */
    /* rank 0, a fresh run whose split's segment stays open (split_done) */
    seg *split_seg;
    fd_records list;             /* the caller's, saved when split_seg commits */
};

/* The calling thread's slot in the router it last used. */
static _Thread_local const lattice_ckpt *tls_ck;
static _Thread_local int tls_slot;

static slot *my_slot(lattice_ckpt *lc)
{
    if (tls_ck != lc) return &lc->slots[0];
    return &lc->slots[tls_slot];
}

int lattice_ckpt_resuming(const lattice_ckpt *lc) { return ckpt_resuming(lc->ck); }
int lattice_ckpt_due(const lattice_ckpt *lc, double since) { return ckpt_due(lc->ck, since); }
uint64_t lattice_ckpt_resumed(const lattice_ckpt *lc) { return lc->ndone; }

fd_status lattice_ckpt_open(lattice_ckpt **out, const lattice_ckpt_opts *o, const fca_context *ctx)
{
    fd_status st = FD_OK;
    char params[512];
    lattice_ckpt *lc = calloc(1, sizeof *lc);
    *out = NULL;
    if (!lc) return fd_fail(FD_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&lc->lock, NULL);
    lc->ctx = ctx;
    lc->extents = o->extents;
    lc->rank = o->rank;
    lc->device = o->device;
    if (o->result && !(lc->result = strdup(o->result))) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto fail;
    }
    lc->nslots = o->consumers + 1;
    atomic_init(&lc->next_slot, 1);
    /* What decides the concepts, and the kind of tasks the list holds (a
     * GPU's carry no failed sets); threads and ranks may change. */
    snprintf(params, sizeof params, "input_sha256=%s\nmin_support=%u\nextents=%d\ntasks=%s\n", ctx->sha256,
             o->min_support, o->extents, o->device ? "device" : "cpu");
    ckpt_opts co = {o->dir, o->ckdir, "lattice", params, o->seconds, o->resume, o->rank, o->size};
    /* Collective first: every rank reaches it, whatever fails after. */
    FD_TRY_GOTO(ckpt_open(&lc->ck, &co), st, fail);
    FD_ALLOC_GOTO(lc->slots, (size_t)lc->nslots, st, fail);
    *out = lc;
    return FD_OK;
fail:
    lattice_ckpt_close(&lc, st, 1);
    return st;
}

/* ---------------- segments ---------------- */

/* A new segment in the open list (its file is made when first needed).
 * Under lc->lock. */
static seg *seg_new(lattice_ckpt *lc)
{
    seg *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->opened = fd_now();
    g->next = lc->open;
    lc->open = g;
    return g;
}

static fd_status seg_file(lattice_ckpt *lc, seg *g)
{
    if (g->w) return FD_OK;
    char *path = ckpt_seg_path(lc->ck);
    if (!path) return fd_fail(FD_ERR_NOMEM, "out of memory");
    fd_status st = lattice_h5_create(&g->w, path, lc->result, lc->ctx, lc->extents);
    free(path);
    return st;
}

/* Commits g (whole subtrees only: no consumer is in it) and frees it.
 * The split's segment, kept open for the subtrees after it (split_done),
 * commits as stage 0, and the work list is saved only after it: a list
 * on disk must never lack the split's concepts (a resume would not
 * split again).  A kill between the two leaves no list, and --resume
 * says to start again.  Under lc->lock. */
static fd_status seg_commit(lattice_ckpt *lc, seg *g, int stage)
{
    fd_status st = FD_OK;
    const int split = g == lc->split_seg;
    if (split) {
        stage = 0;
        lc->split_seg = NULL;
    }
    for (seg **p = &lc->open; *p; p = &(*p)->next)
        if (*p == g) {
            *p = g->next;
            break;
        }
    if (lc->cur == g) lc->cur = NULL;
    char *path = NULL;
    if (g->w) {
        st = ckpt_seg_mark(lattice_h5_file(g->w), lc->ck, stage, g->held, g->nheld);
        if (st == FD_OK && !(path = strdup(lattice_h5_path(g->w)))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
        if (st == FD_OK) st = lattice_h5_finish(&g->w);
        else lattice_h5_abort(&g->w);
        if (st == FD_OK) st = fd_grow((void **)&lc->mine, &lc->capmine, lc->nmine + 1, sizeof *lc->mine);
        if (st == FD_OK) {
            lc->mine[lc->nmine++] = path;
            path = NULL;
        }
    }
    if (st == FD_OK && split) st = ckpt_save_records(lc->ck, &lc->list);
    /* After the list: a test's kill here leaves a resumable checkpoint. */
    if (st == FD_OK) ckpt_seg_committed(lc->ck, stage, g->nheld);
    free(path);
    free(g->held);
    free(g);
    return st;
}

/* Called under the sink's lock. */
static fd_status route(void *self, const concept_batch *b)
{
    lattice_ckpt *lc = self;
    slot *s = my_slot(lc);
    fd_status st = FD_OK;
    pthread_mutex_lock(&lc->lock);
    /* Slot 0 without a subtree: rank 0's split, a segment of its own. */
    if (!s->seg && !(s->seg = seg_new(lc))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st == FD_OK) st = seg_file(lc, s->seg);
    seg *g = s->seg;
    pthread_mutex_unlock(&lc->lock);
    if (st != FD_OK) return st;
    concept_writer w = lattice_h5_as(g->w);
    return w.write(w.self, b);
}

concept_writer lattice_ckpt_writer(lattice_ckpt *lc) { return (concept_writer){route, lc}; }

/* ---------------- the task source ---------------- */

/* The consumer's segment for the subtrees it takes now: the current one,
 * or a new one where that is due (committed at once if nobody is in it).
 * Under lc->lock. */
static fd_status join_current(lattice_ckpt *lc, slot *s)
{
    if (lc->cur && ckpt_due(lc->ck, lc->cur->opened)) {
        seg *old = lc->cur;
        lc->cur = NULL;
        if (old->active == 0) FD_TRY(seg_commit(lc, old, 1));
    }
    if (!lc->cur && !(lc->cur = seg_new(lc))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    s->seg = lc->cur;
    s->seg->active++;
    return FD_OK;
}

static fd_status ck_next(void *self, const uint64_t **task)
{
    lattice_ckpt *lc = self;
    /* A CPU worker's first call: a slot of its own.  A GPU rank is one
     * consumer whose concepts reach the sink from its writer thread: it
     * keeps slot 0. */
    if (tls_ck != lc && !lc->device) {
        int k = atomic_fetch_add(&lc->next_slot, 1);
        tls_ck = lc;
        tls_slot = k < lc->nslots ? k : 0;
    }
    size_t len;
    uint64_t id;
    fd_pool_next(lc->pool, task, &len, &id);
    if (!*task) return FD_OK;
    slot *s = my_slot(lc);
    fd_status st = FD_OK;
    pthread_mutex_lock(&lc->lock);
    if (!s->seg) st = join_current(lc, s);
    pthread_mutex_unlock(&lc->lock);
    FD_TRY(st);
    FD_TRY(fd_grow((void **)&s->taken, &s->captaken, s->ntaken + 1, sizeof *s->taken));
    s->taken[s->ntaken++] = id;
    return FD_OK;
}

/* Everything the consumer took is finished and in the sink: its segment
 * holds those subtrees, and the consumer leaves it.  Under lc->lock. */
static fd_status leave(lattice_ckpt *lc, slot *s, int *last)
{
    seg *g = s->seg;
    *last = 0;
    if (!g) return FD_OK;
    if (s->ntaken) {
        FD_TRY(seg_file(lc, g)); /* subtrees with no concepts still count as done */
        FD_TRY(fd_grow((void **)&g->held, &g->capheld, g->nheld + s->ntaken, sizeof *g->held));
        memcpy(g->held + g->nheld, s->taken, s->ntaken * sizeof *g->held);
        g->nheld += s->ntaken;
        s->ntaken = 0;
    }
    s->seg = NULL;
    *last = --g->active == 0;
    return FD_OK;
}

static fd_status ck_quiet(void *self)
{
    lattice_ckpt *lc = self;
    slot *s = my_slot(lc);
    seg *g = s->seg;
    int last;
    pthread_mutex_lock(&lc->lock);
    fd_status st = leave(lc, s, &last);
    /* The last one out of a segment that is due commits it. */
    if (st == FD_OK && last && ckpt_due(lc->ck, g->opened)) st = seg_commit(lc, g, 1);
    pthread_mutex_unlock(&lc->lock);
    return st;
}

static int ck_due(void *self)
{
    lattice_ckpt *lc = self;
    pthread_mutex_lock(&lc->lock);
    const seg *g = my_slot(lc)->seg;
    int due = g && ckpt_due(lc->ck, g->opened);
    pthread_mutex_unlock(&lc->lock);
    return due;
}

task_source lattice_ckpt_source(lattice_ckpt *lc, fd_pool *pool)
{
    lc->pool = pool;
    return (task_source){ck_next, lc, ck_quiet, ck_due};
}

fd_status lattice_ckpt_end(lattice_ckpt *lc)
{
    fd_status st = FD_OK;
    int last;
    pthread_mutex_lock(&lc->lock);
    for (int k = 0; k < lc->nslots; k++) {
        fd_status s = leave(lc, &lc->slots[k], &last);
        if (st == FD_OK) st = s;
    }
    while (st == FD_OK && lc->open) st = seg_commit(lc, lc->open, 1);
    pthread_mutex_unlock(&lc->lock);
    return st;
}

/* ---------------- the work list (rank 0) ---------------- */

fd_status lattice_ckpt_split_done(lattice_ckpt *lc, const fd_records *all, int keep_open)
{
    /* The split's concepts went to slot 0's segment from rank 0's threads. */
    fd_status st = FD_OK;
    pthread_mutex_lock(&lc->lock);
    seg *g = lc->slots[0].seg;
    lc->slots[0].seg = NULL;
    if (g && keep_open && !ckpt_due(lc->ck, g->opened)) {
        /* The subtrees join it until it is due; the list waits for it. */
        lc->split_seg = lc->cur = g;
        lc->list = *all;
        pthread_mutex_unlock(&lc->lock);
        return FD_OK;
    }
    if (g) st = seg_commit(lc, g, 0);
    pthread_mutex_unlock(&lc->lock);
    FD_TRY(st);
    return ckpt_save_records(lc->ck, all);
}

static fd_status take_segment(void *arg, const char *path, hid_t f, int stage, const uint64_t *ids, size_t n)
{
    lattice_ckpt *lc = arg;
    (void)f;
    if (stage != 0 && stage != 1) return FD_OK;
    for (size_t k = 0; k < n; k++) {
        if (ids[k] >= lc->recs.n || lc->done[ids[k]])
            return fd_fail(FD_ERR_INPUT, "%s: subtree %llu is not in the work list or done twice", path,
                           (unsigned long long)ids[k]);
        lc->done[ids[k]] = 1;
    }
    lc->ndone += n;
    FD_TRY(fd_grow((void **)&lc->old, &lc->capold, lc->nold + 2, sizeof *lc->old));
    if (!(lc->old[lc->nold] = strdup(path))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    lc->old[++lc->nold] = NULL;
    return FD_OK;
}

static int task_valid(const void *p, const uint64_t *rec, size_t words) { return fcbo_task_valid(p, rec, words); }

fd_status lattice_ckpt_remaining(lattice_ckpt *lc, const fcbo_prep *p, fd_records *out)
{
    fd_status st = FD_OK;
    FD_TRY(ckpt_load_records(lc->ck, &lc->recs));
    FD_TRY(ckpt_check_records(lc->ck, &lc->recs, task_valid, p));
    const fd_records *r = &lc->recs;
    FD_ALLOC_GOTO(lc->done, r->n + 1, st, done);
    FD_TRY_GOTO(ckpt_scan(lc->ck, r->n, take_segment, lc), st, done);
    FD_TRY_GOTO(ckpt_records_left(r, lc->done, &lc->left), st, done);
    *out = lc->left;
done:
    return st;
}

/* ---------------- the end ---------------- */

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

fd_status lattice_ckpt_build(lattice_ckpt *lc, const char *path, lattice_h5 **w)
{
    fd_status st = FD_OK;
    char **adopted = NULL;
    const char *largest = NULL;
    long long most = -1;
    FD_TRY(ckpt_share_paths(lc->ck, lc->old, lc->nold, &adopted));
    for (size_t k = 0; k < lc->nmine; k++)
        if (file_size(lc->mine[k]) > most) most = file_size(largest = lc->mine[k]);
    for (size_t k = 0; adopted && adopted[k]; k++)
        if (file_size(adopted[k]) > most) most = file_size(largest = adopted[k]);
    /* The largest segment becomes the part in place; the others are
     * copied into it. */
    st = largest ? lattice_h5_adopt(w, largest, path, lc->extents)
                 : lattice_h5_create(w, path, path, lc->ctx, lc->extents);
    for (size_t k = 0; st == FD_OK && k < lc->nmine; k++)
        if (lc->mine[k] != largest) st = lattice_h5_append_file(*w, lc->mine[k]);
    for (size_t k = 0; st == FD_OK && adopted && adopted[k]; k++)
        if (adopted[k] != largest) st = lattice_h5_append_file(*w, adopted[k]);
    ckpt_free_paths(adopted);
    return st;
}

void lattice_ckpt_close(lattice_ckpt **plc, fd_status st, int quiet)
{
    lattice_ckpt *lc = *plc;
    if (!lc) return;
    while (lc->open) {
        seg *g = lc->open;
        lc->open = g->next;
        lattice_h5_abort(&g->w);
        free(g->held);
        free(g);
    }
    for (int k = 0; lc->slots && k < lc->nslots; k++) free(lc->slots[k].taken);
    free(lc->slots);
    (void)quiet; /* ckpt_finish's message is part of the failure's, printed even with -q */
    if (lc->ck) ckpt_finish(lc->ck, st);
    ckpt_close(&lc->ck);
    for (size_t k = 0; k < lc->nmine; k++) free(lc->mine[k]);
    free(lc->mine);
    ckpt_free_paths(lc->old);
    free(lc->done);
    ckpt_records_free(&lc->left);
    pthread_mutex_destroy(&lc->lock);
    free(lc->result);
    free(lc);
    *plc = NULL;
}
