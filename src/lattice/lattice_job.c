/* One `lattice` job on every rank: the stages of a run (output directory,
 * setup, enumeration, commit), each ended by an agreement of all ranks so
 * that a failure anywhere stops every rank at the same point and leaves
 * nothing behind (docs/architecture.md, "Distribution").  With one rank
 * the output is DIR/lattice.h5; with several, DIR/lattice.RUNID.part-RRRRR.h5
 * per rank and a master DIR/lattice.h5 over them (io/resultdir.h). */
#include "lattice_job.h"

#include "../common/clock.h"
#include "../common/progress.h"
#include "../job/h5part.h"
#include "../job/resultdir.h"
#include "../mpi/device_warm.h"
#include "../mpi/placement.h"
#include "lattice.h"
#include "lattice_ckpt.h"
#include "lattice_h5.h"
#include "lattice_master.h"
#include "lattice_read.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Everything one run holds, so that every stage can clean up after any
 * other.  With several ranks each rank has its own. */
typedef struct {
    const lattice_job_opts *a;
    fd_mpi mpi;
    int distributed;          /* several ranks: parts and a master file */
    fca_context *ctx;
    fcbo_prep *prep;
    const struct lattice_ops *ops;
    lattice_opts lo;
    lattice_h5 *h5;
    text_writer *tw;
    concept_sink sink;
    int sink_ok;
    fd_progress prog;
    fcbo_stats stats;
    resultdir out;            /* DIR/lattice.h5 and this rank's part */
    lattice_ckpt *ck;         /* checkpoints, or NULL */
    double t0, enum_seconds, setup_seconds, output_seconds; /* rank 0's phases (print_summary) */
} run;

static int checkpointed(const lattice_job_opts *a) { return a->outdir && a->checkpoint_seconds > 0; }

/* Stage 1, rank 0: the output directory, before any rank writes into it. */
static fd_status stage_outdir(run *r)
{
    const lattice_job_opts *a = r->a;
    if (r->distributed && a->text && !a->outdir)
        return fd_fail(FD_ERR_USAGE, "with several ranks, --text needs -o DIR: rank 0 prints the intents from "
                                     "DIR/lattice.h5 once every rank has written its part");
    return rd_open(&r->out, a->outdir, "lattice", a->resume ? RD_RESUME : a->force ? RD_FORCE : RD_NEW, &r->mpi, 1);
}

/* Stage 2, every rank: read the input, open the writers.  The hash check
 * is collective, so every rank reaches it even when its read failed. */
static fd_status stage_setup(run *r)
{
    const lattice_job_opts *a = r->a;
    fd_status st = lattice_backend_get(a->backend, &r->ops);
    /* The context made while reading (device_warm.h); a failure to place
     * the rank is said after the read, as before it was made early.
     * Collective: every rank has the same backend. */
    fd_warm warm = {0};
    if (st == FD_OK && fd_warm_start(&warm, &r->mpi, &r->ops->dev) != FD_OK) fd_errclear();
    if (st == FD_OK) st = fca_context_read(&r->ctx, a->input, a->fmt);
    fd_warm_join(&warm);
    if (r->distributed) {
        fd_status agreed = fd_mpi_agree(st, NULL);
        if (agreed != FD_OK) return st != FD_OK ? st : agreed;
    } else if (st != FD_OK) {
        return st;
    }
    FD_TRY(fd_mpi_same_hash(r->ctx->sha256, a->input));
    lattice_opts *lo = &r->lo;
    lo->threads = a->threads > 0 ? a->threads : fd_place_threads(&r->mpi);
    /* Collective: every rank got the same backend name, so all call it. */
    if (r->ops->dev.devices) FD_TRY(fd_place_device(&r->mpi, r->ops->dev.devices(), &lo->device));
    if (r->ops->dev.open_device) FD_TRY(r->ops->dev.open_device(lo->device));
    lo->quiet = a->quiet;
    if (a->min_support_pct >= 0) {
        double ms = ceil(a->min_support_pct / 100.0 * r->ctx->n_obj - 1e-9);
        lo->min_support = ms < 0 ? 0 : (uint32_t)ms;
    } else {
        lo->min_support = a->min_support > UINT32_MAX ? UINT32_MAX : (uint32_t)a->min_support;
    }
    FD_TRY(concept_sink_init(&r->sink, a->extents, &r->prog));
    r->sink_ok = 1;
    /* With checkpoints, concepts go to segments (stage_checkpoint) and
     * the part is made from them at the end. */
    if (a->outdir && !checkpointed(a)) {
        const char *file = r->distributed ? r->out.part : r->out.result;
        st = lattice_h5_create(&r->h5, file, r->ctx, a->extents);
        if (st != FD_OK && r->distributed)
            return fd_fail(st, "%s: cannot write this rank's part (is %s on a file system every rank sees?)", file,
                           a->outdir);
        FD_TRY(st);
        FD_TRY(concept_sink_add(&r->sink, lattice_h5_as(r->h5)));
    }
    if (a->text && !r->distributed && !checkpointed(a)) {
        FD_TRY(text_writer_create(&r->tw, stdout));
        FD_TRY(concept_sink_add(&r->sink, text_writer_as(r->tw)));
    }
    return fcbo_prep_create(&r->prep, r->ctx, lo->min_support);
}

