/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoints of a spearman run (spearman_ckpt.h).
 *
 * Every worker thread writes what its records produce to a segment of its
 * own: in the counting pass (stage 1) the sums (pairs tested, selected,
 * the histograms) and, while pass 1 keeps pairs, the selected pairs; in
 * the writing pass (stage 2) the pairs.  A record is done once its
 * segment is committed.  A resumed run skips, per stage, the records that
 * earlier runs' segments hold, adds their sums on rank 0, and copies their
 * pairs into the parts along with its own. */
#include "spearman_ckpt.h"

#include "../common/atomicfile.h"
#include "../common/clock.h"
#include "../io/h5util.h"
#include "../job/ckpt.h"
#include "spearman_fdr.h"
#include "spearman_hist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PARAMS_CAP 1024

/* A thread's open segment. */
typedef struct spearman_seg {
    spearman_h5 *w;               /* NULL until the thread has something to write */
    double opened;
    uint64_t *ids;                /* records whose results it holds in full */
    size_t nids, capids;
    uint64_t pairs, selected;     /* the thread's counters when it opened */
    uint64_t *hist, *xhist;       /* its histograms then */
    uint64_t kept;                /* pairs kept by pass 1 on this thread */
    int complete;                 /* it holds every selected pair of its records */
} spearman_seg;

/* What the segments of earlier runs hold, per stage (rank 0). */
typedef struct spearman_old {
    uint8_t *done[3];             /* per record id */
    uint64_t ndone[3];
    uint64_t pairs[3], selected[3], *hist, *xhist;
    char **paths[3];              /* segments with pairs */
    size_t npaths[3], cappaths[3];
    int incomplete;               /* some pass-1 segment did not keep its pairs */
} spearman_old;

struct spearman_ckpt {
    ckpt *ck;
    spearman_seg *seg;            /* one per thread */
    fd_records recs;              /* rank 0: the work list, the same for every pass */
    uint64_t *rec_words;
    size_t *rec_start;
    spearman_old old;
    char **mine[3];               /* this rank's committed segments per stage */
    size_t nmine[3], capmine[3];
};

static const spearman_pass_hooks hooks;

fd_status spearman_ckpt_open(spearman_run *jb)
{
    const spearman_opts *o = jb->o;
    char params[PARAMS_CAP];
    /* What decides the result; the threads, ranks and backend do not.  The
     * input by the digest of its ranks (smat_digest), which the results
     * depend on and which is ready when the read ends; the file's SHA-256
     * may still be computing (it goes into the output).  The histogram's
     * bin definition too: a checkpoint of a version that binned some pairs
     * otherwise is refused rather than mixed in. */
    snprintf(params, sizeof params,
             "input_ranks=%s\ny_ranks=%s\nselection=%c\nvalue=%.17g\ncount_only=%d\ndrop_nan=%d\n"
             "histogram=%d\nhistogram_bins=%d\nrows=%llu\nobservations=%u\nrecord_layout=1 block=%d\n",
             jb->x->digest, jb->y != jb->x ? jb->y->digest : "-", o->mode, o->value, o->count_only, o->drop_nan,
             !o->no_hist, SPEARMAN_HIST_DEFINITION, (unsigned long long)jb->x->rows, jb->x->n, BLOCK);
    if (o->kendall) strncat(params, "method=kendall\n", sizeof params - strlen(params) - 1);
    /* --fdr under --missing pairwise bins by x since 2026-12-05 (by p before) */
    if (o->mode == 'f' && o->missing_pairwise && !o->kendall)
        strncat(params, "fdr_bins=x\n", sizeof params - strlen(params) - 1);
    ckpt_opts co = {o->outdir, jb->out->checkpoint, "spearman", params, o->checkpoint_seconds, o->resume, jb->mpi.rank,
                    jb->mpi.size};
    fd_status st = FD_OK;
    FD_ALLOC_GOTO(jb->ck, 1, st, done);
    jb->hooks = &hooks;
    FD_TRY(ckpt_open(&jb->ck->ck, &co));
    FD_ALLOC_GOTO(jb->ck->seg, (size_t)jb->threads, st, done);
    for (int t = 0; t < jb->threads; t++) {
        FD_ALLOC_GOTO(jb->ck->seg[t].hist, SPEARMAN_HIST_BINS, st, done);
        if (jb->xhist) FD_ALLOC_GOTO(jb->ck->seg[t].xhist, FDR_BINS, st, done);
    }
done:
    return st;
}

