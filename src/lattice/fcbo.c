/* SPDX-License-Identifier: BSD-3-Clause */
/* FCbO engine.  The pseudocode it follows (notes in docs/algorithms.md):
 *
 *   process(<A,B>, y, M):
 *     output <A,B>; if B = all or y >= n: return
 *     for j = y..n-1, j not in B:
 *       if M[j] ∩ Y_j ⊄ B ∩ Y_j: skip                   (inherited failure)
 *       C = A ∩ col(j); if |C| < min_support: skip
 *       D = C↑
 *       if D ∩ Y_j = B ∩ Y_j: queue (<C,D>, j)           (canonical)
 *       else M[j] = D                                    (remember failure)
 *     for each queued child in order: process(child, j+1, M)
 *
 * M is one array of pointers per worker; a node's failures are recorded on
 * an undo stack and rolled back when the node is done, so children see
 * every failure of their parent's whole loop (the point of FCbO) and
 * siblings' subtrees never see each other's. */
#include "fcbo.h"

#include "../common/dispatch.h"
#include "../common/env.h"

#include <stdlib.h>
#include <string.h>

/* ---------------- arena: stack allocation of node data ---------------- */

typedef struct {
    fd_word *mem;
    size_t cap;
} chunk;

typedef struct {
    chunk *chunks;
    size_t nchunks, capchunks;
    size_t cur, off;
} arena;

typedef struct {
    size_t cur, off;
} arena_mark;

#define ARENA_CHUNK_WORDS ((size_t)1 << 18) /* 2 MiB */

static inline void *arena_alloc(arena *a, size_t words)
{
    if (words == 0) words = 1;
    while (a->cur < a->nchunks) {
        chunk *c = &a->chunks[a->cur];
        if (c->cap - a->off >= words) {
            fd_word *p = c->mem + a->off;
            a->off += words;
            return p;
        }
        /* A chunk too small for this request: later chunks may fit. */
        a->cur++;
        a->off = 0;
    }
    if (a->nchunks == a->capchunks &&
        fd_grow((void **)&a->chunks, &a->capchunks, a->nchunks + 1, sizeof *a->chunks) != FD_OK)
        return NULL;
    size_t cap = words > ARENA_CHUNK_WORDS ? words : ARENA_CHUNK_WORDS;
    fd_word *mem = malloc(cap * sizeof *mem);
    if (!mem) return NULL;
    a->chunks[a->nchunks++] = (chunk){mem, cap};
    a->cur = a->nchunks - 1;
    a->off = words;
    return mem;
}

static arena_mark arena_get(const arena *a) { return (arena_mark){a->cur, a->off}; }
static void arena_release(arena *a, arena_mark m) { a->cur = m.cur; a->off = m.off; }

static void arena_free(arena *a)
{
    for (size_t i = 0; i < a->nchunks; i++) free(a->chunks[i].mem);
    free(a->chunks);
    memset(a, 0, sizeof *a);
}

#define ARENA_OOM() fd_fail_at(FD_ERR_NOMEM, __FILE__, __LINE__, "out of memory for the search stack")

/* ---------------- preparation ---------------- */

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

/* The sparse layout when the bitsets would be large and mostly zeros:
 * over 32 MiB together and under 2% of the bits set (a basket data set of
 * 100,000 x 16,000 at 0.06% held 400 MB of bitsets for 4 MB of lists).
 * Where both fit, the dense one is faster (bench/lattice-layout.sh). */
static int choose_layout(int layout, uint64_t n_obj, uint64_t n_attr, uint64_t nnz, uint64_t ow, uint64_t aw,
                         fd_status *st)
{
    int v;
    if ((*st = fd_env_word("FD_LATTICE_LAYOUT", fd_env_layouts, FCBO_LAYOUT_AUTO, &v)) != FD_OK) return 0;
    /* The GPU's dense layout stays whatever the knob says. */
    if (v == FCBO_LAYOUT_DENSE) return 0;
    if (v == FCBO_LAYOUT_SPARSE) return layout != FCBO_LAYOUT_DENSE;
    if (layout != FCBO_LAYOUT_AUTO) return layout == FCBO_LAYOUT_SPARSE;
    const double bytes = 8.0 * ((double)n_obj * (double)aw + (double)n_attr * (double)ow);
    const double density = n_obj && n_attr ? (double)nnz / ((double)n_obj * (double)n_attr) : 1.0;
    return bytes > 32.0 * (1 << 20) && density < 0.02;
}

#define OCC_MAX_ENTRIES ((uint64_t)32 << 20)

static int cmp_desc_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a < b) - (a > b);
}

/* Each worker's occurrence store (process(), deliver_occ) takes the
 * children of list extents: a bucket per attribute as long as the longest
 * extent it can take there, the attribute's support or list_max.  Past
 * 32 Mi entries a worker (128 MiB), the delivery counts first and takes
 * its buckets from the search stack instead (occ_base NULL). */
fd_status fcbo_prep_set_list_max(fcbo_prep *p, uint32_t list_max)
{
    const uint32_t n = p->n_attr;
    p->list_max = list_max;
    free(p->occ_base);
    p->occ_base = malloc(((size_t)n + 1) * sizeof *p->occ_base);
    if (!p->occ_base) return fd_fail(FD_ERR_NOMEM, "out of memory for the occurrence store's index");
    p->occ_base[0] = 0;
    for (uint32_t m = 0; m < n; m++)
        p->occ_base[m + 1] = p->occ_base[m] + (p->supp[m] < list_max ? p->supp[m] : list_max);
    if (p->occ_base[n] > OCC_MAX_ENTRIES) {
        free(p->occ_base);
        p->occ_base = NULL;
    }
    return FD_OK;
}

