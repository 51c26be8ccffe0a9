/* One spearman run on every rank, as the stages of the job skeleton
 * (job/job.h): read and rank (every rank the same input), setup, then the
 * run: pass 1 (counts and histograms, reduced over ranks), the output
 * size check, pass 2 (writing pairs to this rank's part); commit (parts,
 * then rank 0's master).  Each step ends in an agreement of all ranks
 * (docs/architecture.md). */
#include "spearman_job_impl.h"

#include "../common/clock.h"
#include "../common/env.h"
#include "../common/interrupt.h"
#include "../common/par_rows.h"
#include "../common/progress.h"
#include "../job/h5part.h"
#include "../io/h5util.h"
#include "../job/job.h"
#include "../mpi/taskpool.h"
#include "spearman_read.h"
#include "pvalue.h"
#include "spearman_backend.h"
#include "spearman_h5.h"
#include "tile.h"

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
static uint64_t rows_per_record(const job *jb)
{
    const uint64_t r = jb->ops->record_blocks;
    if (jb->o->mode != 'k' || r <= 1) return r;
    const uint64_t fit = (4u << 20) / ((uint64_t)jb->o->value * BLOCK);
    return fit >= 4 * r ? 4 * r : fit > r ? fit : r;
}

static fd_status make_segments(const job *jb, int workers, seglist *s)
{
    uint64_t nbx = (jb->x->rows + BLOCK - 1) / BLOCK, nby = (jb->y->rows + BLOCK - 1) / BLOCK;
    int tri = jb->x == jb->y;
    const uint64_t R = rows_per_record(jb);
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
static fd_status collect_x(job *jb, spearman_acc *a)
{
    fd_status st = FD_OK;
    pthread_mutex_lock(&jb->lock);
    for (size_t k = 0; k < a->nout && st == FD_OK; k++) {
        const spair *q = &a->out[k];
        double x = pair_x(q->s, jb->x->sii[q->i], jb->y->sii[q->j]);
        int b = spearman_xbin(a, x);
        if (b < jb->bin_lo || b > jb->bin_hi) continue;
        st = fd_grow((void **)&jb->xs, &jb->capxs, jb->nxs + 1, sizeof *jb->xs);
        if (st == FD_OK) jb->xs[jb->nxs++] = x;
    }
    pthread_mutex_unlock(&jb->lock);
    a->nout = 0;
    return st;
}

typedef struct {
    const job *jb;
    const spair *q;
    uint64_t *ii, *jj;
    float *rho;
    double *p;
} pair_values;

static fd_status values_rows(void *ctx, uint64_t k0, uint64_t k1, int thread)
{
    const pair_values *v = ctx;
    const job *jb = v->jb;
    (void)thread;
    for (uint64_t k = k0; k < k1; k++) {
        const spair *q = &v->q[k];
        int64_t sii = jb->x->sii[q->i], sjj = jb->y->sii[q->j];
        v->ii[k] = smat_id(jb->x, q->i);
        v->jj[k] = smat_id(jb->y, q->j);
        v->rho[k] = (float)spearman_rho(q->s, sii, sjj);
        v->p[k] = spearman_p_of_x(pair_x(q->s, sii, sjj), jb->sel.dof);
    }
    return FD_OK;
}

fd_status spearman_write_pairs(job *jb, spearman_h5 *h5, const spair *q0, size_t n)
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
static fd_status flush_pairs(job *jb, int t, spearman_acc *a)
{
    if (a->nout == 0) return FD_OK;
    if (jb->collect) return collect_x(jb, a);
    if (jb->ck && jb->stage) return spearman_ckpt_flush(jb, t, a);
    fd_status st = spearman_write_pairs(jb, jb->h5, a->out, a->nout);
    a->nout = 0;
    return st;
}

/* Pass 1 keeping pairs: past the thread's share of the budget (or
 * another thread's, or when the backend had to stop emitting), keeping
 * stops on every thread and pass 2 will write the pairs. */
static void keep_check(job *jb, int t, spearman_acc *a)
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
static fd_status write_kept(job *jb)
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
    job *jb = arg;
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
    if (st == FD_OK) st = spearman_ckpt_record_done(jb, t, a, id);
    jb->acc[t] = local;
    fd_progress_add(&jb->prog, a->pairs - before);
    jb->busy[t] += fd_now() - t0;
    jb->records[t]++;
    return st;
}

/* One pass over all tiles.  emit = 0: count the selected pairs and fill
 * the histograms (pass 1); emit = 1: hand the selected pairs to
 * flush_pairs, which writes them (or, when jb->collect, keeps their x). */
