/* SPDX-License-Identifier: BSD-3-Clause */
/* One spearman run on every rank, as the stages of the job skeleton
 * (job/job.h): read and rank (every rank the same input), setup, then the
 * run: pass 1 (counts and histograms, reduced over ranks), the output
 * size check, pass 2 (writing pairs to this rank's part); commit (parts,
 * then rank 0's master).  Each step ends in an agreement of all ranks
 * (docs/architecture.md). */
#include "spearman_job.h"

#include "../common/clock.h"
#include "../common/env.h"
#include "../common/par_rows.h"
#include "../io/h5util.h"
#include "../job/h5part.h"
#include "../job/job.h"
#include "spearman_ckpt.h"
#include "spearman_h5.h"
#include "spearman_pass.h"
#include "pvalue.h"
#include "spearman_read.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    spearman_run *jb = j->w;
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
    spearman_run *jb = j->w;
    const spearman_opts *o = jb->o;
    const spearman_read_opts ro = {.drop_nan = o->drop_nan, .header = o->header, .threads = j->threads,
                                   .by_columns = o->by_columns, .row_names = o->row_names,
                                   .missing_drop = o->missing_drop, .missing_pairwise = o->missing_pairwise,
                                   .kendall = o->kendall};
    FD_TRY(spearman_read(&jb->x, o->input, &ro));
    if (o->y_input) FD_TRY(spearman_read(&jb->y, o->y_input, &ro));
    const int digest = j->mpi.size > 1 || checkpointed(o);
    if (digest) FD_TRY(smat_digest(jb->x, j->threads));
    if (digest && jb->y) FD_TRY(smat_digest(jb->y, j->threads));
    return FD_OK;
}

static fd_status same_inputs(fd_job *j)
{
    spearman_run *jb = j->w;
    const spearman_opts *o = jb->o;
    FD_TRY(fd_mpi_same_digest(jb->x->digest, o->input));
    if (!jb->y) {
        jb->y = jb->x;
        return FD_OK;
    }
    FD_TRY(fd_mpi_same_digest(jb->y->digest, o->y_input));
    if (jb->y->n != jb->x->n)
        return fd_fail(FD_ERR_INPUT, "%s has %u observations per row but %s has %u", o->input, jb->x->n_obs, o->y_input,
                       jb->y->n_obs);
    return FD_OK;
}

/* The same input on every rank (checked above), so either every rank
 * falls back or none does. */
static const fd_device_ops *backend_for(fd_job *j)
{
    spearman_run *jb = j->w;
    const spearman_mat *y = jb->y ? jb->y : jb->x;
    const int takes = jb->ops->supports ? jb->ops->supports(jb->o->mode, jb->x, jb->x->incomplete || y->incomplete) : 1;
    if (takes || jb->ops == &spearman_cpu_ops) return j->dev;
    if (fd_job_speaks(j) && jb->x->ties)
        fprintf(stderr, "fcbo-dist spearman: Kendall's rows of %u observations (%u signs each) run on the CPU backend "
                "(%s takes up to 128 observations)\n", jb->x->n_obs, jb->x->n, jb->ops->dev.name);
    else if (fd_job_speaks(j))
        fprintf(stderr, "fcbo-dist spearman: rows of %u values run on the CPU backend (%s takes up to 128)\n",
                jb->x->n, jb->ops->dev.name);
    jb->ops = &spearman_cpu_ops;
    return &spearman_cpu_ops.dev;
}

/* --fdr under --missing pairwise: the p of each bin's lower edge at the
 * full n (spearman_acc.pedge), by which the pairs of fewer observations
 * are binned beside the complete rows' pairs, binned by x.  65,537
 * incomplete beta functions, on the rank's threads. */
static fd_status edge_rows(void *ctx, uint64_t b0, uint64_t b1, int thread)
{
    spearman_run *jb = ctx;
    (void)thread;
    for (uint64_t b = b0; b < b1; b++) jb->pedge[b] = spearman_p_of_x(fmin(1, (double)b / jb->xscale), jb->sel.dof);
    return FD_OK;
}

static fd_status pair_edges(spearman_run *jb)
{
    jb->pedge = malloc((FDR_BINS + 1) * sizeof *jb->pedge);
    if (!jb->pedge) return fd_fail(FD_ERR_NOMEM, "out of memory");
    return par_rows_chunk(jb->threads > jb->host_threads ? jb->threads : jb->host_threads, 0, FDR_BINS + 1, 1024,
                          edge_rows, jb, NULL);
}

/* The backend's state (a GPU's resident rank matrix), the selection, the
 * threads' buffers, the checkpoint.  A GPU rank is one worker thread
 * driving its device; its cores do the host-side work of the pairs it
 * writes. */