/* Stage 2b, every rank (collective): the checkpoint, and its router as
 * the sink's writer. */
static fd_status stage_checkpoint(run *r)
{
    const lattice_job_opts *a = r->a;
    lattice_ckpt_opts co = {a->outdir, r->out.checkpoint, a->checkpoint_seconds, a->resume, a->extents, r->ops->device_tasks > 0,
                            r->lo.min_support, r->lo.threads, r->mpi.rank, r->mpi.size};
    FD_TRY(lattice_ckpt_open(&r->ck, &co, r->ctx));
    r->lo.ckpt = r->ck;
    return concept_sink_add(&r->sink, lattice_ckpt_writer(r->ck));
}

/* Stage 3b (collective): this rank's part (or the single file) from the
 * segments of this run and its share of earlier runs'. */
static fd_status stage_merge(run *r)
{
    return lattice_ckpt_build(r->ck, r->distributed ? r->out.part : r->out.result, &r->h5);
}

/* What this rank did, for rank 0's table. */
typedef struct {
    lattice_rank rank;
    fcbo_stats stats;
} rank_report;

static void fill_report(const run *r, rank_report *rep)
{
    memset(rep, 0, sizeof *rep);
    lattice_rank *l = &rep->rank;
    if (r->h5) lattice_h5_counts(r->h5, &l->r.results, &l->int_ids, &l->ext_ids);
    else l->r.results = r->stats.concepts;
    l->r.units = r->stats.tasks;
    l->closures = r->stats.closures;
    /* A GPU rank is one worker: its busy time is the device loop's. */
    h5part_rank_times(&l->r, r->stats.busy_seconds, r->ops->dev.devices ? 1 : r->lo.threads, r->enum_seconds);
    rep->stats = r->stats;
}

static void print_summary(const run *r, const fcbo_stats *s, const rank_report *reps, double secs)
{
    const lattice_job_opts *a = r->a;
    if (a->quiet || r->mpi.rank != 0) return;
    const char *out = r->out.result ? r->out.result : "";
    /* A resumed run wrote the concepts of earlier runs too. */
    uint64_t concepts = s->concepts;
    if (r->ck) {
        concepts = 0;
        for (int k = 0; k < r->mpi.size; k++) concepts += reps[k].rank.r.results;
    }
    fprintf(stderr, "%llu concepts in %.3f s (%.3g concepts/s), backend %s, ", (unsigned long long)concepts,
            secs, secs > 0 ? (double)s->concepts / secs : 0.0, r->ops->dev.name);
    if (r->mpi.size > 1) fprintf(stderr, "%d ranks x ", r->mpi.size);
    if (r->ops->dev.devices) fprintf(stderr, "GPU %d%s%s\n", r->lo.device, *out ? "; wrote " : "", out);
    else fprintf(stderr, "%d thread%s%s%s\n", r->lo.threads, r->lo.threads == 1 ? "" : "s", *out ? "; wrote " : "", out);
    if (r->ck && lattice_ckpt_resumed(r->ck))
        fprintf(stderr, "resumed: %llu subtrees were done by earlier runs (concepts/s counts this run's)\n",
                (unsigned long long)lattice_ckpt_resumed(r->ck));
    if (!a->stats) return;
    /* Rank 0's phases: the enumeration includes writing the concepts
     * (writer threads take them as they come); output is the merge of
     * checkpoint segments, the parts' commit and the master. */
    fprintf(stderr,
            "setup %.4f s (reading the context, the output, the device), enumeration %.4f s (rank 0, of which %.4f s "
            "splitting the tree; concepts are written as they come), output %.4f s\n",
            r->setup_seconds, r->enum_seconds, s->split_seconds, r->output_seconds);
    fprintf(stderr,
            "closures %llu  canonicity failures %llu  pruned by failed sets %llu  below min support %llu  "
            "subtrees %llu\n",
            (unsigned long long)s->closures, (unsigned long long)s->fails, (unsigned long long)s->skipped_nj,
            (unsigned long long)s->skipped_support, (unsigned long long)s->tasks);
    h5part_rank *rows = calloc((size_t)r->mpi.size, sizeof *rows);
    if (!rows) return;
    for (int k = 0; k < r->mpi.size; k++) rows[k] = reps[k].rank.r;
    h5part_print_ranks(stderr, "concepts", "subtrees", rows, r->mpi.size);
    free(rows);
}

