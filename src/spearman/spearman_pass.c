/* SPDX-License-Identifier: BSD-3-Clause */
/* The passes over the pair matrix of a spearman run (spearman_pass.h):
 * the work records, one round of the task pool per pass, each record's
 * tiles through the backend, the selected pairs kept, written or
 * collected. */
#include "spearman_pass.h"

#include "../common/clock.h"
#include "../common/interrupt.h"
#include "../common/par_rows.h"
#include "../io/h5util.h"
#include "../job/ckpt.h"
#include "../mpi/taskpool.h"
#include "pvalue.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- work records: block-row segments ---------------- */

typedef struct {
    uint64_t *data;
    size_t *start, n;
} seglist;

/* A record: {first row block, first and end column block, row blocks}.
 * It names its row blocks itself, so that a resumed run on another
 * backend reads the saved list the same way. */
#define REC_WORDS 4
/* --top-k on a GPU: 64 blocks (16,384 rows) a record, as far as the heaps
 * stay within 4 Mi entries: each launch then hands the heaps enough pairs
 * to share among the host threads, and its first, narrow runs of columns
 * still fill the GPU. */
uint64_t spearman_rows_per_record(const spearman_run *jb)
{
    const uint64_t r = jb->ops->record_blocks;
    if (jb->o->mode != 'k' || r <= 1) return r;
    const uint64_t fit = (4u << 20) / ((uint64_t)jb->o->value * BLOCK);
    return fit >= 4 * r ? 4 * r : fit > r ? fit : r;
}

int spearman_record_valid(const void *arg, const uint64_t *rec, size_t words)
{
    const spearman_run *jb = arg;
    const uint64_t nbx = (jb->x->rows + BLOCK - 1) / BLOCK, nby = (jb->y->rows + BLOCK - 1) / BLOCK;
    return words == REC_WORDS && rec[0] < nbx && rec[1] < rec[2] && rec[2] <= nby && rec[3] >= 1 && rec[3] <= nbx;
}

static fd_status make_segments(const spearman_run *jb, int workers, seglist *s)
{
    uint64_t nbx = (jb->x->rows + BLOCK - 1) / BLOCK, nby = (jb->y->rows + BLOCK - 1) / BLOCK;
    int tri = jb->x == jb->y;
    const uint64_t R = spearman_rows_per_record(jb);
    uint64_t tiles = tri ? nbx * (nbx + 1) / 2 : nbx * nby;
    /* At least 64 records per worker of the whole job, when there are
     * enough tiles: the costliest go first and the short ones even out
     * the finish. */
    uint64_t len = tiles / (64 * (uint64_t)workers * R);
    if (len < 1) len = 1;
    /* --top-k: a record is a block of rows against every row, so that each
     * row's heap is complete when the record ends (the triangle is
     * computed twice instead of merging heaps across ranks). */
    if (jb->o->mode == 'k') {
        tri = 0;
        len = nby;
    }
    size_t cap = 0, n = 0;
    for (uint64_t ib = 0; ib < nbx; ib += R) {
        uint64_t j0 = tri ? ib : 0;
        for (uint64_t j = j0; j < nby; j += len) n++;
    }
    cap = n;
    s->data = malloc((cap + 1) * REC_WORDS * sizeof *s->data);
    s->start = malloc((cap + 1) * sizeof *s->start);
    if (!s->data || !s->start) return fd_fail(FD_ERR_NOMEM, "out of memory for %zu tile records", cap);
    s->n = 0;
    for (uint64_t ib = 0; ib < nbx; ib += R) {
        uint64_t j0 = tri ? ib : 0;
        for (uint64_t j = j0; j < nby; j += len) {
            uint64_t *r = s->data + s->n * REC_WORDS;
            s->start[s->n] = s->n * REC_WORDS;
            r[0] = ib;
            r[1] = j;
            r[2] = j + len < nby ? j + len : nby;
            r[3] = R;
            s->n++;
        }
    }
    return FD_OK;
}

/* ---------------- the two passes ---------------- */