static fd_status setup(fd_job *j)
{
    spearman_run *jb = j->w;
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
    const int mode = o->mode == 'f' ? 'p' : o->mode == 'k' ? 'a' : o->mode;
    spearman_sel_init(&jb->sel, mode, o->value, jb->x->n);
    if (jb->x->incomplete || jb->y->incomplete) {
        FD_TRY(spearman_sel_by_n(&jb->sel, mode, o->value, jb->x->n, &jb->sel_by_n));
        jb->sel.pkey = 1;
    }
    if (jb->x->ties) {
        if (!kendall_ptab_init(&jb->ktab, jb->x->n_obs)) return fd_fail(FD_ERR_NOMEM, "out of memory");
        if (mode == 'p') { /* each pair's own p (--pvalue, and --fdr's pass 1): no threshold on |tau| (kendall.h) */
            kendall_ptab_alpha(&jb->ktab, o->value);
            jb->sel.kendall = &jb->ktab;
            jb->sel.pkey = 1;
            jb->sel.q = 0;
            jb->sel.pre = 0;
        }
    }
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
        const uint32_t rows = (uint32_t)(spearman_rows_per_record(jb) * BLOCK);
        for (size_t k = 0; k < T; k++)
            FD_TRY_GOTO(spearman_topk_init(&jb->topk[k], (uint32_t)o->value, rows), st, done);
    }
    if (st == FD_OK && o->mode == 'f') {
        FD_ALLOC_GOTO(jb->xhist, FDR_BINS, st, done);
        /* pass 1's pairs have x in [0, x_crit(Q)]; Kendall's are binned by p, in [0, Q] */
        jb->xscale = FDR_BINS / fmax(jb->sel.kendall ? o->value : 1 - jb->sel.q, 1e-300);
        if (jb->sel.pkey && !jb->sel.kendall) FD_TRY_GOTO(pair_edges(jb), st, done);
    }
    for (size_t k = 0; st == FD_OK && k < T; k++) {
        FD_ALLOC_GOTO(jb->hbuf[k], SPEARMAN_HIST_BINS, st, done);
        if (o->mode == 'f') FD_ALLOC_GOTO(jb->xbuf[k], FDR_BINS, st, done);
    }
done:
    FD_TRY(fd_mpi_agree(st, NULL));
    return checkpointed(o) ? spearman_ckpt_open(jb) : FD_OK;
}

static fd_status reduce_counts(spearman_run *jb)
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

static fd_status check_output_size(const spearman_run *jb)
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

static void fill_meta(const spearman_run *jb, spearman_meta *m)
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
    m->names = jb->x->names;
    m->n_names = jb->x->n_names;
    if (jb->y != jb->x) {
        m->y_names = jb->y->names;
        m->n_y_names = jb->y->n_names;
    }
    m->rows = jb->x->rows;
    m->constant_rows = jb->x->constant;
    m->dropped_rows = jb->x->dropped + (jb->y != jb->x ? jb->y->dropped : 0);
    m->missing = o->missing_drop ? "drop" : o->missing_pairwise ? "pairwise" : "refuse";
    m->dropped_observations = jb->x->dropped_obs;
    m->incomplete_rows = jb->x->n_incomplete;
    if (jb->y != jb->x) m->y_incomplete_rows = jb->y->n_incomplete;
    m->n = jb->x->n_obs;
    m->method = o->kendall ? "kendall" : "spearman";
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
static void rank_report(const spearman_run *jb, h5part_rank *r, double enum_s)
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
static fd_status input_hashes(spearman_run *jb)
{
    fd_status st = smat_sha256(jb->x);
    if (st == FD_OK && jb->y != jb->x) st = smat_sha256(jb->y);
    FD_TRY(fd_mpi_agree(st, NULL));
    FD_TRY(fd_mpi_same_hash(jb->x->sha.hex, jb->o->input));
    return jb->y != jb->x ? fd_mpi_same_hash(jb->y->sha.hex, jb->o->y_input) : FD_OK;
}

/* The pairs a pass tests, for the progress line: those of varying rows,
 * when this rank does them all (one rank); with several, rank 0 prints
 * its own count and rate. */
static uint64_t progress_total(const fd_job *j)
{
    const spearman_run *jb = j->w;
    if (j->mpi.size > 1) return 0;
    const uint64_t nx = jb->x->rows - jb->x->constant;
    if (jb->y && jb->y != jb->x) return nx * (jb->y->rows - jb->y->constant);
    return nx * (nx ? nx - 1 : 0) / 2;
}

/* Pass 1 (counting, reduced over ranks), --fdr's cutoff and the output
 * size check: what the output will hold.  --top-k needs no counting pass:
 * its size is known.  Agreed. */