fd_status spearman_pass(job *jb, int emit)
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
        if (jb->seg) spearman_ckpt_pass_start(jb, t);
        if (a->hist) memset(a->hist, 0, SPEARMAN_HIST_BINS * sizeof *a->hist);
        if (a->xhist) memset(a->xhist, 0, FDR_BINS * sizeof *a->xhist);
    }
    FD_TRY_GOTO(fd_pool_create(&pool, jb->threads, &jb->failed), st, done);
    if (fd_pool_rank(pool) == 0) {
        /* A checkpointed run makes its list once (or loads it) and hands
         * out what is not done yet. */
        if (!jb->ck || !jb->recs.data) st = make_segments(jb, fd_pool_total_workers(pool), &segs);
        fd_records recs = {segs.data, segs.start, segs.n, segs.n * REC_WORDS, NULL};
        if (st == FD_OK && jb->ck) {
            st = spearman_ckpt_list(jb, &recs, &todo);
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
    if (st == FD_OK) st = spearman_ckpt_pass_end(jb);
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

/* ---------------- the stages ---------------- */

/* How many selected pairs pass 1 may keep: only --pvalue and --rho
 * write them without a later pass of their own (--fdr needs its cutoff
 * first); FD_SPEARMAN_KEEP_PAIRS replaces KEEP_PAIRS (0: always two
 * passes). */
static fd_status keep_budget(const spearman_opts *o, uint64_t *keep)
{
    FD_TRY(fd_env_count("FD_SPEARMAN_KEEP_PAIRS", 0, UINT64_MAX, KEEP_PAIRS, "pairs (0: two passes)", keep));
    if ((o->mode != 'p' && o->mode != 'r') || o->count_only || !o->outdir) *keep = 0;
    return FD_OK;
}

/* Work in progress goes to DIR/checkpoint (spearman_ckpt.c). */
static int checkpointed(const spearman_opts *o) { return o->outdir && o->checkpoint_seconds > 0 && !o->check_input; }

/* ---------------- the stages (job/job.h) ---------------- */

static fd_status validate(fd_job *j)
{
    job *jb = j->w;
    jb->mpi = j->mpi;
    jb->out = &j->out;
    jb->t0 = j->t0;
    return keep_budget(jb->o, &jb->keep_pairs);
}

/* Reads and ranks x (and y).  Every rank must hold the same ranks:
 * compared by their digest (0.16 s for 9.9 million rows on the dev VM's 2
 * cores, one-off; it hashes in parallel) rather than by the file's
 * SHA-256, which a .npy or HDF5 reader leaves computing (on 16 cores it
 * took longer than reading and ranking): that is joined at the commit
 * (input_hashes), after the passes.  Checkpoints record it; a lone rank
 * without them has no use for it. */
static fd_status read_inputs(fd_job *j)
{
    job *jb = j->w;
    const spearman_opts *o = jb->o;
    FD_TRY(spearman_read(&jb->x, o->input, o->drop_nan, o->header, j->threads));
    if (o->y_input) FD_TRY(spearman_read(&jb->y, o->y_input, o->drop_nan, o->header, j->threads));
    const int digest = j->mpi.size > 1 || checkpointed(o);
    if (digest) FD_TRY(smat_digest(jb->x, j->threads));
    if (digest && jb->y) FD_TRY(smat_digest(jb->y, j->threads));
    return FD_OK;
}

static fd_status same_inputs(fd_job *j)
{
    job *jb = j->w;
    const spearman_opts *o = jb->o;
    FD_TRY(fd_mpi_same_digest(jb->x->digest, o->input));
    if (!jb->y) {
        jb->y = jb->x;
        return FD_OK;
    }
    FD_TRY(fd_mpi_same_digest(jb->y->digest, o->y_input));
    if (jb->y->n != jb->x->n)
        return fd_fail(FD_ERR_INPUT, "%s has %u observations per row but %s has %u", o->input, jb->x->n, o->y_input,
                       jb->y->n);
    return FD_OK;
}

/* The same input on every rank (checked above), so either every rank
 * falls back or none does. */
static const fd_device_ops *backend_for(fd_job *j)
{
    job *jb = j->w;
    if (!jb->ops->supports || jb->ops->supports(jb->o->mode, jb->x->n)) return j->dev;
    if (fd_job_speaks(j))
        fprintf(stderr, "fcbo-dist spearman: rows of %u values run on the CPU backend (%s takes up to 128)\n",
                jb->x->n, jb->ops->dev.name);
    jb->ops = &spearman_cpu_ops;
    return &spearman_cpu_ops.dev;
}

/* The backend's state (a GPU's resident rank matrix), the selection, the
 * threads' buffers, the checkpoint.  A GPU rank is one worker thread
 * driving its device; its cores do the host-side work of the pairs it
 * writes. */
static fd_status setup(fd_job *j)
{
    job *jb = j->w;
    const spearman_opts *o = jb->o;
    fd_status st = FD_OK;
    jb->device = j->device;
    const int gpu = jb->ops->dev.devices != NULL;
    jb->threads = gpu ? 1 : j->threads;
    jb->host_threads = gpu ? j->threads : 1;
    if (jb->ops->open && !o->check_input) st = jb->ops->open(&jb->dev, jb->x, jb->y, jb->device, jb->host_threads);
    FD_TRY(fd_mpi_agree(st, NULL));
    jb->load_s = fd_now() - jb->t0;
    /* --fdr Q: pass 1 selects p <= Q, where every BH cutoff lies.
     * --top-k: every pair is a candidate for the heaps. */
    spearman_sel_init(&jb->sel, o->mode == 'f' ? 'p' : o->mode == 'k' ? 'a' : o->mode, o->value, jb->x->n);
    size_t T = (size_t)jb->threads;
    jb->acc = calloc(T, sizeof *jb->acc);
    jb->busy = calloc(T, sizeof *jb->busy);
    jb->records = calloc(T, sizeof *jb->records);
    jb->hbuf = calloc(T, sizeof *jb->hbuf);
    jb->xbuf = calloc(T, sizeof *jb->xbuf);
    jb->obuf = calloc(T, sizeof *jb->obuf);
    jb->obufcap = calloc(T, sizeof *jb->obufcap);
    jb->nkept = calloc(T, sizeof *jb->nkept);
    if (!jb->acc || !jb->busy || !jb->records || !jb->hbuf || !jb->xbuf || !jb->obuf || !jb->obufcap || !jb->nkept)
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st == FD_OK && o->mode == 'k') {
        FD_ALLOC_GOTO(jb->topk, T, st, done);
        const uint32_t rows = (uint32_t)(rows_per_record(jb) * BLOCK);
        for (size_t k = 0; k < T; k++)
            FD_TRY_GOTO(spearman_topk_init(&jb->topk[k], (uint32_t)o->value, rows), st, done);
    }
    if (st == FD_OK && o->mode == 'f') {
        FD_ALLOC_GOTO(jb->xhist, FDR_BINS, st, done);
        jb->xscale = FDR_BINS / fmax(1 - jb->sel.q, 1e-300);
    }
    for (size_t k = 0; st == FD_OK && k < T; k++) {
        FD_ALLOC_GOTO(jb->hbuf[k], SPEARMAN_HIST_BINS, st, done);
        if (o->mode == 'f') FD_ALLOC_GOTO(jb->xbuf[k], FDR_BINS, st, done);
    }
done:
    FD_TRY(fd_mpi_agree(st, NULL));
    return checkpointed(o) ? spearman_ckpt_open(jb) : FD_OK;
}

static fd_status reduce_counts(job *jb)
{
    fd_status st = FD_OK;
    if (!fd_mpi_active()) return FD_OK;
    MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, jb->hist, SPEARMAN_HIST_BINS, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), st, done);
    uint64_t c[2] = {jb->pairs, jb->selected};
    MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, c, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), st, done);
    jb->pairs = c[0];
    jb->selected = c[1];
    /* Kept pairs are written only when every rank kept all of its own. */
    int over = atomic_load(&jb->kept_over);
    MPI_CHECK_GOTO(MPI_Allreduce(MPI_IN_PLACE, &over, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), st, done);
    atomic_store(&jb->kept_over, over);