/* Writes a thread's selected pairs: rho and p are computed here, outside
 * the lock; only the append is serialised. */
static fd_status collect_x(spearman_run *jb, spearman_acc *a)
{
    fd_status st = FD_OK;
    pthread_mutex_lock(&jb->lock);
    for (size_t k = 0; k < a->nout && st == FD_OK; k++) {
        const spair *q = &a->out[k];
        double x;
        const int b = spearman_pair_bin(jb->x, jb->y, &jb->sel, a, q->i, q->j, q->s, &x); /* spearman_fdr.c */
        if (b < jb->bin_lo || b > jb->bin_hi) continue;
        st = fd_grow((void **)&jb->xs, &jb->capxs, jb->nxs + 1, sizeof *jb->xs);
        if (st == FD_OK) jb->xs[jb->nxs++] = x;
    }
    pthread_mutex_unlock(&jb->lock);
    a->nout = 0;
    return st;
}

typedef struct {
    const spearman_run *jb;
    const spair *q;
    uint64_t *ii, *jj;
    float *rho;
    double *p;
} pair_values;

static fd_status values_rows(void *ctx, uint64_t k0, uint64_t k1, int thread)
{
    const pair_values *v = ctx;
    const spearman_run *jb = v->jb;
    (void)thread;
    for (uint64_t k = k0; k < k1; k++) {
        const spair *q = &v->q[k];
        int64_t s = q->s, sii, sjj;
        const int dof = smat_pair_stats(jb->x, jb->y, q->i, q->j, &s, &sii, &sjj, jb->sel.dof);
        v->ii[k] = smat_id(jb->x, q->i);
        v->jj[k] = smat_id(jb->y, q->j);
        v->rho[k] = (float)spearman_rho(s, sii, sjj);
        v->p[k] = jb->x->ties ? kendall_p_tab(&jb->ktab, s, &jb->x->ties[q->i], &jb->y->ties[q->j])
                              : spearman_p_of_x(pair_x(s, sii, sjj), dof);
    }
    return FD_OK;
}

fd_status spearman_write_pairs(spearman_run *jb, spearman_h5 *h5, const spair *q0, size_t n)
{
    fd_status st = FD_OK;
    if (n == 0) return FD_OK;
    pair_values v = {jb, q0, malloc(n * sizeof *v.ii), malloc(n * sizeof *v.jj), malloc(n * sizeof *v.rho),
                     malloc(n * sizeof *v.p)};
    if (!v.ii || !v.jj || !v.rho || !v.p) { st = fd_fail(FD_ERR_NOMEM, "out of memory for %zu pairs", n); goto done; }
    /* A p-value is a continued fraction of a microsecond or two: a GPU
     * rank writing millions of pairs (--top-k) spreads them over its
     * cores; a few go on the worker alone. */
    st = n >= 65536 && jb->host_threads > 1 ? par_rows_chunk(jb->host_threads, 0, n, 8192, values_rows, &v, NULL)
                                             : values_rows(&v, 0, n, 0);
    if (st != FD_OK) goto done;
    pthread_mutex_lock(&jb->lock);
    if (h5) st = spearman_h5_append(h5, v.ii, v.jj, v.rho, v.p, n);
    pthread_mutex_unlock(&jb->lock);
done:
    free(v.ii);
    free(v.jj);
    free(v.rho);
    free(v.p);
    return st;
}

/* A thread's selected pairs: into its checkpoint segment, or the part. */
static fd_status flush_pairs(spearman_run *jb, int t, spearman_acc *a)
{
    if (a->nout == 0) return FD_OK;
    if (jb->collect) return collect_x(jb, a);
    if (jb->hooks && jb->stage) return jb->hooks->flush(jb, t, a);
    fd_status st = spearman_write_pairs(jb, jb->h5, a->out, a->nout);
    a->nout = 0;
    return st;
}

/* Pass 1 keeping pairs: past the thread's share of the budget (or
 * another thread's, or when the backend had to stop emitting), keeping
 * stops on every thread and pass 2 will write the pairs. */