static fd_status count_stage(fd_job *j)
{
    spearman_run *jb = j->w;
    const spearman_opts *o = jb->o;
    if (o->mode == 'k') {
        uint64_t rows = 0;
        for (uint64_t r = 0; r < jb->x->rows; r++) rows += jb->x->sii[r] != 0;
        jb->selected = rows * (uint64_t)o->value;
        return fd_mpi_agree(check_output_size(jb), NULL);
    }
    double t = fd_now();
    fd_progress_start(&jb->prog, "pairs", progress_total(j), !fd_job_speaks(j));
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
    spearman_run *jb = j->w;
    const spearman_opts *o = jb->o;
    const char *file = jb->out->parts ? jb->out->part : jb->out->result;
    fd_status st = jb->ck ? FD_OK : spearman_h5_create(&jb->h5, file);
    if (st != FD_OK && jb->out->parts)
        st = fd_fail(st, "%s: cannot write this rank's part (is %s on a file system every rank sees?)", file,
                     o->outdir);
    FD_TRY(fd_mpi_agree(st, NULL));
    if (o->count_only) return jb->ck ? fd_mpi_agree(spearman_ckpt_build(jb, 0, file), NULL) : FD_OK;
    if (jb->keep_pairs && !atomic_load(&jb->kept_over))
        return fd_mpi_agree(jb->ck ? spearman_ckpt_build(jb, 1, file) : spearman_write_kept(jb), NULL);
    const uint64_t pairs = jb->pairs, selected = jb->selected;
    fd_progress_start(&jb->prog, "pairs", progress_total(j), !fd_job_speaks(j));
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

static fd_status report_input(spearman_run *jb);

static fd_status run(fd_job *j)
{
    spearman_run *jb = j->w;
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
    spearman_run *jb = j->w;
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
static fd_status report_input(spearman_run *jb)
{
    FD_TRY(input_hashes(jb));
    const double secs = fd_now() - jb->t0;
    if (jb->mpi.rank != 0) return FD_OK;
    spearman_mat *ms[2] = {jb->x, jb->y != jb->x ? jb->y : NULL};
    for (int k = 0; k < 2 && ms[k]; k++)
        printf("%s: %llu rows x %u observations, %llu constant, %llu dropped, SHA-256 %s\n", ms[k]->source,
               (unsigned long long)ms[k]->rows, ms[k]->n_obs, (unsigned long long)ms[k]->constant,
               (unsigned long long)ms[k]->dropped, ms[k]->sha.hex);
    printf("read and ranked in %.3f s\n", secs);
    return FD_OK;
}

static void report(fd_job *j)
{
    const spearman_run *jb = j->w;
    const spearman_opts *o = jb->o;
    if (o->check_input) return;
    double secs = fd_now() - jb->t0;
    /* The |rho| a pair needs, where one threshold on it decides (not for
     * Kendall's p, nor for pairs of their own n under --missing pairwise). */
    char cut[64] = "";
    if (!jb->sel.kendall && !jb->sel.by_n) snprintf(cut, sizeof cut, ", |rho| >= %.6f", sqrt(jb->sel.q));
    fprintf(stderr, "%llu of %llu pairs selected (%s %g%s) in %.3f s (%.3g pairs/s), ", (unsigned long long)jb->selected,
            (unsigned long long)jb->pairs,
            o->mode == 'p' ? "p <=" : o->mode == 'r' ? "|rho| >=" : o->mode == 'f' ? "FDR" : "top-k", o->value, cut,
            secs, secs > 0 ? (double)jb->pairs / secs : 0.0);
    if (j->mpi.size > 1) fprintf(stderr, "%d ranks x ", j->mpi.size);
    if (jb->ops->dev.devices) fprintf(stderr, "1 GPU a rank (rank 0: GPU %d)", jb->device);
    else fprintf(stderr, "%d thread%s", jb->threads, jb->threads == 1 ? "" : "s");
    const int wrote = jb->out->result && !o->count_only;
    fprintf(stderr, "%s%s\n", wrote ? "; wrote " : "", wrote ? jb->out->result : "");
    if (o->missing_drop)
        fprintf(stderr, "--missing drop: %llu of %llu observations had a missing value and were left out\n",
                (unsigned long long)jb->x->dropped_obs, (unsigned long long)(jb->x->dropped_obs + jb->x->n_obs));
    if (o->missing_pairwise) {
        const uint64_t inc = jb->x->n_incomplete + (jb->y != jb->x ? jb->y->n_incomplete : 0);
        fprintf(stderr, "--missing pairwise: %llu row%s miss%s values; their pairs use the observations both rows have "
                "(p with the pair's own n; pairs of fewer than 3 are not counted)\n", (unsigned long long)inc,
                inc == 1 ? "" : "s", inc == 1 ? "es" : "");
    }
    const uint64_t constant = jb->x->constant + (jb->y != jb->x ? jb->y->constant : 0);
    if (constant)
        fprintf(stderr, "%llu constant row%s (rho undefined, never selected)\n", (unsigned long long)constant,
                constant == 1 ? "" : "s");
    if (jb->resumed)
        fprintf(stderr, "resumed: %llu of %llu tile records were done by earlier runs\n",
                (unsigned long long)jb->resumed, (unsigned long long)jb->records_total);
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
    spearman_run *jb = j->w;
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
    free(jb->pedge);
    free(jb->xs);
    for (int t = 0; jb->topk && t < jb->threads; t++) spearman_topk_free(&jb->topk[t]);
    free(jb->topk);
    free(jb->acc);
    free(jb->busy);
    free(jb->records);
    free(jb->reps);
    free(jb->sel_by_n);
    kendall_ptab_free(&jb->ktab);
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
    spearman_run jb;
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