done:
    return st;
}

/* Bytes per written pair: i and j (8 each), rho (4), p (8). */
#define PAIR_BYTES 28

static fd_status check_output_size(const job *jb)
{
    const spearman_opts *o = jb->o;
    double bytes = (double)jb->selected * PAIR_BYTES;
    if (!o->outdir || o->count_only || bytes <= (double)o->max_output) return FD_OK;
    return fd_fail(FD_ERR_USAGE,
                   "%llu pairs pass the selection: about %.3g GB of output, over --max-output %.3g GB; choose a "
                   "stricter %s, or raise --max-output",
                   (unsigned long long)jb->selected, bytes / 1e9, (double)o->max_output / 1e9,
                   o->mode == 'p' ? "--pvalue" : o->mode == 'r' ? "--rho" : o->mode == 'f' ? "--fdr" : "--top-k");
}

static void fill_meta(const job *jb, spearman_meta *m)
{
    const spearman_opts *o = jb->o;
    memset(m, 0, sizeof *m);
    m->command = o->command;
    m->backend = jb->ops->dev.name;
    m->mode = o->mode == 'p' ? "pvalue" : o->mode == 'r' ? "rho" : o->mode == 'f' ? "fdr" : "top-k";
    m->input = o->input;
    m->input_sha256 = jb->x->sha.hex;
    if (jb->y != jb->x) {
        m->y_input = o->y_input;
        m->y_sha256 = jb->y->sha.hex;
        m->y_rows = jb->y->rows;
        m->y_constant_rows = jb->y->constant;
    }
    m->rows = jb->x->rows;
    m->constant_rows = jb->x->constant;
    m->dropped_rows = jb->x->dropped + (jb->y != jb->x ? jb->y->dropped : 0);
    m->n = jb->x->n;
    m->threshold = o->value;
    m->rho_cut = sqrt(jb->sel.q);
    m->count_only = o->count_only;
    m->pairs_tested = jb->pairs;
    m->pairs_selected = jb->selected;
    m->hist = o->no_hist ? NULL : jb->hist;
    m->ranks = jb->mpi.size;
    m->threads = jb->threads;
    m->wall_seconds = fd_now() - jb->t0;
    m->load_seconds = jb->load_s;
    m->pass1_seconds = jb->pass1_s;
    m->pass2_seconds = jb->pass2_s;
    m->fdr_seconds = jb->fdr_s;
    m->checkpoint_seconds = jb->ck ? o->checkpoint_seconds : 0;
    m->resumed_records = jb->resumed;
}