fd_status fcbo_prep_create(fcbo_prep **out, const fca_context *ctx, uint32_t min_support, int layout)
{
    fd_status st = FD_OK;
    fcbo_prep *p = NULL;
    uint32_t *usupp = NULL, *order = NULL, *to_int = NULL;
    uint64_t *keys = NULL;
    FD_ALLOC_GOTO(p, 1, st, fail);
    FD_ALLOC_GOTO(usupp, ctx->n_attr, st, fail);
    FD_ALLOC_GOTO(order, ctx->n_attr, st, fail);
    FD_ALLOC_GOTO(to_int, ctx->n_attr, st, fail);
    FD_ALLOC_GOTO(keys, ctx->n_attr, st, fail);
    fca_context_supports(ctx, usupp);

    /* An attribute below the minimum support can be in no intent of a
     * frequent concept, so it is dropped up front.  Ascending support puts
     * rare attributes first, which keeps canonicity failures cheap. */
    uint32_t n = 0;
    for (uint32_t a = 0; a < ctx->n_attr; a++)
        if (usupp[a] >= min_support) keys[n++] = (uint64_t)usupp[a] << 32 | a;
    qsort(keys, n, sizeof *keys, cmp_u64);
    for (uint32_t m = 0; m < n; m++) order[m] = (uint32_t)keys[m];

    p->n_obj = ctx->n_obj;
    p->n_attr = n;
    p->ow = bs_words(ctx->n_obj ? ctx->n_obj : 1);
    p->aw = bs_words(n ? n : 1);
    p->n_user_attr = ctx->n_attr;
    p->uw = bs_words(ctx->n_attr ? ctx->n_attr : 1);
    p->label = ctx->attr_label;
    p->min_support = min_support;
    FD_ALLOC_GOTO(p->to_user, n, st, fail);
    FD_ALLOC_GOTO(p->supp, n, st, fail);
    for (uint32_t a = 0; a < ctx->n_attr; a++) to_int[a] = UINT32_MAX;
    for (uint32_t m = 0; m < n; m++) {
        p->to_user[m] = order[m];
        p->supp[m] = usupp[order[m]];
        to_int[order[m]] = m;
    }
    FD_ALLOC_GOTO(p->all, p->aw, st, fail);
    bs_fill(p->all, n);

    FD_ALLOC_GOTO(p->rl_ptr, (size_t)p->n_obj + 1, st, fail);
    uint64_t nnz = 0;
    for (uint32_t o = 0; o < p->n_obj; o++)
        for (uint64_t k = ctx->row_ptr[o]; k < ctx->row_ptr[o + 1]; k++)
            if (to_int[ctx->row_idx[k]] != UINT32_MAX) nnz++;
    FD_ALLOC_GOTO(p->rl_idx, nnz ? nnz : 1, st, fail);
    p->sparse = choose_layout(layout, p->n_obj, n, nnz, p->ow, p->aw, &st);
    FD_TRY_GOTO(st, st, fail);
    uint64_t w = 0;
    if (p->sparse) {
        /* Rows as descending lists, columns as ascending object lists. */
        FD_ALLOC_GOTO(p->cl_ptr, (size_t)n + 1, st, fail);
        FD_ALLOC_GOTO(p->cl_idx, nnz ? nnz : 1, st, fail);
        memset(p->cl_ptr, 0, ((size_t)n + 1) * sizeof *p->cl_ptr);
        for (uint32_t o = 0; o < p->n_obj; o++) {
            p->rl_ptr[o] = w;
            for (uint64_t k = ctx->row_ptr[o]; k < ctx->row_ptr[o + 1]; k++) {
                const uint32_t m = to_int[ctx->row_idx[k]];
                if (m == UINT32_MAX) continue;
                p->rl_idx[w++] = m;
                p->cl_ptr[m + 1]++;
            }
            qsort(p->rl_idx + p->rl_ptr[o], w - p->rl_ptr[o], sizeof *p->rl_idx, cmp_desc_u32);
        }
        p->rl_ptr[p->n_obj] = w;
        for (uint32_t m = 0; m < n; m++) p->cl_ptr[m + 1] += p->cl_ptr[m];
        uint64_t *fill = NULL;
        FD_ALLOC_GOTO(fill, (size_t)n + 1, st, fail);
        memcpy(fill, p->cl_ptr, ((size_t)n + 1) * sizeof *fill);
        for (uint32_t o = 0; o < p->n_obj; o++)
            for (uint64_t k = p->rl_ptr[o]; k < p->rl_ptr[o + 1]; k++) p->cl_idx[fill[p->rl_idx[k]]++] = o;
        free(fill);
        goto lists_done;
    }
    FD_ALLOC_GOTO(p->rows, (size_t)p->n_obj * p->aw, st, fail);
    FD_ALLOC_GOTO(p->cols, (size_t)n * p->ow, st, fail);
    for (uint32_t o = 0; o < p->n_obj; o++) {
        fd_word *row = p->rows + (size_t)o * p->aw;
        p->rl_ptr[o] = w;
        for (uint64_t k = ctx->row_ptr[o]; k < ctx->row_ptr[o + 1]; k++) {
            uint32_t m = to_int[ctx->row_idx[k]];
            if (m == UINT32_MAX) continue;
            bs_set(row, m);
            bs_set(p->cols + (size_t)m * p->ow, o);
        }
        /* Descending internal ids, so occurrence delivery stops at y:
         * the row's set bits from the top word down (testing every
         * attribute was a tenth of T10I4D100K's instructions at support 5:
         * 100,000 rows x 870 attributes for 10 bits a row). */
        for (uint32_t k = p->aw; k-- > 0;)
            for (fd_word v = row[k]; v; v &= ~((fd_word)1 << (63 - __builtin_clzll(v))))
                p->rl_idx[w++] = k * 64u + (uint32_t)(63 - __builtin_clzll(v));
    }
    p->rl_ptr[p->n_obj] = w;
lists_done:;

    /* A list node pays about one step per incidence of its objects; a
     * bitset node one word per object-word for each candidate it tries.
     * Lists win below roughly 8 * ow / (mean row length) objects.  Narrow
     * dense rows (aw <= 2) find a list node's child extents by one bit
     * test per object and candidate (process: lazy), whatever the row's
     * length, against ow words ANDed and counted at a time: there lists
     * win below a few ow: mushroom, one thread, 44 to 508 objects, 0.228
     * to 0.207 s and 0.249 to 0.215 s end to end; chess at 30% and a
     * 20,000 x 100 zipf context within the VM's noise (bench/results/
     * ab.csv, narrow-list-max). */
    double mean_row = p->n_obj ? (double)nnz / p->n_obj : 1.0;
    if (mean_row < 1.0) mean_row = 1.0;
    double lm = !p->sparse && p->aw <= 2 ? 4.0 * p->ow : 8.0 * p->ow / mean_row;
    uint64_t list_max;
    FD_TRY_GOTO(fd_env_count("FD_LIST_MAX", 0, UINT32_MAX, lm > (double)UINT32_MAX ? UINT32_MAX : (uint64_t)lm,
                             "objects", &list_max),
                st, fail);
    FD_TRY_GOTO(fcbo_prep_set_list_max(p, (uint32_t)list_max), st, fail);

    free(usupp);
    free(order);
    free(to_int);
    free(keys);
    *out = p;
    return FD_OK;
fail:
    free(usupp);
    free(order);
    free(to_int);
    free(keys);
    fcbo_prep_destroy(&p);
    return st;
}

void fcbo_prep_destroy(fcbo_prep **pp)
{
    fcbo_prep *p = *pp;
    if (!p) return;
    free(p->rows);
    free(p->cols);
    free(p->cl_ptr);
    free(p->cl_idx);
    free(p->rl_ptr);
    free(p->rl_idx);
    free(p->supp);
    free(p->all);
    free(p->to_user);
    free(p->occ_base);
    free(p);
    *pp = NULL;
}

/* ---------------- tasks ----------------
 * Layout in 64-bit words:
 *   [0]  y | is_bits << 32 | ids << 33
 *   [1]  |extent| | n_M << 32
 *   [2]  total words of the task
 *   intent: aw words of bits, or (ids) its size c, then c uint32 internal
 *           attribute ids padded to words
 *   extent: ow words of bits, or |extent| uint32 object ids padded to words
 *   n_M times: k, then M_k (aw words)
 * The intent is held as ids where they take fewer words than the bitset
 * (wide sparse contexts: a 16,000-attribute context's root gave 15,007
 * tasks of 2 KB intents that held a few ids each).  Tasks of earlier
 * versions (bit 33 clear) read as they always did. */

#define TASK_HDR 3u
#define TASK_IDS ((uint64_t)1 << 33)

/* Words the intent B takes in a task (as ids, with *ids set, when fewer). */
static size_t task_intent_words(const fcbo_prep *p, const fd_word *B, uint32_t *nids, int *ids)
{
    *nids = bs_count(B, p->aw);
    *ids = p->aw > 4 && 1 + ((size_t)*nids + 1) / 2 < p->aw;
    return *ids ? 1 + ((size_t)*nids + 1) / 2 : p->aw;
}

void task_list_init(task_list *t) { memset(t, 0, sizeof *t); }
void task_list_clear(task_list *t) { t->n = 0; t->nwords = 0; }
void task_list_free(task_list *t)
{
    free(t->data);
    free(t->off);
    memset(t, 0, sizeof *t);
}

size_t fcbo_task_words(const uint64_t *task) { return (size_t)task[2]; }

/* Reserves words for one more task and returns where it starts. */
static uint64_t *task_list_begin(task_list *t, size_t words)
{
    if (fd_grow((void **)&t->data, &t->capwords, t->nwords + words, sizeof *t->data) != FD_OK) return NULL;
    if (fd_grow((void **)&t->off, &t->cap, t->n + 1, sizeof *t->off) != FD_OK) return NULL;
    t->off[t->n++] = t->nwords;
    uint64_t *p = t->data + t->nwords;
    t->nwords += words;
    return p;
}

fd_status task_list_push(task_list *t, const uint64_t *task)
{
    size_t words = fcbo_task_words(task);
    uint64_t *d = task_list_begin(t, words);
    if (!d) return fd_fail(FD_ERR_NOMEM, "out of memory for the task list");
    memcpy(d, task, words * sizeof *d);
    return FD_OK;
}