static void keep_check(spearman_run *jb, int t, spearman_acc *a)
{
    if (!a->keep_over && a->nout <= a->keep_cap && !atomic_load(&jb->kept_over)) return;
    atomic_store(&jb->kept_over, 1);
    jb->obuf[t] = a->out;
    jb->obufcap[t] = a->capout;
    a->out = NULL;
    a->nout = 0;
    a->keep_cap = 0;
}

/* Writes what pass 1 kept, FLUSH_PAIRS at a time. */
fd_status spearman_write_kept(spearman_run *jb)
{
    fd_status st = FD_OK;
    for (int t = 0; t < jb->threads && st == FD_OK; t++)
        for (size_t off = 0; off < jb->nkept[t] && st == FD_OK; off += FLUSH_PAIRS) {
            spearman_acc part = jb->acc[t];
            part.out = jb->obuf[t] + off;
            part.nout = jb->nkept[t] - off < FLUSH_PAIRS ? jb->nkept[t] - off : FLUSH_PAIRS;
            st = flush_pairs(jb, t, &part);
        }
    return st;
}

/* The thread's accumulator is copied to the stack for the record: the
 * array of them shares cache lines, and counters bumped for every 8 pairs
 * in shared lines cost more than the pairs (16 threads ran 5x faster than
 * one instead of 16x). */
static fd_status run_record(void *arg, int t, uint64_t id, const uint64_t *rec, size_t len)
{
    h5u_quiet(); /* a pool thread: it writes pairs */
    spearman_run *jb = arg;
    spearman_acc local = jb->acc[t], *a = &local;
    fd_status st = FD_OK;
    (void)len;
    double t0 = fd_now();
    uint64_t before = a->pairs;
    const uint64_t rows = rec[3] * BLOCK;
    uint64_t i0 = rec[0] * BLOCK, i1 = i0 + rows < jb->x->rows ? i0 + rows : jb->x->rows;
    int topk = jb->o->mode == 'k';
    if (topk) {
        a->topk = &jb->topk[t];
        st = spearman_topk_reset(a->topk, i0, (uint32_t)(i1 - i0), jb->x == jb->y);
    }
    const uint64_t step = jb->ops->rect_blocks ? jb->ops->rect_blocks : rec[2] - rec[1];
    for (uint64_t b = rec[1]; st == FD_OK && b < rec[2]; b += step) {
        uint64_t j0 = b * BLOCK, j1 = (b + step) * BLOCK < jb->y->rows ? (b + step) * BLOCK : jb->y->rows;
        /* Within x only j > i counts: it matters where the columns reach
         * back into the record's rows. */
        int upper = !topk && jb->x == jb->y && j0 < i1;
        st = jb->ops->rect(jb->dev, jb->x, jb->y, i0, i1, j0, j1, upper, &jb->sel, a);
        if (st == FD_OK && a->failed) st = fd_fail(FD_ERR_NOMEM, "out of memory buffering selected pairs");
        if (st == FD_OK && a->keep_cap) keep_check(jb, t, a);
        else if (st == FD_OK && a->out && a->nout >= FLUSH_PAIRS) st = flush_pairs(jb, t, a);
    }
    if (topk && st == FD_OK) {
        spearman_topk_emit(a->topk, a);
        if (a->failed) st = fd_fail(FD_ERR_NOMEM, "out of memory buffering selected pairs");
        else if (a->nout >= FLUSH_PAIRS) st = flush_pairs(jb, t, a);
    }
    a->topk = NULL;
    if (st == FD_OK && jb->hooks && jb->stage) st = jb->hooks->record_done(jb, t, a, id);
    jb->acc[t] = local;
    fd_progress_add(&jb->prog, a->pairs - before);
    jb->busy[t] += fd_now() - t0;
    jb->records[t]++;
    return st;
}

/* One pass over all tiles.  emit = 0: count the selected pairs and fill
 * the histograms (pass 1); emit = 1: hand the selected pairs to
 * flush_pairs, which writes them (or, when jb->collect, keeps their x). */