/* This rank's row of the /ranks table: pairs written, tile records run. */
static void rank_report(const job *jb, h5part_rank *r, double enum_s)
{
    double busy = 0;
    memset(r, 0, sizeof *r);
    r->results = jb->h5 ? spearman_h5_count(jb->h5) : 0;
    for (int t = 0; t < jb->threads; t++) {
        r->units += jb->records[t];
        busy += jb->busy[t];
    }
    h5part_rank_times(r, busy, jb->threads, enum_s);
}

/* The input files' SHA-256, which the readers may have left computing
 * (smat_sha256), and the same on every rank.  Collective. */
static fd_status input_hashes(job *jb)
{
    fd_status st = smat_sha256(jb->x);
    if (st == FD_OK && jb->y != jb->x) st = smat_sha256(jb->y);
    FD_TRY(fd_mpi_agree(st, NULL));
    FD_TRY(fd_mpi_same_hash(jb->x->sha.hex, jb->o->input));
    return jb->y != jb->x ? fd_mpi_same_hash(jb->y->sha.hex, jb->o->y_input) : FD_OK;
}

/* Pass 1 (counting, reduced over ranks), --fdr's cutoff and the output
 * size check: what the output will hold.  --top-k needs no counting pass:
 * its size is known.  Agreed. */
static fd_status count_stage(fd_job *j)
{
    job *jb = j->w;
    const spearman_opts *o = jb->o;
    if (o->mode == 'k') {
        uint64_t rows = 0;
        for (uint64_t r = 0; r < jb->x->rows; r++) rows += jb->x->sii[r] != 0;
        jb->selected = rows * (uint64_t)o->value;
        return fd_mpi_agree(check_output_size(jb), NULL);
    }
    double t = fd_now();
    fd_progress_start(&jb->prog, "pairs", !fd_job_speaks(j));
    fd_status st = spearman_pass(jb, 0);
    fd_progress_stop(&jb->prog);
    jb->pass1_s = fd_now() - t;
    if (st == FD_ERR_MPI) return st;
    FD_TRY(fd_mpi_agree(st, NULL));
    st = reduce_counts(jb);
    if (st == FD_OK && o->mode == 'f') {
        t = fd_now();
        st = spearman_ckpt_fdr(jb);
        jb->fdr_s = fd_now() - t;
    }
    if (st == FD_OK) st = check_output_size(jb);
    /* Every rank reaches the same verdict; one message is enough. */
    return st == FD_ERR_MPI ? st : fd_mpi_agree(st, NULL);
}