void fcbo_task_info_get(const fcbo_prep *p, const uint64_t *task, fcbo_task_info *ti)
{
    ti->y = (uint32_t)task[0];
    ti->is_bits = (uint32_t)(task[0] >> 32) & 1u;
    ti->size = (uint32_t)task[1];
    if (task[0] & TASK_IDS) {
        ti->intent = NULL;
        ti->nintent = (uint32_t)task[TASK_HDR];
        ti->intent_ids = (const uint32_t *)(task + TASK_HDR + 1);
        ti->ext = task + TASK_HDR + 1 + ((size_t)ti->nintent + 1) / 2;
    } else {
        ti->intent = task + TASK_HDR;
        ti->intent_ids = NULL;
        ti->nintent = 0;
        ti->ext = task + TASK_HDR + p->aw;
    }
}

/* No bit at or past nbits in a set of w words. */
static int bits_within(const fd_word *s, uint32_t w, uint32_t nbits)
{
    if (nbits & 63u && s[nbits >> 6] & ~bs_below_mask(nbits)) return 0;
    for (uint32_t k = bs_words(nbits); k < w; k++)
        if (s[k]) return 0;
    return 1;
}

int fcbo_task_valid(const fcbo_prep *p, const uint64_t *task, size_t words)
{
    if (words < TASK_HDR || task[2] != words || task[0] >> 34) return 0;
    const uint32_t y = (uint32_t)task[0], size = (uint32_t)task[1], nm = (uint32_t)(task[1] >> 32);
    const int is_bits = (int)(task[0] >> 32 & 1u), ids = (task[0] & TASK_IDS) != 0;
    if (y > p->n_attr || size > p->n_obj) return 0;
    const uint64_t *q = task + TASK_HDR, *end = task + words;
    /* Each part's length is checked against what is left before it is read. */
    if (ids) {
        if (q >= end || q[0] > p->n_attr || (size_t)(end - q) < 1 + (q[0] + 1) / 2) return 0;
        const uint32_t *x = (const uint32_t *)(q + 1);
        for (uint64_t k = 0; k < q[0]; k++)
            if (x[k] >= p->n_attr) return 0;
        q += 1 + (q[0] + 1) / 2;
    } else {
        if ((size_t)(end - q) < p->aw || !bits_within(q, p->aw, p->n_attr)) return 0;
        q += p->aw;
    }
    if (is_bits) {
        if ((size_t)(end - q) < p->ow || !bits_within(q, p->ow, p->n_obj) || bs_count(q, p->ow) != size) return 0;
        q += p->ow;
    } else {
        if ((size_t)(end - q) < ((size_t)size + 1) / 2) return 0;
        const uint32_t *x = (const uint32_t *)q;
        for (uint32_t k = 0; k < size; k++)
            if (x[k] >= p->n_obj || (k && x[k] <= x[k - 1])) return 0;
        q += ((size_t)size + 1) / 2;
    }
    if ((size_t)(end - q) != (size_t)nm * (1 + p->aw)) return 0;
    /* M_k ascending from y: a task's loading clears M from y on, and an
     * entry below it would outlive the task it points into. */
    for (uint32_t i = 0; i < nm; i++, q += 1 + p->aw)
        if (q[0] < y || q[0] >= p->n_attr || (i && q[0] <= q[-1 - (ptrdiff_t)p->aw]) ||
            !bits_within(q + 1, p->aw, p->n_attr))
            return 0;
    return 1;
}

const fd_word *fcbo_task_intent(const fcbo_prep *p, const fcbo_task_info *ti, fd_word *room)
{
    if (ti->intent) return ti->intent;
    bs_zero(room, p->aw);
    bs_set_ids(room, ti->intent_ids, ti->nintent);
    return room;
}

double fcbo_task_cost(const fcbo_prep *p, const uint64_t *task)
{
    uint32_t y = (uint32_t)task[0];
    uint32_t size = (uint32_t)task[1];
    return ((double)size + 1.0) * (double)(p->n_attr > y ? p->n_attr - y : 0);
}

/* ---------------- workers ---------------- */

typedef struct {
    uint32_t size;
    uint32_t is_bits;
    void *ext;         /* fd_word[ow] or uint32_t[size] */
    fd_word *intent;   /* aw words */
} fnode;

typedef struct {
    uint32_t j;
    fd_word *old;
} undo_rec;

/* The failed closures a worker keeps (FCbO's N_j, each a set of n_attr
 * bits), and those a task carries, within a budget: one per candidate of
 * every node on the path is quadratic in the attributes (a 500,000-item
 * transaction asked for 31 GB).  A failure not kept only costs the closure
 * that it would have pruned; the concepts are the same. */
#define FAILED_SET_WORDS ((size_t)4 << 20)  /* 32 MiB a worker */
#define TASK_FAILED_WORDS ((size_t)1 << 19) /* 4 MiB a task */

struct fcbo_ws {
    const fcbo_prep *p;
    concept_sink *sink;
    concept_batch batch;
    fd_word **M;
    undo_rec *undo;
    size_t nundo, capundo;
    size_t mwords;           /* words held by the failed sets process() recorded */
    arena ar;
    fd_word *ubits;
    uint32_t *cand;          /* n_attr: the sparse layout's closure candidates */
    uint32_t *occ;           /* the occurrence store (p->occ_base's buckets) */
    uint32_t *occ_n;         /* n_attr: objects in each bucket, 0 between deliveries */
    fd_word *occ_seen;       /* aw: attributes delivered to, 0 between deliveries */
    fd_word *task_intent;    /* aw: the intent of a task that holds it as ids */
    int no_failed_sets;
    uint32_t part, nparts;   /* expand (out != NULL) only candidates ci = part mod nparts */
    /* fcbo_run_until: asked every pause_every nodes; once it says yes,
     * every child not yet entered goes to frontier instead. */
    fcbo_pause_fn pause;
    void *pause_arg;
    uint32_t pause_countdown, pause_every;
    int paused;
    task_list *frontier;
    fcbo_stats st;
};

#define BATCH_IDS ((size_t)1 << 18)

fd_status fcbo_ws_create(fcbo_ws **out, const fcbo_prep *p, concept_sink *sink)
{
    fd_status st = FD_OK;
    fcbo_ws *w = NULL;
    FD_ALLOC_GOTO(w, 1, st, fail);
    w->p = p;
    w->sink = sink;
    w->pause_every = FCBO_PAUSE_EVERY;
    concept_batch_init(&w->batch);
    FD_ALLOC_GOTO(w->M, (size_t)p->n_attr + 1, st, fail);
    FD_ALLOC_GOTO(w->ubits, p->uw, st, fail);
    FD_ALLOC_GOTO(w->task_intent, p->aw, st, fail);
    if (p->sparse) FD_ALLOC_GOTO(w->cand, (size_t)p->n_attr + 1, st, fail);
    /* Narrow dense rows find a list node's children by bit tests (process:
     * lazy), never in the store. */
    if (p->occ_base && (p->sparse || p->aw > 2)) {
        FD_ALLOC_GOTO(w->occ, p->occ_base[p->n_attr] + 1, st, fail);
        FD_ALLOC_GOTO(w->occ_n, (size_t)p->n_attr + 1, st, fail);
        FD_ALLOC_GOTO(w->occ_seen, p->aw, st, fail);
    }
    *out = w;
    return FD_OK;
fail:
    if (w) {
        free(w->M);
        free(w->ubits);
        free(w->cand);
        free(w->occ);
        free(w->occ_n);
        free(w->occ_seen);
        free(w->task_intent);
        free(w);
    }
    return st;
}

fd_status fcbo_ws_flush(fcbo_ws *w) { return concept_sink_flush(w->sink, &w->batch); }
void fcbo_ws_without_failed_sets(fcbo_ws *w) { w->no_failed_sets = 1; }

void fcbo_ws_set_part(fcbo_ws *w, uint32_t part, uint32_t nparts)
{
    w->part = part;
    w->nparts = nparts;
}