fd_status spearman_pass(spearman_run *jb, int emit)
{
    fd_status st = FD_OK;
    fd_pool *pool = NULL;
    seglist segs = {0};
    const int keep = !emit && jb->keep_pairs;
    fd_records todo = {0};
    if (keep) atomic_store(&jb->kept_over, 0);
    jb->stage = !emit ? 1 : jb->collect ? 0 : 2;
    for (int t = 0; t < jb->threads; t++) {
        spearman_acc *a = &jb->acc[t];
        a->pairs = a->selected = 0;
        a->nout = 0;
        a->failed = 0;
        a->hist = emit || jb->o->no_hist ? NULL : jb->hbuf[t];
        a->xhist = emit || !jb->xhist ? NULL : jb->xbuf[t];
        a->xbins = FDR_BINS;
        a->xscale = jb->xscale;
        a->pedge = jb->pedge;
        /* The kernels emit only into an existing buffer (out != NULL). */
        if ((emit || keep) && !jb->obuf[t]) {
            jb->obuf[t] = malloc(2 * FLUSH_PAIRS * sizeof(spair));
            jb->obufcap[t] = jb->obuf[t] ? 2 * FLUSH_PAIRS : 0;
            if (!jb->obuf[t]) st = fd_fail(FD_ERR_NOMEM, "out of memory for the pair buffers");
        }
        a->out = emit || keep ? jb->obuf[t] : NULL;
        a->capout = emit || keep ? jb->obufcap[t] : 0;
        a->keep_cap = keep ? jb->keep_pairs / (uint64_t)jb->threads + 1 : 0;
        a->keep_over = 0;
        if (jb->hooks) jb->hooks->pass_start(jb, t);
        if (a->hist) memset(a->hist, 0, SPEARMAN_HIST_BINS * sizeof *a->hist);
        if (a->xhist) memset(a->xhist, 0, FDR_BINS * sizeof *a->xhist);
    }
    FD_TRY_GOTO(fd_pool_create(&pool, jb->threads, &jb->failed), st, done);
    if (fd_pool_rank(pool) == 0) {
        /* A checkpointed run saves its first list (or loads it) and hands
         * out what is not done yet. */
        st = make_segments(jb, fd_pool_total_workers(pool), &segs);
        fd_records recs = {segs.data, segs.start, segs.n, segs.n * REC_WORDS, NULL};
        if (st == FD_OK && jb->hooks) {
            st = jb->hooks->list(jb, &recs, &todo);
            recs = todo;
        }
        if (st != FD_OK) {
            atomic_store(&jb->failed, 1);
            recs = (fd_records){0};
        }
        fd_pool_set_work(pool, &recs);
    }
    fd_status wst = fd_pool_work(pool, jb->threads, run_record, jb, &jb->prog);
    if (st == FD_OK) st = wst;
    /* Segments commit while the threads' buffers still hold what pass 1
     * kept. */
    if (st == FD_OK && jb->hooks && jb->stage) st = jb->hooks->pass_end(jb);
    /* Interrupted: what finished is committed above; the pass is not
     * whole. */
    if (st == FD_OK) st = fd_interrupt_check();
    for (int t = 0; t < jb->threads; t++) {
        spearman_acc *a = &jb->acc[t];
        if (emit && st == FD_OK) st = flush_pairs(jb, t, a);
        jb->pairs += a->pairs;
        jb->selected += a->selected;
        for (int k = 0; a->hist && k < SPEARMAN_HIST_BINS; k++) jb->hist[k] += a->hist[k];
        for (uint32_t k = 0; a->xhist && k < FDR_BINS; k++) jb->xhist[k] += a->xhist[k];
        if ((emit || keep) && a->out) {
            jb->obuf[t] = a->out; /* emit() may have moved it */
            jb->obufcap[t] = a->capout;
        }
        if (keep) jb->nkept[t] = a->out ? a->nout : 0;
        a->out = NULL;
        a->keep_cap = 0;
    }
done:
    fd_pool_destroy(&pool);
    free(segs.data);
    free(segs.start);
    ckpt_records_free(&todo);
    return st;
}