/* ---------------- resuming (rank 0) ---------------- */

static fd_status add_path(spearman_old *old, int stage, const char *path)
{
    FD_TRY(fd_grow((void **)&old->paths[stage], &old->cappaths[stage], old->npaths[stage] + 2, sizeof(char *)));
    if (!(old->paths[stage][old->npaths[stage]] = strdup(path))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    old->paths[stage][++old->npaths[stage]] = NULL;
    return FD_OK;
}

typedef struct {
    spearman_run *jb;
    size_t nrec;
    uint64_t *scratch; /* a segment's histogram on its way into the sums: FDR_BINS */
} scan_arg;

/* into[b] += the segment's dataset `name` (n counts). */
static fd_status add_counts(hid_t f, const char *name, size_t n, uint64_t *scratch, uint64_t *into)
{
    FD_TRY(h5u_read_range(f, name, H5T_NATIVE_UINT64, 0, n, scratch));
    for (size_t b = 0; b < n; b++) into[b] += scratch[b];
    return FD_OK;
}

static fd_status take_segment(void *arg, const char *path, hid_t f, int stage, const uint64_t *ids, size_t n)
{
    scan_arg *sa = arg;
    spearman_run *jb = sa->jb;
    spearman_old *old = &jb->ck->old;
    uint64_t pairs = 0, selected = 0, complete = 0, npairs = 0;
    if (stage < 1 || stage > 2) return FD_OK;
    for (size_t k = 0; k < n; k++)
        if (ids[k] >= sa->nrec) return fd_fail(FD_ERR_INPUT, "%s: record %llu is not in the work list", path,
                                               (unsigned long long)ids[k]);
    FD_TRY(h5u_read_attr_u64(f, "ckpt_pairs", &pairs));
    FD_TRY(h5u_read_attr_u64(f, "ckpt_selected", &selected));
    FD_TRY(h5u_read_attr_u64(f, "pairs_complete", &complete));
    FD_TRY(h5u_len(f, "pairs/i", &npairs));
    if (stage == 1) {
        FD_TRY(add_counts(f, "ckpt_hist", SPEARMAN_HIST_BINS, sa->scratch, old->hist));
        if (old->xhist) FD_TRY(add_counts(f, "ckpt_xhist", FDR_BINS, sa->scratch, old->xhist));
        if (!complete) old->incomplete = 1;
    }
    for (size_t k = 0; k < n; k++) {
        if (old->done[stage][ids[k]])
            return fd_fail(FD_ERR_INPUT, "%s: record %llu is done twice in the checkpoint", path,
                           (unsigned long long)ids[k]);
        old->done[stage][ids[k]] = 1;
    }
    old->ndone[stage] += n;
    old->pairs[stage] += pairs;
    old->selected[stage] += selected;
    if (npairs) FD_TRY(add_path(old, stage, path));
    return FD_OK;
}

/* The work list: built and saved by a fresh run, loaded by a resumed one,
 * whose earlier segments are read once. */
static fd_status work_list(spearman_run *jb, const fd_records *all)
{
    spearman_old *old = &jb->ck->old;
    fd_status st = FD_OK;
    if (jb->ck->recs.data) return FD_OK;
    if (!ckpt_resuming(jb->ck->ck)) {
        FD_TRY(ckpt_save_records(jb->ck->ck, all));
        /* The caller's memory lives for one pass: keep a copy. */
        FD_ALLOC_GOTO(jb->ck->rec_words, all->nwords + 1, st, done);
        FD_ALLOC_GOTO(jb->ck->rec_start, all->n + 1, st, done);
        memcpy(jb->ck->rec_words, all->data, all->nwords * sizeof *jb->ck->rec_words);
        memcpy(jb->ck->rec_start, all->start, all->n * sizeof *jb->ck->rec_start);
        jb->ck->recs = (fd_records){jb->ck->rec_words, jb->ck->rec_start, all->n, all->nwords, NULL};
    } else {
        FD_TRY(ckpt_load_records(jb->ck->ck, &jb->ck->recs));
        FD_TRY(ckpt_check_records(jb->ck->ck, &jb->ck->recs, spearman_record_valid, jb));
    }
    for (int s = 1; s <= 2; s++) FD_ALLOC_GOTO(old->done[s], jb->ck->recs.n + 1, st, done);
    FD_ALLOC_GOTO(old->hist, SPEARMAN_HIST_BINS, st, done);
    if (jb->xhist) FD_ALLOC_GOTO(old->xhist, FDR_BINS, st, done);
    if (ckpt_resuming(jb->ck->ck)) {
        _Static_assert(FDR_BINS >= SPEARMAN_HIST_BINS, "the scratch holds either histogram");
        scan_arg sa = {jb, jb->ck->recs.n, malloc(FDR_BINS * sizeof(uint64_t))};
        st = sa.scratch ? ckpt_scan(jb->ck->ck, jb->ck->recs.n, take_segment, &sa) : fd_fail(FD_ERR_NOMEM, "out of memory");
        free(sa.scratch);
    }
done:
    return st;
}

static fd_status list(spearman_run *jb, const fd_records *all, fd_records *out)
{
    FD_TRY(work_list(jb, all));
    FD_TRY(ckpt_records_left(&jb->ck->recs, jb->stage ? jb->ck->old.done[jb->stage] : NULL, out));
    if (jb->stage == (jb->o->mode == 'k' ? 2 : 1)) jb->resumed = jb->ck->old.ndone[jb->stage];
    jb->records_total = jb->ck->recs.n;
    return FD_OK;
}

/* ---------------- segments (worker threads) ---------------- */

static fd_status seg_open(spearman_run *jb, int t, const spearman_acc *a)
{
    spearman_seg *sg = &jb->ck->seg[t];
    char *path = ckpt_seg_path(jb->ck->ck);
    if (!path) return fd_fail(FD_ERR_NOMEM, "out of memory");
    fd_status st = spearman_h5_create(&sg->w, path);
    free(path);
    FD_TRY(st);
    sg->opened = fd_now();
    sg->nids = 0;
    /* Pass 1 holds every selected pair only while it keeps them. */
    sg->complete = jb->stage == 2 || (a->out && a->keep_cap && !atomic_load(&jb->kept_over));
    return FD_OK;
}

static fd_status remember(spearman_run *jb, int stage, const char *path)
{
    pthread_mutex_lock(&jb->lock);
    fd_status st = fd_grow((void **)&jb->ck->mine[stage], &jb->ck->capmine[stage], jb->ck->nmine[stage] + 1, sizeof(char *));
    if (st == FD_OK && !(jb->ck->mine[stage][jb->ck->nmine[stage]] = strdup(path))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st == FD_OK) jb->ck->nmine[stage]++;
    pthread_mutex_unlock(&jb->lock);
    return st;
}

/* Differences of a histogram since the segment opened. */
static fd_status put_delta(hid_t f, const char *name, const uint64_t *now, const uint64_t *then, size_t n)
{
    uint64_t *d = malloc(n * sizeof *d);
    if (!d) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < n; k++) d[k] = now ? now[k] - then[k] : 0;
    fd_status st = h5u_write_1d(f, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, d, n);
    free(d);
    return st;
}