/* The pairs into this rank's part (or the single file): what pass 1 kept,
 * or pass 2; with checkpoints the part is made from the segments.  With
 * --count-only the file holds the counts and the histogram and empty pair
 * datasets.  Agreed. */
static fd_status write_stage(fd_job *j)
{
    job *jb = j->w;
    const spearman_opts *o = jb->o;
    const char *file = jb->out->parts ? jb->out->part : jb->out->result;
    fd_status st = jb->ck ? FD_OK : spearman_h5_create(&jb->h5, file);
    if (st != FD_OK && jb->out->parts)
        st = fd_fail(st, "%s: cannot write this rank's part (is %s on a file system every rank sees?)", file,
                     o->outdir);
    FD_TRY(fd_mpi_agree(st, NULL));
    if (o->count_only) return jb->ck ? fd_mpi_agree(spearman_ckpt_build(jb, 0, file), NULL) : FD_OK;
    if (jb->keep_pairs && !atomic_load(&jb->kept_over))
        return fd_mpi_agree(jb->ck ? spearman_ckpt_build(jb, 1, file) : write_kept(jb), NULL);
    const uint64_t pairs = jb->pairs, selected = jb->selected;
    fd_progress_start(&jb->prog, "pairs", !fd_job_speaks(j));
    if (o->mode == 'k') jb->pairs = jb->selected = 0;
    st = spearman_pass(jb, 1);
    fd_progress_stop(&jb->prog);
    if (o->mode != 'k') {
        jb->pairs = pairs;
        jb->selected = selected;
    }
    if (st == FD_ERR_MPI) return st;
    FD_TRY(fd_mpi_agree(st, NULL));
    if (jb->ck) FD_TRY(fd_mpi_agree(spearman_ckpt_build(jb, 2, file), NULL));
    return o->mode == 'k' ? reduce_counts(jb) : FD_OK;
}

static fd_status report_input(job *jb);

static fd_status run(fd_job *j)
{
    job *jb = j->w;
    if (jb->o->check_input) return fd_mpi_agree(report_input(jb), NULL);
    jb->t_enum = fd_now();
    FD_TRY(count_stage(j));
    if (!jb->o->outdir) return FD_OK;
    const double t = fd_now();
    const fd_status st = write_stage(j);
    jb->pass2_s = fd_now() - t;
    return st;
}

/* This rank's part, then rank 0's master (or the single file). */
static fd_status commit(fd_job *j)
{
    job *jb = j->w;
    if (jb->o->check_input) return FD_OK;
    h5part_rank mine;
    spearman_meta meta;
    jb->reps = calloc((size_t)j->mpi.size, sizeof *jb->reps);
    if (!jb->reps) return fd_fail(FD_ERR_NOMEM, "out of memory");
    rank_report(jb, &mine, fd_now() - jb->t_enum);
    /* Only the output needs the files' hashes: after the passes, the
     * readers' hashing threads have finished but in the shortest runs. */
    if (jb->o->outdir) FD_TRY(input_hashes(jb));
    if (jb->out->parts && jb->h5) {
        fd_status st = spearman_h5_commit_part(&jb->h5, jb->x->sha.hex, j->mpi.rank, j->mpi.size);
        if (st == FD_OK) rd_part_committed(&j->out);
        FD_TRY(fd_mpi_agree(st, NULL));
    }
    FD_TRY(fd_mpi_gather_bytes(&mine, sizeof mine, jb->reps));
    if (j->mpi.rank != 0 || !jb->o->outdir) return FD_OK;
    fill_meta(jb, &meta);
    if (!jb->out->parts) return spearman_h5_commit(&jb->h5, &meta);
    return spearman_master_write(jb->out->result, jb->out->run_id, &meta, jb->reps, j->mpi.size);
}

/* --check-input: the shape and the SHA-256 of each input (joined here),
 * and the time to read, rank and hash them. */
static fd_status report_input(job *jb)
{
    FD_TRY(input_hashes(jb));
    const double secs = fd_now() - jb->t0;
    if (jb->mpi.rank != 0) return FD_OK;
    spearman_mat *ms[2] = {jb->x, jb->y != jb->x ? jb->y : NULL};
    for (int k = 0; k < 2 && ms[k]; k++)
        printf("%s: %llu rows x %u observations, %llu constant, %llu dropped, SHA-256 %s\n", ms[k]->source,
               (unsigned long long)ms[k]->rows, ms[k]->n, (unsigned long long)ms[k]->constant,
               (unsigned long long)ms[k]->dropped, ms[k]->sha.hex);
    printf("read and ranked in %.3f s\n", secs);
    return FD_OK;
}