void fcbo_ws_destroy(fcbo_ws **pw)
{
    fcbo_ws *w = *pw;
    if (!w) return;
    concept_batch_free(&w->batch);
    arena_free(&w->ar);
    free(w->cand);
    free(w->occ);
    free(w->occ_n);
    free(w->occ_seen);
    free(w->task_intent);
    free(w->M);
    free(w->undo);
    free(w->ubits);
    free(w);
    *pw = NULL;
}

const fcbo_stats *fcbo_ws_stats(const fcbo_ws *w) { return &w->st; }

void fcbo_stats_add(fcbo_stats *a, const fcbo_stats *s)
{
    a->concepts += s->concepts;
    a->closures += s->closures;
    a->fails += s->fails;
    a->skipped_nj += s->skipped_nj;
    a->skipped_support += s->skipped_support;
    a->tasks += s->tasks;
    a->skipped_empty += s->skipped_empty;
    a->busy_seconds += s->busy_seconds;
    a->split_seconds += s->split_seconds;
    a->host_concepts += s->host_concepts;
    a->host_seconds += s->host_seconds;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Ascending; insertion sort for the short lists most intents are. */
static void sort_u32(uint32_t *v, size_t n)
{
    if (n > 32) {
        qsort(v, n, sizeof *v, cmp_u32);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        const uint32_t x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

FD_HOT static fd_status emit(fcbo_ws *w, const fnode *nd)
{
    const fcbo_prep *p = w->p;
    concept_batch *b = &w->batch;
    int ext = w->sink->with_extents;
    FD_TRY(concept_batch_reserve(b, p->n_user_attr, ext ? nd->size : 0, ext));
    /* Internal attribute order is by support; the user wants ids ascending,
     * which is user index order.  Narrow contexts scatter into a user-order
     * bitset; wide ones (over 4 words) sort the intent's user indices, as
     * clearing and scanning that bitset for every concept took 15% of a
     * sparse 16,000-attribute context's run (intents of a few attributes). */
    size_t k = b->nint;
    if (p->uw <= 4) {
        bs_zero(w->ubits, p->uw);
        BS_FOREACH(m, nd->intent, p->aw, bs_set(w->ubits, p->to_user[m]););
        BS_FOREACH(u, w->ubits, p->uw, b->int_ids[k++] = p->label[u];);
    } else {
        uint32_t *u = b->int_ids + k;
        BS_FOREACH(m, nd->intent, p->aw, u[k++ - b->nint] = p->to_user[m];);
        sort_u32(u, k - b->nint);
        for (size_t i = 0; i < k - b->nint; i++) u[i] = p->label[u[i]];
    }
    b->nint = k;
    b->int_end[b->n] = k;
    b->supp[b->n] = nd->size;
    if (ext) {
        size_t e = b->next;
        if (nd->is_bits) {
            e += bs_to_list((const fd_word *)nd->ext, p->ow, b->ext_ids + e);
        } else {
            memcpy(b->ext_ids + e, nd->ext, (size_t)nd->size * sizeof(uint32_t));
            e += nd->size;
        }
        b->next = e;
        b->ext_end[b->n] = e;
    }
    b->n++;
    w->st.concepts++;
    if (b->nint >= BATCH_IDS || b->next >= BATCH_IDS || b->n >= BATCH_IDS / 4) return fcbo_ws_flush(w);
    return FD_OK;
}

/* D = intersection of the rows of the objects in l[0..n); n >= 1.  One and
 * two words (up to 128 attributes, the common case) stay in registers. */
static inline void and_rows_list(const fcbo_prep *p, const uint32_t *l, uint32_t n, fd_word *restrict D)
{
    const uint32_t aw = p->aw;
    const fd_word *rows = p->rows;
    if (aw == 1) {
        fd_word d = rows[l[0]];
        for (uint32_t i = 1; i < n; i++) d &= rows[l[i]];
        D[0] = d;
    } else if (aw == 2) {
        fd_word d0 = rows[2 * (size_t)l[0]], d1 = rows[2 * (size_t)l[0] + 1];
        for (uint32_t i = 1; i < n; i++) {
            d0 &= rows[2 * (size_t)l[i]];
            d1 &= rows[2 * (size_t)l[i] + 1];
        }
        D[0] = d0;
        D[1] = d1;
    } else {
        bs_copy(D, rows + (size_t)l[0] * aw, aw);
        for (uint32_t i = 1; i < n; i++) {
            const fd_word *r = rows + (size_t)l[i] * aw;
            for (uint32_t k = 0; k < aw; k++) D[k] &= r[k];
        }
    }
}

/* Same over the objects of a bitset extent C (ow words), C not empty. */
static inline void and_rows_bits(const fcbo_prep *p, const fd_word *C, fd_word *restrict D)
{
    const uint32_t aw = p->aw;
    const fd_word *rows = p->rows;
    if (aw <= 2) {
        fd_word d0 = ~(fd_word)0, d1 = ~(fd_word)0;
        const uint32_t second = aw == 2;
        BS_FOREACH(o, C, p->ow, {
            d0 &= rows[(size_t)o * aw];
            d1 &= rows[(size_t)o * aw + second];
        });
        D[0] = d0 & p->all[0];
        if (aw == 2) D[1] = d1 & p->all[1];
        return;
    }
    bs_copy(D, p->all, aw);
    BS_FOREACH(o, C, p->ow, {
        const fd_word *r = rows + (size_t)o * aw;
        for (uint32_t k = 0; k < aw; k++) D[k] &= r[k];
    });
}

/* Wide and sparse rows: only attributes of the first object's row can be
 * in D beyond B ∪ {j}.  Their list goes into cand; 0 when the row is too
 * long for it (then the caller intersects whole rows). */
#define SPARSE_CAND_MAX 1024
static int sparse_candidates(const fcbo_prep *p, uint32_t o, uint32_t j, const fd_word *B, fd_word *D, uint32_t *cand,
                             uint32_t *nc)
{
    const uint32_t *r0 = p->rl_idx + p->rl_ptr[o];
    const uint32_t len0 = (uint32_t)(p->rl_ptr[o + 1] - p->rl_ptr[o]);
    bs_copy(D, B, p->aw);
    bs_set(D, j);
    *nc = 0;
    for (uint32_t k = 0; k < len0; k++)
        if (!bs_test(D, r0[k])) {
            if (*nc == SPARSE_CAND_MAX) return 0;
            cand[(*nc)++] = r0[k];
        }
    return 1;
}

/* Keeps the candidates that object o has; returns how many are left. */
static inline uint32_t sparse_filter(const fcbo_prep *p, uint32_t o, uint32_t *cand, uint32_t nc)
{
    const fd_word *r = p->rows + (size_t)o * p->aw;
    uint32_t keep = 0;
    for (uint32_t k = 0; k < nc; k++)
        if (bs_test(r, cand[k])) cand[keep++] = cand[k];
    return keep;
}

/* The sparse layout: keeps the candidates (descending, as the rows are)
 * that object o's row holds, by one merge of the two lists. */
static inline uint32_t list_filter(const fcbo_prep *p, uint32_t o, uint32_t *cand, uint32_t nc)
{
    const uint32_t *r = p->rl_idx + p->rl_ptr[o], *end = p->rl_idx + p->rl_ptr[o + 1];
    uint32_t keep = 0;
    for (uint32_t k = 0; k < nc && r < end; k++) {
        while (r < end && *r > cand[k]) r++;
        if (r < end && *r == cand[k]) cand[keep++] = cand[k];
    }
    return keep;
}

/* The sparse layout's closure: the first object's attributes beyond
 * B ∪ {j}, filtered by every other object's row until none is left.
 * cand: room for n_attr. */
static void closure_lists(const fcbo_prep *p, const fnode *c, uint32_t j, const fd_word *B, fd_word *D, uint32_t *cand)
{
    uint32_t o0, first = 0, nc = 0;
    if (c->is_bits) {
        const fd_word *C = c->ext;
        while (!C[first]) first++; /* c->size > 0 */
        o0 = first * 64u + (uint32_t)__builtin_ctzll(C[first]);
    } else {
        o0 = ((const uint32_t *)c->ext)[0];
    }
    bs_copy(D, B, p->aw);
    bs_set(D, j);
    for (uint64_t k = p->rl_ptr[o0]; k < p->rl_ptr[o0 + 1]; k++)
        if (!bs_test(D, p->rl_idx[k])) cand[nc++] = p->rl_idx[k];
    if (c->is_bits) {
        const fd_word *C = c->ext;
        for (uint32_t k = first; k < p->ow && nc; k++) {
            fd_word w = k == first ? C[k] & (C[k] - 1) : C[k]; /* o0 is done */
            for (; w && nc; w &= w - 1) nc = list_filter(p, k * 64u + (uint32_t)__builtin_ctzll(w), cand, nc);
        }
    } else {
        const uint32_t *l = c->ext;
        for (uint32_t i = 1; i < c->size && nc; i++) nc = list_filter(p, l[i], cand, nc);
    }
    bs_set_ids(D, cand, nc);
}

/* D = C↑ for a child of <A,B> at attribute j.  D ⊇ B ∪ {j} always.
 * cand: the sparse layout's room (n_attr). */
FD_HOT static void closure(const fcbo_prep *p, const fnode *c, uint32_t j, const fd_word *B, uint32_t nb, fd_word *D,
                           uint32_t *lcand)
{
    const uint32_t aw = p->aw, ow = p->ow;
    uint32_t cand[SPARSE_CAND_MAX], nc = 0;
    if (c->size == 0) {
        bs_copy(D, p->all, aw);
        return;
    }
    if (p->sparse) {
        closure_lists(p, c, j, B, D, lcand);
        return;
    }
    if (!c->is_bits) {
        const uint32_t *l = c->ext;
        /* Wide rows: filter the first object's attributes object by
         * object, which usually leaves none within a few objects. */
        if (aw <= 4 || c->size < 4 || !sparse_candidates(p, l[0], j, B, D, cand, &nc)) {
            and_rows_list(p, l, c->size, D);
            return;
        }
        for (uint32_t i = 1; i < c->size && nc; i++) nc = sparse_filter(p, l[i], cand, nc);
        bs_set_ids(D, cand, nc);
        return;
    }
    const fd_word *C = c->ext;
    /* Wide rows and a bitset extent (the top of T10I4D100K's tree: 100,000
     * objects): the same filter over the set bits, stopping as soon as no
     * candidate is left instead of visiting every object's row. */
    if (aw > 4) {
        uint32_t first = 0;
        while (!C[first]) first++; /* c->size > 0 */
        const uint32_t o0 = first * 64u + (uint32_t)__builtin_ctzll(C[first]);
        if (sparse_candidates(p, o0, j, B, D, cand, &nc)) {
            for (uint32_t k = first; k < ow && nc; k++) {
                fd_word w = k == first ? C[k] & (C[k] - 1) : C[k]; /* o0 is done */
                for (; w && nc; w &= w - 1) nc = sparse_filter(p, k * 64u + (uint32_t)__builtin_ctzll(w), cand, nc);
            }
            bs_set_ids(D, cand, nc);
            return;
        }
    }
    uint32_t left = p->n_attr - nb - 1;
    if ((uint64_t)c->size * aw <= (uint64_t)left * ow / 4) {
        and_rows_bits(p, C, D);
        return;
    }
    /* Large extent: test C ⊆ col(m) for each attribute not yet in D; most
     * tests stop at the first word. */
    bs_copy(D, B, aw);
    bs_set(D, j);
    for (uint32_t k = 0; k < aw; k++) {
        fd_word todo = p->all[k] & ~D[k];
        while (todo) {
            uint32_t m = k * 64u + (uint32_t)__builtin_ctzll(todo);
            todo &= todo - 1;
            if (bs_subset(C, p->cols + (size_t)m * ow, ow)) D[k] |= (fd_word)1 << (m & 63u);
        }
    }
}

/* A canonical child waiting for its turn.  On wide rows its intent is
 * kept as what it adds to the parent's B ∪ {j} (extra, nextra ids; then
 * nd.intent is NULL) when that list is shorter than the bitset: a sparse
 * context's root holds thousands of children whose intents add nothing or
 * a few attributes, and their bitsets (2 KB each at 16,000 attributes)
 * were most of the search stack: 95 MB to 67 MB peak there. */
typedef struct {
    uint32_t j, nextra;
    uint32_t *extra;
    fnode nd;
} child;

#define COMPACT_CANDIDATES 64

/* The intent of a child kept as its extra ids, in room (aw words). */
static const fd_word *child_intent(const fcbo_prep *p, const child *ch, const fd_word *B, fd_word *room)
{
    if (ch->nd.intent) return ch->nd.intent;
    bs_copy(room, B, p->aw);
    bs_set(room, ch->j);
    bs_set_ids(room, ch->extra, ch->nextra);
    return room;
}

/* Keeps D as the ids it adds to B ∪ {j} when that list is shorter than
 * D; returns 0 when it is not, or on no memory (D is then kept whole).
 * Inlined into process(), whose x86-64-v3 clone has popcnt (else each
 * count was a call into libgcc: a quarter of the run). */
static inline __attribute__((always_inline)) int keep_extra(arena *ar, uint32_t aw, const fd_word *B, uint32_t j, const fd_word *D, child *ch)
{
    uint32_t ne = 0;
    for (uint32_t k = 0; k < aw; k++) ne += (uint32_t)__builtin_popcountll(D[k] & ~B[k]);
    ne--; /* j */
    if ((size_t)ne + 2 > 2 * (size_t)aw) return 0;
    uint32_t *x = arena_alloc(ar, ((size_t)ne + 1) / 2);
    if (!x) return 0;
    uint32_t i = 0;
    for (uint32_t k = 0; k < aw; k++)
        for (fd_word v = D[k] & ~B[k]; v; v &= v - 1) {
            const uint32_t m = k * 64u + (uint32_t)__builtin_ctzll(v);
            if (m != j) x[i++] = m;
        }
    ch->extra = x;
    ch->nextra = ne;
    ch->nd.intent = NULL;
    return 1;
}

static size_t task_size_words(const fcbo_prep *p, const fnode *nd, size_t intent_words, uint32_t nm)
{
    size_t ext = nd->is_bits ? p->ow : ((size_t)nd->size + 1) / 2;
    return TASK_HDR + intent_words + ext + (size_t)nm * (1 + p->aw);
}

static fd_status serialize(fcbo_ws *w, const fnode *nd, uint32_t y, task_list *out)
{
    const fcbo_prep *p = w->p;
    uint32_t nm = 0;
    const uint32_t mend = w->no_failed_sets ? y : p->n_attr;
    const size_t mcap = TASK_FAILED_WORDS / (1 + p->aw);
    for (uint32_t k = y; k < mend && nm < mcap; k++) nm += w->M[k] != NULL;
    uint32_t nids;
    int ids;
    const size_t iw = task_intent_words(p, nd->intent, &nids, &ids);
    size_t words = task_size_words(p, nd, iw, nm);
    uint64_t *t = task_list_begin(out, words);
    if (!t) return fd_fail(FD_ERR_NOMEM, "out of memory for the task list");
    memset(t, 0, words * sizeof *t);
    t[0] = y | (uint64_t)nd->is_bits << 32 | (ids ? TASK_IDS : 0);
    t[1] = nd->size | (uint64_t)nm << 32;
    t[2] = words;
    uint64_t *q = t + TASK_HDR;
    if (ids) {
        q[0] = nids;
        uint32_t *x = (uint32_t *)(q + 1), k = 0;
        BS_FOREACH(m, nd->intent, p->aw, x[k++] = m;);
    } else {
        bs_copy(q, nd->intent, p->aw);
    }
    q += iw;
    if (nd->is_bits) {
        bs_copy(q, nd->ext, p->ow);
        q += p->ow;
    } else {
        memcpy(q, nd->ext, (size_t)nd->size * sizeof(uint32_t));
        q += ((size_t)nd->size + 1) / 2;
    }
    for (uint32_t k = y, i = 0; k < mend && i < nm; k++)
        if (w->M[k]) {
            *q++ = k;
            bs_copy(q, w->M[k], p->aw);
            q += p->aw;
            i++;
        }
    return FD_OK;
}

/* Nodes as tasks without failed sets (the root, a device's nodes):
 * serialize() with a throwaway worker state whose M is empty, made once
 * for all of a call's nodes (a GPU's stack handed back holds 10^5 and
 * more). */
static fd_status plain_ws_init(fcbo_ws *tmp, const fcbo_prep *p)
{
    memset(tmp, 0, sizeof *tmp);
    tmp->p = p;
    tmp->M = calloc((size_t)p->n_attr + 1, sizeof *tmp->M);
    return tmp->M ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory for the task list");
}

/* Loads a task: node and y; M entries point into the task itself. */
static uint32_t deserialize(fcbo_ws *w, const uint64_t *t, fnode *nd)
{
    const fcbo_prep *p = w->p;
    fcbo_task_info ti;
    fcbo_task_info_get(p, t, &ti);
    nd->is_bits = ti.is_bits;
    nd->size = ti.size;
    nd->intent = (fd_word *)fcbo_task_intent(p, &ti, w->task_intent);
    nd->ext = (void *)ti.ext;
    const uint32_t nm = (uint32_t)(t[1] >> 32);
    const uint64_t *q = (const uint64_t *)ti.ext + (ti.is_bits ? p->ow : ((size_t)ti.size + 1) / 2);
    for (uint32_t i = 0; i < nm; i++) {
        w->M[q[0]] = (fd_word *)(q + 1);
        q += 1 + p->aw;
    }
    return ti.y;
}

static void clear_M(fcbo_ws *w, uint32_t y)
{
    for (uint32_t k = y; k < w->p->n_attr; k++) w->M[k] = NULL;
}

/* Occurrence delivery: the extents A ∩ col(j) of all j >= y not in B, in
 * one pass over the rows of A's objects.  start[j-y] .. start[j-y+1] index
 * bucket[]; each bucket is ascending in object id. */
FD_HOT static fd_status deliver(fcbo_ws *w, const fnode *nd, uint32_t y, uint32_t jstar, uint32_t **start_out,
                                  uint32_t **bucket_out, uint32_t **cand_out, uint32_t *ncand_out)
{
    const fcbo_prep *p = w->p;
    uint32_t span = p->n_attr - y;
    uint32_t *start = arena_alloc(&w->ar, ((size_t)span + 2) / 2 * 2 + 1);
    uint32_t *cur = arena_alloc(&w->ar, ((size_t)span + 2) / 2 + 1);
    uint32_t *cand = arena_alloc(&w->ar, ((size_t)span + 2) / 2 + 1);
    if (!start || !cur || !cand) return ARENA_OOM();
    memset(start, 0, ((size_t)span + 1) * sizeof *start);
    const uint32_t *A = nd->ext;
    const fd_word *B = nd->intent;
    for (uint32_t i = 0; i < nd->size; i++) {
        uint32_t o = A[i];
        for (uint64_t k = p->rl_ptr[o]; k < p->rl_ptr[o + 1]; k++) {
            uint32_t m = p->rl_idx[k];
            if (m < y) break;
            start[m - y + 1]++;
        }
    }
    /* Attributes of B hold every object of A and are never candidates. */
    BS_FOREACH(m, B, p->aw, if (m >= y) start[m - y + 1] = 0;);
    /* Candidates: attributes that some object of A has, and j* (whose empty
     * extent may give the bottom concept; see process). */
    uint32_t nc = 0;
    for (uint32_t j = 0; j < span; j++) {
        if (start[j + 1] || j + y == jstar) cand[nc++] = j + y;
        start[j + 1] += start[j];
    }
    uint32_t *bucket = arena_alloc(&w->ar, ((size_t)start[span] + 1) / 2 + 1);
    if (!bucket) return ARENA_OOM();
    memcpy(cur, start, (size_t)span * sizeof *cur);
    for (uint32_t i = 0; i < nd->size; i++) {
        uint32_t o = A[i];
        for (uint64_t k = p->rl_ptr[o]; k < p->rl_ptr[o + 1]; k++) {
            uint32_t m = p->rl_idx[k];
            if (m < y) break;
            if (!bs_test(B, m)) bucket[cur[m - y]++] = o;
        }
    }
    *start_out = start;
    *bucket_out = bucket;
    *cand_out = cand;
    *ncand_out = nc;
    return FD_OK;
}

/* Occurrence delivery into the worker's store, LCM's way (Uno et al.,
 * FIMI 2004): one pass over A's rows, each object appended to the bucket
 * of each of its attributes from y up that B lacks.  The candidates (the
 * attributes delivered to, and j*) come out ascending, from occ_seen.
 * A child at j delivers only to attributes above j, so process() recurses
 * into its children from the last: the buckets of the siblings still to
 * come lie below j and stay as they are.  Against deliver(): no counting
 * pass and no pass over every attribute from y (its prefix sums), which
 * were half of its time on T10I4D100K (bench/results/ab.csv, occ-store).
 * A's size is at most list_max, the buckets' length (else deliver()). */
FD_HOT static fd_status deliver_occ(fcbo_ws *w, const fnode *nd, uint32_t y, uint32_t jstar, uint32_t **cand_out,
                                    uint32_t *ncand_out)
{
    const fcbo_prep *p = w->p;
    const uint32_t span = p->n_attr - y;
    uint32_t *cand = arena_alloc(&w->ar, ((size_t)span + 2) / 2 + 1);
    if (!cand) return ARENA_OOM();
    const uint32_t *A = nd->ext;
    const fd_word *B = nd->intent;
    uint32_t *restrict occ = w->occ, *restrict cnt = w->occ_n;
    fd_word *seen = w->occ_seen;
    const uint64_t *base = p->occ_base;
    for (uint32_t i = 0; i < nd->size; i++) {
        const uint32_t o = A[i];
        for (uint64_t k = p->rl_ptr[o]; k < p->rl_ptr[o + 1]; k++) {
            const uint32_t m = p->rl_idx[k];
            if (m < y) break;
            if (bs_test(B, m)) continue;
            if (!cnt[m]) bs_set(seen, m);
            occ[base[m] + cnt[m]++] = o;
        }
    }
    if (jstar >= y && jstar < p->n_attr) bs_set(seen, jstar); /* as deliver(): j* below y is no candidate */
    uint32_t nc = 0;
    for (uint32_t k = y / 64u; k < p->aw; k++) {
        for (fd_word v = seen[k]; v; v &= v - 1) cand[nc++] = k * 64u + (uint32_t)__builtin_ctzll(v);
        seen[k] = 0;
    }
    *cand_out = cand;
    *ncand_out = nc;
    return FD_OK;
}

/* The sparse layout: A ∩ col(j) for a bitset extent A, from j's object
 * list: a list (on the arena) up to list_max objects, else a bitset.  The
 * list takes room for list_max objects at most, not the column's length:
 * a long column that A cuts short left most of its room unused but
 * touched by the next allocation, and a bitset child kept its whole list
 * below the bits (together 2 MB of the sparse 100k x 16k context's peak). */
static fd_status column_and(fcbo_ws *w, const fnode *nd, uint32_t j, fnode *c)
{
    const fcbo_prep *p = w->p;
    const uint32_t *t = p->cl_idx + p->cl_ptr[j];
    const uint64_t len = p->cl_ptr[j + 1] - p->cl_ptr[j];
    const fd_word *A = nd->ext;
    const uint64_t cap = len < p->list_max ? len : p->list_max;
    const arena_mark before = arena_get(&w->ar);
    uint32_t *l = arena_alloc(&w->ar, ((size_t)cap + 1) / 2 + 1);
    if (!l) return ARENA_OOM();
    uint32_t n = 0;
    uint64_t k = 0;
    for (; k < len; k++) {
        if (!bs_test(A, t[k])) continue;
        if (n == cap) break;
        l[n++] = t[k];
    }
    if (k == len) {
        c->is_bits = 0;
        c->size = n;
        if (n == len) {
            /* A holds the whole column (every child of the root, whose
             * extent is all objects): the child reads the column's own
             * list, which nothing writes, and the copy goes back. */
            c->ext = (void *)t;
            arena_release(&w->ar, before);
        } else {
            c->ext = l;
        }
        return FD_OK;
    }
    fd_word *bits = arena_alloc(&w->ar, p->ow);
    if (!bits) return ARENA_OOM();
    memset(bits, 0, (size_t)p->ow * sizeof *bits);
    bs_set_ids(bits, l, n);
    for (; k < len; k++)
        if (bs_test(A, t[k])) {
            bs_set(bits, t[k]);
            n++;
        }
    c->size = n;
    c->is_bits = 1;
    c->ext = bits;
    return FD_OK;
}

/* Whether fcbo_run_until's caller wants the search to stop here.  Once
 * it has said so, every later child becomes a task: the deepest node's
 * children first, then its parent's, the order in which the search would
 * have entered them. */
static inline int pausing(fcbo_ws *w)
{
    if (w->paused) return 1;
    if (--w->pause_countdown) return 0;
    w->pause_countdown = w->pause_every;
    return w->paused = w->pause(w->pause_arg) != 0;
}

/* One node: emit it, compute its canonical children, then either recurse
 * into them (out == NULL) or append them to out as tasks. */
FD_HOT static fd_status process(fcbo_ws *w, const fnode *nd, uint32_t y, task_list *out)
{
    const fcbo_prep *p = w->p;
    fd_status st = FD_OK;
    /* One part of a shared expansion: part 0 emits the node. */
    const uint32_t nparts = out && w->nparts > 1 ? w->nparts : 1;
    if (nparts == 1 || w->part == 0) FD_TRY(emit(w, nd));
    if (y >= p->n_attr || bs_equal(nd->intent, p->all, p->aw)) return FD_OK;
    if (atomic_load_explicit(&w->sink->failed, memory_order_relaxed)) return FD_ERR_IO;

    const uint32_t aw = p->aw, ow = p->ow, n = p->n_attr;
    const fd_word *B = nd->intent;
    arena_mark mk = arena_get(&w->ar);
    size_t undo0 = w->nundo;
    uint32_t nb = bs_count(B, aw);
    child *q = NULL;
    uint32_t nq = 0;
    uint32_t *start = NULL, *bucket = NULL, *cand = NULL, ncand = n - y;
    fd_word *scratch = NULL, *spare = NULL; /* spare: a closure's room that nothing kept */
    fd_word *room = NULL;                   /* the intent of a child kept as its extra ids */
    int occ = 0;                            /* the children's extents are in the store */
    /* j*: the first attribute not in B.  Only there can an empty extent be
     * canonical (its closure, all attributes, agrees with B below j only if
     * B holds everything below j).  An empty extent at any other j fails,
     * and so would the same j below this node (their extents are subsets of
     * A): skipping it, without recording the failure, changes nothing but
     * the work. */
    uint32_t jstar = n;
    for (uint32_t k = 0; k < aw; k++)
        if (p->all[k] & ~B[k]) { jstar = k * 64u + (uint32_t)__builtin_ctzll(p->all[k] & ~B[k]); break; }
    /* Narrow rows (up to 128 attributes: mushroom, chess): a list node's
     * child extents are found one candidate at a time, after the failed
     * sets' test, by a bit test per object, instead of delivering every
     * candidate's extent first: on mushroom most candidates are pruned
     * (1,022,209 against 266,711 closures), and delivery was 36% of the
     * time (bench/results/ab.csv, label lazy-extents). */
    const int lazy = !nd->is_bits && !p->sparse && aw <= 2;
    occ = !nd->is_bits && !lazy && w->occ && nd->size <= p->list_max;
    uint32_t *lspare = NULL;
    if (occ) FD_TRY_GOTO(deliver_occ(w, nd, y, jstar, &cand, &ncand), st, done);
    else if (!nd->is_bits && !lazy) FD_TRY_GOTO(deliver(w, nd, y, jstar, &start, &bucket, &cand, &ncand), st, done);
    if (!(q = arena_alloc(&w->ar, ((size_t)ncand * sizeof(child) + 7) / 8))) { st = ARENA_OOM(); goto done; }
    /* Children kept as extra ids only where there may be many: the
     * encoding costs two passes over D, which a node with a few children
     * does not win back (sparse 100k x 16k: 0.79 s to 0.95 s when every
     * node did it). */
    const int compact = aw > 4 && ncand > COMPACT_CANDIDATES;

    for (uint32_t ci = 0; ci < ncand; ci++) {
        uint32_t j = cand ? cand[ci] : y + ci;
        /* The bucket's count goes back to 0 at once, whatever becomes of
         * the candidate (the store's invariant between deliveries). */
        uint32_t occ_size = 0;
        if (occ) {
            occ_size = w->occ_n[j];
            w->occ_n[j] = 0;
        }
        if (nparts > 1 && ci % nparts != w->part) continue;
        if (bs_test(B, j)) continue;
        const fd_word *Nj = w->M[j];
        if (Nj && !bs_prefix_subset(Nj, B, j)) {
            w->st.skipped_nj++;
            continue;
        }
        fnode c;
        if (lazy) {
            const uint32_t *A = nd->ext;
            uint32_t *l = lspare ? lspare : arena_alloc(&w->ar, ((size_t)nd->size + 1) / 2 + 1);
            if (!l) { st = ARENA_OOM(); goto done; }
            lspare = l;
            uint32_t k = 0;
            for (uint32_t i = 0; i < nd->size; i++) {
                l[k] = A[i];
                k += bs_test(p->rows + (size_t)A[i] * aw, j);
            }
            c.size = k;
            c.is_bits = 0;
            c.ext = l;
        } else if (nd->is_bits && p->sparse) {
            FD_TRY_GOTO(column_and(w, nd, j, &c), st, done);
        } else if (occ) {
            c.size = occ_size;
            c.is_bits = 0;
            c.ext = w->occ + p->occ_base[j];
        } else if (nd->is_bits) {
            if (!scratch && !(scratch = arena_alloc(&w->ar, ow))) { st = ARENA_OOM(); goto done; }
            c.size = bs_and_count(scratch, nd->ext, p->cols + (size_t)j * ow, ow);
            c.is_bits = 1;
            c.ext = scratch;
        } else {
            c.size = start[j - y + 1] - start[j - y];
            c.is_bits = 0;
            c.ext = bucket + start[j - y];
        }
        if (c.size == 0 && j != jstar) {
            w->st.skipped_empty++;
            continue;
        }
        if (c.size < p->min_support) {
            w->st.skipped_support++;
            continue;
        }
        fd_word *D = spare ? spare : arena_alloc(&w->ar, aw);
        spare = NULL;
        if (!D) { st = ARENA_OOM(); goto done; }
        closure(p, &c, j, B, nb, D, w->cand);
        w->st.closures++;
        if (bs_prefix_equal(D, B, j)) {
            c.intent = D;
            if (c.is_bits && !p->sparse) {
                if (c.size <= p->list_max) {
                    uint32_t *l = arena_alloc(&w->ar, ((size_t)c.size + 1) / 2 + 1);
                    if (!l) { st = ARENA_OOM(); goto done; }
                    bs_to_list(scratch, ow, l);
                    c.ext = l;
                    c.is_bits = 0;
                } else {
                    scratch = NULL; /* the child keeps it */
                }
            }
            if (lazy) lspare = NULL; /* the child keeps its list */
            q[nq] = (child){j, 0, NULL, c};
            if (compact && keep_extra(&w->ar, aw, B, j, D, &q[nq])) spare = D;
            nq++;
        } else {
            w->st.fails++;
            if (w->mwords + aw > FAILED_SET_WORDS) { /* over the budget: not kept */
                spare = D;
                continue;
            }
            if (w->nundo == w->capundo &&
                fd_grow((void **)&w->undo, &w->capundo, w->nundo + 1, sizeof *w->undo) != FD_OK) {
                st = FD_ERR_NOMEM;
                goto done;
            }
            w->undo[w->nundo++] = (undo_rec){j, w->M[j]};
            w->M[j] = D;
            w->mwords += aw;
        }
    }
    for (uint32_t i = 0; i < nq; i++) {
        /* Children in the store: the last first (deliver_occ). */
        const child *ch = &q[occ && !out ? nq - 1 - i : i];
        fnode cn = ch->nd;
        if (!cn.intent) {
            if (!room && !(room = arena_alloc(&w->ar, aw))) { st = ARENA_OOM(); goto done; }
            cn.intent = (fd_word *)child_intent(p, ch, B, room);
        }
        if (out) FD_TRY_GOTO(serialize(w, &cn, ch->j + 1, out), st, done);
        else if (w->pause && pausing(w)) FD_TRY_GOTO(serialize(w, &cn, ch->j + 1, w->frontier), st, done);
        else FD_TRY_GOTO(process(w, &cn, ch->j + 1, NULL), st, done);
    }
done:
    if (occ && st != FD_OK) /* a loop left early: the store's counts back to 0 */
        for (uint32_t ci = 0; ci < ncand; ci++) w->occ_n[cand[ci]] = 0;
    w->mwords -= (w->nundo - undo0) * aw;
    while (w->nundo > undo0) {
        w->nundo--;
        w->M[w->undo[w->nundo].j] = w->undo[w->nundo].old;
    }
    arena_release(&w->ar, mk);
    return st;
}

fd_status fcbo_root(const fcbo_prep *p, task_list *out)
{
    if (p->n_obj < p->min_support) return FD_OK;
    fnode nd;
    fd_status st = FD_OK;
    fd_word *intent = NULL, *bits = NULL;
    uint32_t *list = NULL;
    FD_ALLOC_GOTO(intent, p->aw, st, done);
    for (uint32_t m = 0; m < p->n_attr; m++)
        if (p->supp[m] == p->n_obj) bs_set(intent, m);
    nd.intent = intent;
    nd.size = p->n_obj;
    if (p->n_obj > p->list_max) {
        FD_ALLOC_GOTO(bits, p->ow, st, done);
        bs_fill(bits, p->n_obj);
        nd.is_bits = 1;
        nd.ext = bits;
    } else {
        FD_ALLOC_GOTO(list, (size_t)p->n_obj + 1, st, done);
        for (uint32_t o = 0; o < p->n_obj; o++) list[o] = o;
        nd.is_bits = 0;
        nd.ext = list;
    }
    fcbo_ws plain;
    FD_TRY_GOTO(plain_ws_init(&plain, p), st, done);
    st = serialize(&plain, &nd, 0, out);
    free(plain.M);
done:
    free(intent);
    free(bits);
    free(list);
    return st;
}

fd_status fcbo_tasks_from_nodes(const fcbo_prep *p, uint64_t n, const fd_word *intents, const uint32_t *y,
                                const uint32_t *size, const uint32_t *ext, task_list *out)
{
    fd_status st = FD_OK;
    fd_word *bits = NULL;
    fcbo_ws plain = {0};
    FD_ALLOC_GOTO(bits, p->ow, st, done);
    FD_TRY_GOTO(plain_ws_init(&plain, p), st, done);
    for (uint64_t i = 0, from = 0; i < n && st == FD_OK; from += size[i], i++) {
        /* The CPU's form for an extent of this size: a bitset past
         * list_max (the occurrence lists stop there), else the ids. */
        fnode nd = {.size = size[i], .is_bits = size[i] > p->list_max, .ext = (void *)(ext + from),
                    .intent = (fd_word *)(intents + i * p->aw)};
        if (nd.is_bits) {
            bs_zero(bits, p->ow);
            bs_set_ids(bits, ext + from, size[i]);
            nd.ext = bits;
        }
        st = serialize(&plain, &nd, y[i], out);
    }
done:
    free(plain.M);
    free(bits);
    return st;
}

fd_status fcbo_expand(fcbo_ws *w, const uint64_t *task, task_list *out)
{
    fnode nd;
    uint32_t y = deserialize(w, task, &nd);
    fd_status st = process(w, &nd, y, out);
    clear_M(w, y);
    return st;
}

fd_status fcbo_run(fcbo_ws *w, const uint64_t *task)
{
    fnode nd;
    uint32_t y = deserialize(w, task, &nd);
    fd_status st = process(w, &nd, y, NULL);
    clear_M(w, y);
    w->st.tasks++;
    return st;
}

void fcbo_ws_set_pause_every(fcbo_ws *w, uint32_t n) { w->pause_every = n ? n : 1; }

fd_status fcbo_run_until(fcbo_ws *w, const uint64_t *task, fcbo_pause_fn pause, void *arg, task_list *frontier)
{
    w->pause = pause;
    w->pause_arg = arg;
    w->pause_countdown = 1; /* asked before the first child */
    w->paused = 0;
    w->frontier = frontier;
    fd_status st = fcbo_run(w, task);
    w->pause = NULL;
    w->frontier = NULL;
    return st;
}

typedef struct {
    double cost;
    size_t i;
} costed;

static int by_cost_desc(const void *x, const void *y)
{
    const costed *a = x, *b = y;
    if (a->cost != b->cost) return a->cost > b->cost ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Keeps the tasks not marked dead, largest first, so that the long
 * subtrees start early and the short ones fill the gaps at the end. */
static fd_status keep_by_cost(const fcbo_prep *p, task_list *tasks, const unsigned char *dead, size_t ndead)
{
    fd_status st = FD_OK;
    task_list out;
    task_list_init(&out);
    costed *idx = NULL;
    FD_ALLOC_GOTO(idx, tasks->n + 1, st, done);
    size_t k = 0;
    for (size_t i = 0; i < tasks->n; i++)
        if (!(i < ndead && dead[i])) idx[k++] = (costed){fcbo_task_cost(p, task_at(tasks, i)), i};
    qsort(idx, k, sizeof *idx, by_cost_desc);
    for (size_t i = 0; i < k; i++) FD_TRY_GOTO(task_list_push(&out, task_at(tasks, idx[i].i)), st, done);
    task_list tmp = *tasks;
    *tasks = out;
    out = tmp;
done:
    free(idx);
    task_list_free(&out);
    return st;
}

static fd_status expand_one(void *w, const uint64_t *task, task_list *out) { return fcbo_expand(w, task, out); }

fd_status fcbo_split(fcbo_ws *w, task_list *tasks, size_t target)
{
    return fcbo_split_by(w->p, tasks, target, expand_one, w);
}

fd_status fcbo_split_by(const fcbo_prep *p, task_list *tasks, size_t target, fcbo_expander expand, void *ctx)
{
    fd_status st = FD_OK;
    task_list next;
    unsigned char *dead = NULL;
    size_t live = tasks->n, capdead = 0;
    task_list_init(&next);
    /* Expand the most expensive task until there are enough.  Expanding
     * whole levels instead would run a whole level serially when it falls
     * just short of the target (T10I4D100K: 870 root children, then all of
     * the second level for 16 threads). */
    while (live > 0 && live < target) {
        size_t best = SIZE_MAX;
        double bc = 0;
        for (size_t i = 0; i < tasks->n; i++) {
            if (i < capdead && dead[i]) continue;
            double c = fcbo_task_cost(p, task_at(tasks, i));
            if (c > bc) { bc = c; best = i; }
        }
        if (best == SIZE_MAX) break; /* only leaves left */
        task_list_clear(&next);
        FD_TRY_GOTO(expand(ctx, task_at(tasks, best), &next), st, done);
        FD_TRY_GOTO(fd_grow((void **)&dead, &capdead, tasks->n + next.n, 1), st, done);
        memset(dead + tasks->n, 0, capdead - tasks->n);
        dead[best] = 1;
        for (size_t i = 0; i < next.n; i++) FD_TRY_GOTO(task_list_push(tasks, task_at(&next, i)), st, done);
        live += next.n - 1;
    }
    st = keep_by_cost(p, tasks, dead, capdead);
done:
    free(dead);
    task_list_free(&next);
    return st;
}