/* Pass 1 keeps its pairs in memory, as without checkpoints, and writes
 * them with the segment that commits their records, while the thread's
 * share of the budget lasts: a run that commits only at the end of the
 * pass writes them once, and only when they will be the result. */
static fd_status write_kept(spearman_run *jb, int t, spearman_acc *a)
{
    spearman_seg *sg = &jb->ck->seg[t];
    if (jb->stage != 1 || !sg->complete) return FD_OK;
    if (!a->out || !a->keep_cap || a->keep_over || atomic_load(&jb->kept_over) || sg->kept + a->nout > a->keep_cap) {
        atomic_store(&jb->kept_over, 1);
        sg->complete = 0;
        return FD_OK;
    }
    sg->kept += a->nout;
    fd_status st = spearman_write_pairs(jb, sg->w, a->out, a->nout);
    a->nout = 0;
    return st;
}

static fd_status seg_commit(spearman_run *jb, int t, spearman_acc *a)
{
    spearman_seg *sg = &jb->ck->seg[t];
    if (!sg->w) return FD_OK;
    hid_t f = spearman_h5_file(sg->w);
    char *path = NULL;
    fd_status st = write_kept(jb, t, a);
    if (st == FD_OK) st = ckpt_seg_mark(f, jb->ck->ck, jb->stage, sg->ids, sg->nids);
    if (st == FD_OK) st = h5u_attr_u64(f, "ckpt_pairs", a->pairs - sg->pairs);
    if (st == FD_OK) st = h5u_attr_u64(f, "ckpt_selected", a->selected - sg->selected);
    if (st == FD_OK) st = h5u_attr_u64(f, "pairs_complete", (uint64_t)sg->complete);
    if (st == FD_OK) st = put_delta(f, "ckpt_hist", a->hist, sg->hist, SPEARMAN_HIST_BINS);
    if (st == FD_OK && jb->xhist) st = put_delta(f, "ckpt_xhist", a->xhist, sg->xhist, FDR_BINS);
    if (st != FD_OK) {
        spearman_h5_abort(&sg->w);
        return st;
    }
    /* The path, before the writer that knows it is gone. */
    path = strdup(spearman_h5_path(sg->w));
    if (!path) {
        spearman_h5_abort(&sg->w);
        return fd_fail(FD_ERR_NOMEM, "out of memory");
    }
    st = spearman_h5_finish(&sg->w);
    /* The next segment counts from here. */
    sg->pairs = a->pairs;
    sg->selected = a->selected;
    if (a->hist) memcpy(sg->hist, a->hist, SPEARMAN_HIST_BINS * sizeof *sg->hist);
    if (a->xhist) memcpy(sg->xhist, a->xhist, FDR_BINS * sizeof *sg->xhist);
    if (st == FD_OK) st = remember(jb, jb->stage, path);
    if (st == FD_OK) ckpt_seg_committed(jb->ck->ck, jb->stage, sg->nids);
    free(path);
    sg->nids = 0;
    return st;
}