static void report(fd_job *j)
{
    const job *jb = j->w;
    const spearman_opts *o = jb->o;
    if (o->check_input) return;
    double secs = fd_now() - jb->t0;
    fprintf(stderr, "%llu of %llu pairs selected (%s %g, |rho| >= %.6f) in %.3f s (%.3g pairs/s), ",
            (unsigned long long)jb->selected, (unsigned long long)jb->pairs,
            o->mode == 'p' ? "p <=" : o->mode == 'r' ? "|rho| >=" : o->mode == 'f' ? "FDR" : "top-k", o->value,
            sqrt(jb->sel.q), secs, secs > 0 ? (double)jb->pairs / secs : 0.0);
    if (j->mpi.size > 1) fprintf(stderr, "%d ranks x ", j->mpi.size);
    if (jb->ops->dev.devices) fprintf(stderr, "1 GPU a rank (rank 0: GPU %d)", jb->device);
    else fprintf(stderr, "%d thread%s", jb->threads, jb->threads == 1 ? "" : "s");
    const int wrote = jb->out->result && !o->count_only;
    fprintf(stderr, "%s%s\n", wrote ? "; wrote " : "", wrote ? jb->out->result : "");
    const uint64_t constant = jb->x->constant + (jb->y != jb->x ? jb->y->constant : 0);
    if (constant)
        fprintf(stderr, "%llu constant row%s (rho undefined, never selected)\n", (unsigned long long)constant,
                constant == 1 ? "" : "s");
    if (jb->resumed)
        fprintf(stderr, "resumed: %llu of %llu tile records were done by earlier runs\n",
                (unsigned long long)jb->resumed, (unsigned long long)jb->recs.n);
    if (!o->stats) return;
    fprintf(stderr, "load %.3f s, pass 1 (count) %.3f s, ", jb->load_s, jb->pass1_s);
    if (o->mode == 'f') fprintf(stderr, "FDR cutoff %.3f s, ", jb->fdr_s);
    fprintf(stderr, "%s %.3f s, output %.3f s\n",
            jb->keep_pairs && !atomic_load(&jb->kept_over) ? "write (pairs kept by pass 1)" : "pass 2 (write)",
            jb->pass2_s, j->commit_s);
    h5part_print_ranks(stderr, "pairs", "tiles", jb->reps, j->mpi.size);
}

static void close_run(fd_job *j, fd_status st)
{
    job *jb = j->w;
    if (jb->dev) jb->ops->close(jb->dev);
    spearman_h5_abort(&jb->h5);
    spearman_ckpt_close(jb, st);
    if (jb->y != jb->x) smat_destroy(&jb->y);
    smat_destroy(&jb->x);
    for (int t = 0; jb->hbuf && t < jb->threads; t++) {
        free(jb->hbuf[t]);
        free(jb->xbuf[t]);
        free(jb->obuf[t]);
    }
    free(jb->hbuf);
    free(jb->xbuf);
    free(jb->obuf);
    free(jb->obufcap);
    free(jb->nkept);
    free(jb->xhist);
    free(jb->xs);
    for (int t = 0; jb->topk && t < jb->threads; t++) spearman_topk_free(&jb->topk[t]);
    free(jb->topk);
    free(jb->acc);
    free(jb->busy);
    free(jb->records);
    free(jb->reps);
}

static const fd_job_ops spearman_job_ops = {
    .validate = validate,
    .read = read_inputs,
    .check_input = same_inputs,
    .backend_for = backend_for,
    .setup = setup,
    .run = run,
    .commit = commit,
    .report = report,
    .close = close_run,
};

fd_status spearman_job_run(const spearman_opts *o)
{
    job jb;
    memset(&jb, 0, sizeof jb);
    jb.o = o;
    atomic_init(&jb.failed, 0);
    FD_TRY(spearman_backend_get(o->backend, &jb.ops));
    pthread_mutex_init(&jb.lock, NULL);
    /* --check-input writes nothing, so it makes no directory either. */
    const fd_job_opts jo = {.workload = "spearman", .outdir = o->check_input ? NULL : o->outdir, .force = o->force,
                            .resume = o->resume, .quiet = o->quiet, .stats = o->stats, .threads = o->threads,
                            .parts = 1};
    const fd_status st = fd_job_run(&spearman_job_ops, &jo, &jb.ops->dev, &jb);
    pthread_mutex_destroy(&jb.lock);
    return st;
}