/* Stage 4: commit the output.  Single file: rename it.  Parts: turn local
 * offsets into global ones, commit every part, agree, then rank 0 writes
 * the master over them. */
static fd_status stage_commit(run *r, rank_report *reps, fcbo_stats *total)
{
    fd_status st = FD_OK;
    rank_report mine;
    fill_report(r, &mine);
    if (r->distributed) {
        uint64_t here[3] = {mine.rank.r.results, mine.rank.int_ids, mine.rank.ext_ids}, before[3];
        FD_TRY(fd_mpi_exscan_u64(here, before, 3));
        if (r->h5) {
            lattice_part part = {r->mpi.rank, r->mpi.size, before[0], before[1], before[2]};
            st = lattice_h5_commit_part(&r->h5, r->ctx, &part);
            if (st == FD_OK) rd_part_committed(&r->out);
        }
        FD_TRY(fd_mpi_agree(st, NULL));
    }
    FD_TRY(fd_mpi_gather_bytes(&mine, sizeof mine, reps));
    if (r->mpi.rank != 0) return FD_OK;
    for (int k = 0; k < r->mpi.size; k++) fcbo_stats_add(total, &reps[k].stats);
    lattice_meta meta = {r->a->command, r->ops->dev.name, r->lo.min_support, r->lo.threads, r->mpi.size,
                         fd_now() - r->t0, *total, r->ck ? r->a->checkpoint_seconds : 0,
                         r->ck ? lattice_ckpt_resumed(r->ck) : 0};
    if (!r->a->outdir) return FD_OK;
    if (!r->distributed) return lattice_h5_commit(&r->h5, r->ctx, &meta);
    lattice_rank *rs = calloc((size_t)r->mpi.size, sizeof *rs);
    if (!rs) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (int k = 0; k < r->mpi.size; k++) rs[k] = reps[k].rank;
    st = lattice_master_write(r->out.result, r->out.run_id, r->ctx, &meta, rs, r->mpi.size, r->a->extents);
    free(rs);
    return st;
}

static void cleanup(run *r, fd_status st)
{
    lattice_h5_abort(&r->h5);
    lattice_ckpt_close(&r->ck, st, r->a->quiet);
    text_writer_destroy(&r->tw);
    if (r->sink_ok) concept_sink_destroy(&r->sink);
    rd_close(&r->out, st);
    fcbo_prep_destroy(&r->prep);
    fca_context_destroy(&r->ctx);
}

fd_status lattice_job_run(const lattice_job_opts *a, const fd_mpi *mpi)
{
    run r;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.mpi = *mpi;
    r.distributed = mpi->size > 1;
    r.t0 = fd_now();
    fcbo_stats total = {0};
    rank_report *reps = NULL;

    fd_status st = fd_mpi_agree(stage_outdir(&r), NULL);
    if (st == FD_OK) st = fd_mpi_agree(stage_setup(&r), NULL);
    if (st == FD_OK && checkpointed(a)) st = fd_mpi_agree(stage_checkpoint(&r), NULL);
    r.setup_seconds = fd_now() - r.t0;
    if (st == FD_OK) {
        double t = fd_now();
        fd_progress_start(&r.prog, "concepts", a->quiet || mpi->rank != 0);
        fd_status local = lattice_enumerate(r.prep, &r.lo, r.ops, &r.sink, &r.stats);
        fd_progress_stop(&r.prog);
        r.enum_seconds = fd_now() - t;
        if (local == FD_ERR_MPI) { /* the others cannot be reached */
            st = local;
            goto done;
        }
        st = fd_mpi_agree(local, NULL);
    }
    const double t_out = fd_now();
    if (st == FD_OK && r.ck) st = fd_mpi_agree(stage_merge(&r), NULL);
    if (st == FD_OK) {
        reps = calloc((size_t)mpi->size, sizeof *reps);
        st = reps ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
        if (st == FD_OK) st = stage_commit(&r, reps, &total);
        /* Only rank 0 knows whether the master was written. */
        if (st != FD_ERR_MPI) st = fd_mpi_agree(st, NULL);
    }
    r.output_seconds = fd_now() - t_out;
    if (st == FD_OK && mpi->rank == 0) {
        print_summary(&r, &total, reps, fd_now() - r.t0);
        if (a->text && (r.distributed || r.ck)) st = lattice_read_text(r.out.result, stdout);
    }
done:
    cleanup(&r, st);
    free(reps);
    return st;
}