/* The thread's buffered pairs into its segment. */
static fd_status flush(spearman_run *jb, int t, spearman_acc *a)
{
    spearman_seg *sg = &jb->ck->seg[t];
    if (!sg->w) FD_TRY(seg_open(jb, t, a));
    fd_status st = spearman_write_pairs(jb, sg->w, a->out, a->nout);
    a->nout = 0;
    return st;
}

static void pass_start(spearman_run *jb, int t)
{
    spearman_seg *sg = &jb->ck->seg[t];
    sg->kept = sg->pairs = sg->selected = 0;
    memset(sg->hist, 0, SPEARMAN_HIST_BINS * sizeof *sg->hist);
    if (sg->xhist) memset(sg->xhist, 0, FDR_BINS * sizeof *sg->xhist);
}

static fd_status record_done(spearman_run *jb, int t, spearman_acc *a, uint64_t id)
{
    spearman_seg *sg = &jb->ck->seg[t];
    if (!jb->stage) return FD_OK;
    if (!sg->w) FD_TRY(seg_open(jb, t, a));
    /* Pass 1 stopped keeping (keep_check): pass 2 will write the pairs. */
    if (jb->stage == 1 && !(a->out && a->keep_cap)) sg->complete = 0;
    if (jb->stage == 2 && a->nout) FD_TRY(flush(jb, t, a));
    FD_TRY(fd_grow((void **)&sg->ids, &sg->capids, sg->nids + 1, sizeof *sg->ids));
    sg->ids[sg->nids++] = id;
    if (ckpt_due(jb->ck->ck, sg->opened)) FD_TRY(seg_commit(jb, t, a));
    return FD_OK;
}

static fd_status pass_end(spearman_run *jb)
{
    fd_status st = FD_OK;
    if (!jb->stage) return FD_OK;
    for (int t = 0; t < jb->threads; t++) {
        fd_status s = FD_OK;
        if (jb->stage == 2 && jb->acc[t].nout) s = flush(jb, t, &jb->acc[t]);
        if (s == FD_OK) s = seg_commit(jb, t, &jb->acc[t]);
        if (st == FD_OK) st = s;
    }
    if (st != FD_OK || jb->mpi.rank != 0) return st;
    const spearman_old *old = &jb->ck->old;
    jb->pairs += old->pairs[jb->stage];
    jb->selected += old->selected[jb->stage];
    if (jb->stage == 1) {
        for (int b = 0; b < SPEARMAN_HIST_BINS; b++) jb->hist[b] += old->hist[b];
        for (uint32_t b = 0; jb->xhist && b < FDR_BINS; b++) jb->xhist[b] += old->xhist[b];
        if (old->incomplete) atomic_store(&jb->kept_over, 1);
    }
    return FD_OK;
}

static fd_status append_segment(spearman_run *jb, const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return fd_fail(FD_ERR_IO, "%s: cannot reopen the checkpoint segment", path);
    fd_status st = spearman_h5_append_file(jb->h5, f, path);
    H5Fclose(f);
    return st;
}

static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
}

fd_status spearman_ckpt_build(spearman_run *jb, int stage, const char *path)
{
    fd_status st = FD_OK;
    char **adopted = NULL, **mine = stage ? jb->ck->mine[stage] : NULL;
    const size_t nmine = stage ? jb->ck->nmine[stage] : 0;
    const char *largest = NULL;
    long long most = -1;
    FD_TRY(ckpt_share_paths(jb->ck->ck, stage ? jb->ck->old.paths[stage] : NULL, stage ? jb->ck->old.npaths[stage] : 0, &adopted));
    for (size_t k = 0; k < nmine; k++)
        if (file_size(mine[k]) > most) most = file_size(largest = mine[k]);
    for (size_t k = 0; adopted && adopted[k]; k++)
        if (file_size(adopted[k]) > most) most = file_size(largest = adopted[k]);
    /* The largest segment becomes the part in place; the others' pairs
     * are copied into it. */
    st = largest ? spearman_h5_adopt(&jb->h5, largest, path) : spearman_h5_create(&jb->h5, path);
    for (size_t k = 0; st == FD_OK && k < nmine; k++)
        if (mine[k] != largest) st = append_segment(jb, mine[k]);
    for (size_t k = 0; st == FD_OK && adopted && adopted[k]; k++)
        if (adopted[k] != largest) st = append_segment(jb, adopted[k]);
    ckpt_free_paths(adopted);
    return st;
}

fd_status spearman_ckpt_fdr(spearman_run *jb)
{
    fd_status st = FD_OK;
    double v[4] = {0, 0, 0, 0}; /* x lo, x hi, pairs selected, found */
    int found = 0;
    if (!jb->ck) return spearman_fdr_cutoff(jb);
    if (jb->mpi.rank == 0 && ckpt_resuming(jb->ck->ck)) FD_TRY(ckpt_get_values(jb->ck->ck, "fdr_cutoff", v, 3, &found));
    v[3] = found;
    if (jb->mpi.size > 1) MPI_CHECK_GOTO(MPI_Bcast(v, 4, MPI_DOUBLE, 0, MPI_COMM_WORLD), st, done);
    if (v[3] != 0) {
        jb->fdr_cut[0] = v[0];
        jb->fdr_cut[1] = v[1];
        spearman_fdr_select(jb, v[0], v[1]);
        jb->selected = (uint64_t)v[2];
        return FD_OK;
    }
    FD_TRY(spearman_fdr_cutoff(jb));
    if (jb->mpi.rank == 0) {
        const double w[3] = {jb->fdr_cut[0], jb->fdr_cut[1], (double)jb->selected};
        st = ckpt_put_values(jb->ck->ck, "fdr_cutoff", w, 3);
    }
done:
    return st;
}

static const spearman_pass_hooks hooks = {
    .list = list,
    .pass_start = pass_start,
    .record_done = record_done,
    .flush = flush,
    .pass_end = pass_end,
};

void spearman_ckpt_close(spearman_run *jb, fd_status st)
{
    struct spearman_ckpt *c = jb->ck;
    if (!c) return;
    for (int t = 0; c->seg && t < jb->threads; t++) {
        spearman_h5_abort(&c->seg[t].w);
        free(c->seg[t].ids);
        free(c->seg[t].hist);
        free(c->seg[t].xhist);
    }
    free(c->seg);
    if (c->ck) ckpt_finish(c->ck, st);
    ckpt_close(&c->ck);
    for (int s = 0; s < 3; s++) {
        for (size_t k = 0; k < c->nmine[s]; k++) free(c->mine[s][k]);
        free(c->mine[s]);
        free(c->old.done[s]);
        ckpt_free_paths(c->old.paths[s]);
    }
    free(c->old.hist);
    free(c->old.xhist);
    free(c->rec_words);
    free(c->rec_start);
    free(c);
    jb->ck = NULL;
    jb->hooks = NULL;
}
