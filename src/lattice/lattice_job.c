/* SPDX-License-Identifier: BSD-3-Clause */
/* One `lattice` job on every rank: the stages of the job skeleton
 * (job/job.h) with the lattice's own (docs/architecture.md,
 * "Distribution").  With one rank the output is DIR/lattice.h5; with
 * several, DIR/lattice.RUNID.part-RRRRR.h5 per rank and a master
 * DIR/lattice.h5 over them (job/resultdir.h). */
#include "lattice_job.h"

#include "../common/clock.h"
#include "../common/env.h"
#include "../common/progress.h"
#include "../job/h5part.h"
#include "../job/job.h"
#include "lattice.h"
#include "lattice_ckpt.h"
#include "lattice_edges.h"
#include "lattice_h5.h"
#include "lattice_master.h"
#include "lattice_read.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Everything one run holds, on every rank. */
typedef struct {
    const lattice_job_opts *a;
    const struct lattice_ops *ops;
    int distributed;          /* several ranks: parts and a master file */
    fca_context *ctx;
    fcbo_prep *prep;
    lattice_opts lo;
    lattice_h5 *h5;
    text_writer *tw;
    concept_sink sink;
    int sink_ok;
    fd_progress prog;
    fcbo_stats stats, total;  /* total: every rank's, on rank 0 */
    lattice_ckpt *ck;         /* checkpoints, or NULL */
    struct rank_report *reps; /* rank 0: every rank's */
    double enum_seconds;
    int auto_asked;           /* --backend auto, with a GPU backend built */
    int auto_cpu;             /* why auto took the CPU (AUTO_CPU_*), 0: it did not */
    uint64_t auto_bytes;      /* the input's size then */
    double edges_seconds;     /* --edges: the covers */
    double edges_phase[3];    /* of it: the intents gathered, the covers found, written (--stats) */
    uint64_t n_edges;         /* --edges: this rank's covers */
    lattice_covers_pass pass; /* --edges: how this rank found them */
} run;

/* Under --backend auto, an input of fewer bytes than this for each CPU
 * thread of the job (its ranks' threads together) runs on the CPU: the
 * GPU's fixed cost (driver and context about 0.25 s, its release at exit
 * 0.10 s on an H100) is then more than what it saves on the enumeration.
 * The file's size is what is known before reading it; it stands for the
 * work, crudely.  On one H100 and its 16 cores with -o
 * (bench/results/lattice-gpu-auto.txt): T10I4D100K (4.0 MB) 0.60 s on
 * the GPU, 1.07 s on 4 threads, 0.64 s on 8, 0.45 s on 16; mushroom
 * (570 KB) 0.56 s on the GPU, 0.23 s on one thread.  768 KiB a thread
 * puts T10I4D100K on the GPU up to 5 threads and mushroom on the CPU. */
#define LATTICE_AUTO_GPU_BYTES_PER_THREAD ((uint64_t)768 << 10)

/* Why a rank takes the CPU under auto (bits, or-ed over the ranks). */
enum { AUTO_CPU_SMALL = 1, AUTO_CPU_NO_GPU = 2, AUTO_CPU_NO_AGREEMENT = 4 };

/* auto: the CPU when the input's bytes per thread of the job are too few
 * to pay for a GPU's start-up, decided before the read so that no GPU is
 * started.  Every rank takes the CPU if any does (a rank's threads are
 * its share of its node's cores, and a node may have no GPU), so every
 * rank under auto joins the vote, whatever its own file or device. */
static const fd_device_ops *backend_by_size(fd_job *j)
{
    run *r = j->w;
    if (strcmp(r->a->backend, "auto") != 0) return j->dev;
    struct stat sb;
    const uint64_t threads = (uint64_t)j->threads * (uint64_t)j->mpi.size;
    const int sized = stat(r->a->input, &sb) == 0 && S_ISREG(sb.st_mode);
    r->auto_bytes = sized ? (uint64_t)sb.st_size : 0;
    /* The size first: counting the GPUs starts the driver (0.1 s), which
     * a small input never needs. */
    uint64_t why = !r->auto_asked                                                          ? AUTO_CPU_NO_GPU
                   : sized && r->auto_bytes < LATTICE_AUTO_GPU_BYTES_PER_THREAD * threads ? AUTO_CPU_SMALL
                   : !fd_backend_available(j->dev)                                         ? AUTO_CPU_NO_GPU
                                                                                          : 0;
    if (j->mpi.size > 1 && fd_mpi_or_u64(&why) != FD_OK) {
        fd_errclear();
        why |= AUTO_CPU_NO_AGREEMENT; /* the CPU, which every rank can take */
    }
    r->auto_cpu = (int)why;
    if (!why || !r->auto_asked) return j->dev;
    if (lattice_backend_get("cpu", &r->ops) != FD_OK) {
        fd_errclear();
        r->auto_cpu = 0;
        return j->dev;
    }
    return &r->ops->dev;
}

/* One GPU rank with host threads to spare starts the search on them
 * while its device starts (lattice.c, lattice_host_start), and ends
 * without the device if they finish first.  FD_GPU_HOST_START=off waits
 * for the device (the A/B: bench/results/lattice-gpu-auto.txt).  --edges
 * keeps the device for its covers. */
static int device_late(fd_job *j)
{
    const run *r = j->w;
    return r->ops->device_tasks > 0 && j->threads > 1 && !r->a->edges &&
           !fd_env_switched("FD_GPU_HOST_START");
}

static int late_ready(void *j) { return fd_job_device_ready(j); }

/* The rank is placed on its GPU only now: the search's options learn
 * which (the backend reads them after this). */
static fd_status late_open(void *arg)
{
    fd_job *j = arg;
    run *r = j->w;
    FD_TRY(fd_job_device_open(j));
    r->lo.device = j->device;
    return FD_OK;
}

static int checkpointed(const lattice_job_opts *a) { return a->outdir && a->checkpoint_seconds > 0; }

/* FD_TEST_LATE_DEVICE=N, for tests only: the CPU backend stands in for a
 * lone GPU rank's device that is ready at the N-th question of the host's
 * threads, so that the host start (lattice.c, lattice_host_start), its
 * checkpoints and their resume run where no GPU is (tests/resume.sh).
 * The stand-in is one consumer, as a GPU rank is: one thread, tasks
 * without failed sets. */
static struct {
    atomic_ulong asked;
    unsigned long every;
    struct lattice_ops ops;
} test_device;

static int test_device_ready(void *arg)
{
    (void)arg;
    return atomic_fetch_add(&test_device.asked, 1) + 1 >= test_device.every;
}

static fd_status test_device_open(void *arg)
{
    (void)arg;
    return FD_OK;
}

static fd_status test_device_run(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, task_source *src,
                                 fcbo_stats *stats)
{
    lattice_opts one = *o;
    one.threads = 1;
    return lattice_cpu_ops.run(p, &one, sink, src, stats);
}

static fd_status test_late_device(fd_job *j)
{
    run *r = j->w;
    uint64_t every;
    FD_TRY(fd_env_count("FD_TEST_LATE_DEVICE", 0, UINT32_MAX, 0, "questions", &every));
    if (!every) return FD_OK;
    if (r->ops->device_tasks > 0 || j->mpi.size > 1 || j->threads < 2 || r->a->edges)
        return fd_fail(FD_ERR_USAGE, "FD_TEST_LATE_DEVICE: for one rank of the cpu backend with -t 2 or more, "
                                     "without --edges");
    test_device.every = (unsigned long)every;
    test_device.ops = lattice_cpu_ops;
    test_device.ops.device_tasks = 8;
    test_device.ops.run = test_device_run;
    r->ops = &test_device.ops;
    r->lo.device_ready = test_device_ready;
    r->lo.device_open = test_device_open;
    return FD_OK;
}

static fd_status validate(fd_job *j)
{
    run *r = j->w;
    if (r->a->edges && !r->a->outdir)
        return fd_fail(FD_ERR_USAGE, "--edges writes the covers into DIR/lattice.h5: give -o DIR");
    r->distributed = j->mpi.size > 1;
    if (r->distributed && r->a->text && !r->a->outdir)
        return fd_fail(FD_ERR_USAGE, "with several ranks, --text needs -o DIR: rank 0 prints the intents from "
                                     "DIR/lattice.h5 once every rank has written its part");
    return FD_OK;
}

static fd_status read_context(fd_job *j)
{
    run *r = j->w;
    return fca_context_read(&r->ctx, r->a->input, r->a->fmt);
}

static fd_status same_context(fd_job *j)
{
    run *r = j->w;
    return fd_mpi_same_hash(r->ctx->sha256, r->a->input);
}

/* The search's options, the sink and its writers (the part, or the single
 * file; without checkpoints), the prepared context; then the checkpoint
 * and its router as the sink's writer (collective: agreed first). */
static fd_status setup(fd_job *j)
{
    run *r = j->w;
    const lattice_job_opts *a = r->a;
    lattice_opts *lo = &r->lo;
    fd_status st = FD_OK;
    lo->threads = j->threads;
    lo->device = j->device;
    lo->lone_rank = j->mpi.size == 1;
    if (j->device_late) {
        lo->device_ready = late_ready;
        lo->device_open = late_open;
        lo->device_arg = j;
    }
    FD_TRY(test_late_device(j));
    lo->quiet = a->quiet;
    if (a->min_support_pct >= 0) {
        double ms = ceil(a->min_support_pct / 100.0 * r->ctx->n_obj - 1e-9);
        lo->min_support = ms < 0 ? 0 : (uint32_t)ms;
    } else {
        lo->min_support = a->min_support > UINT32_MAX ? UINT32_MAX : (uint32_t)a->min_support;
    }
    st = concept_sink_init(&r->sink, a->extents, &r->prog);
    r->sink_ok = st == FD_OK;
    /* With checkpoints, concepts go to segments and the part is made from
     * them at the end. */
    if (st == FD_OK && a->outdir && !checkpointed(a)) {
        const char *file = r->distributed ? j->out.part : j->out.result;
        st = lattice_h5_create(&r->h5, file, file, r->ctx, a->extents);
        if (st != FD_OK && r->distributed)
            st = fd_fail(st, "%s: cannot write this rank's part (is %s on a file system every rank sees?)", file,
                         a->outdir);
        if (st == FD_OK) st = concept_sink_add(&r->sink, lattice_h5_as(r->h5));
    }
    if (st == FD_OK && a->text && !r->distributed && !checkpointed(a)) {
        st = text_writer_create(&r->tw, stdout);
        if (st == FD_OK) st = concept_sink_add(&r->sink, text_writer_as(r->tw));
    }
    /* The GPU takes the bitsets: the dense layout for it. */
    if (st == FD_OK)
        st = fcbo_prep_create(&r->prep, r->ctx, lo->min_support,
                              r->ops->device_tasks > 0 ? FCBO_LAYOUT_DENSE : FCBO_LAYOUT_AUTO);
    /* The search reads the prepared copy; only --edges reads the context's
     * incidence again (a fifth of the peak memory on sparse data). */
    if (st == FD_OK && !a->edges) fca_context_drop_incidence(r->ctx);
    FD_TRY(fd_mpi_agree(st, NULL));
    if (!checkpointed(a)) return FD_OK;
    lattice_ckpt_opts co = {a->outdir,        j->out.checkpoint, a->checkpoint_seconds,
                            a->resume,        a->extents,        r->ops->device_tasks > 0,
                            lo->min_support,  lo->threads,       j->mpi.rank,
                            j->mpi.size,      r->distributed ? j->out.part : j->out.result};
    FD_TRY(fd_mpi_agree(lattice_ckpt_open(&r->ck, &co, r->ctx), NULL));
    lo->ckpt = r->ck;
    return concept_sink_add(&r->sink, lattice_ckpt_writer(r->ck));
}

static fd_status run_enumeration(fd_job *j)
{
    run *r = j->w;
    const double t = fd_now();
    fd_progress_start(&r->prog, "concepts", 0, !fd_job_speaks(j));
    const fd_status st = lattice_enumerate(r->prep, &r->lo, r->ops, &r->sink, &r->stats);
    fd_progress_stop(&r->prog);
    r->enum_seconds = fd_now() - t;
    /* The engine is gone; --edges' up pass may still want the GPU. */
    if (st == FD_OK && !r->a->edges) fd_job_device_done(j);
    /* After an MPI failure the others cannot be reached. */
    return st == FD_ERR_MPI ? st : fd_mpi_agree(st, NULL);
}

/* The ranks' first concepts (size + 1), for routing a covering pair to
 * the rank of its lower concept. */
typedef struct {
    const uint64_t *coff;
    int size;
} edge_ranks;

static fd_status route_pairs(void *arg, fd_status local, const uint64_t *pairs, uint64_t np, uint64_t **got,
                             uint64_t *ngot)
{
    const edge_ranks *er = arg;
    fd_status st = FD_OK;
    uint64_t *counts = NULL, *at = NULL, *send = NULL;
    *got = NULL;
    *ngot = 0;
    FD_TRY(fd_mpi_agree(local, NULL));
    if (!(counts = calloc((size_t)er->size + 1, sizeof *counts)) || !(at = calloc((size_t)er->size + 1, sizeof *at)) ||
        !(send = malloc((2 * np + 1) * sizeof *send)))
        st = fd_fail(FD_ERR_NOMEM, "out of memory for the covers' exchange");
    int *owner = NULL;
    if (st == FD_OK && !(owner = malloc((np + 1) * sizeof *owner))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint64_t e = 0; st == FD_OK && e < np; e++) {
        int lo = 0, hi = er->size - 1; /* the last rank whose first concept is <= the lower one */
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (er->coff[mid] <= pairs[2 * e]) lo = mid;
            else hi = mid - 1;
        }
        owner[e] = lo;
        counts[lo] += 2;
    }
    if (st == FD_OK) {
        for (int r = 0; r < er->size; r++) at[r + 1] = at[r] + counts[r];
        for (uint64_t e = 0; e < np; e++) {
            send[at[owner[e]]++] = pairs[2 * e];
            send[at[owner[e]]++] = pairs[2 * e + 1];
        }
    }
    free(owner);
    st = fd_mpi_agree(st, NULL);
    if (st == FD_OK) st = fd_mpi_exchange_u64(send, counts, got, ngot);
    *ngot /= 2;
    free(counts);
    free(at);
    free(send);
    return st;
}

/* --edges on every rank: every rank's intents to every rank (a concept's
 * covers can be anyone's: an all-gather), then the covers of this rank's
 * concepts into its part (or the file), their offsets global. */
static fd_status put_edges(fd_job *j, run *r)
{
    fd_status st = FD_OK;
    const int P = j->mpi.size, me = j->mpi.rank;
    const double t0 = fd_now();
    double t2 = 0;
    uint64_t n = 0, nint = 0, next = 0, *loff = NULL, *off = NULL, *cnt = NULL, *coff = NULL, *ioff = NULL;
    uint64_t *cov_off = NULL, *cov_ids = NULL;
    uint32_t *lids = NULL, *ids = NULL, *lsupp = NULL, *supp = NULL;
    lattice_h5_counts(r->h5, &n, &nint, &next);
    st = lattice_h5_intents(r->h5, &loff, &lids, &lsupp);
    if (st == FD_OK && !((cnt = calloc(2 * (size_t)P, sizeof *cnt)) && (coff = calloc((size_t)P + 1, sizeof *coff)) &&
                         (ioff = calloc((size_t)P + 1, sizeof *ioff))))
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    const uint64_t mine[2] = {n, nint};
    FD_TRY_GOTO(fd_mpi_allgather_u64(mine, 2, cnt), st, done);
    for (int k = 0; k < P; k++) {
        coff[k + 1] = coff[k] + cnt[2 * k];
        ioff[k + 1] = ioff[k] + cnt[2 * k + 1];
    }
    const uint64_t N = coff[P], NI = ioff[P];
    if ((off = calloc(N + 1, sizeof *off)) && (ids = calloc(NI + 1, sizeof *ids)) && (supp = calloc(N + 1, sizeof *supp))) {
        for (uint64_t i = 0; i < n; i++) off[coff[me] + i] = ioff[me] + loff[i];
        off[N] = NI;
        if (nint) memcpy(ids + ioff[me], lids, nint * sizeof *ids);
        if (n) memcpy(supp + coff[me], lsupp, n * sizeof *supp);
    } else {
        st = fd_fail(FD_ERR_NOMEM, "--edges: out of memory for the %llu intents of %llu ids on every rank",
                     (unsigned long long)N, (unsigned long long)NI);
    }
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    FD_TRY_GOTO(fd_mpi_allgather_shares(off, MPI_UINT64_T, coff), st, done);
    FD_TRY_GOTO(fd_mpi_allgather_shares(ids, MPI_UINT32_T, ioff), st, done);
    FD_TRY_GOTO(fd_mpi_allgather_shares(supp, MPI_UINT32_T, coff), st, done);
    fd_progress prog = {0};
    fd_progress_start(&prog, "concepts' covers", P > 1 ? N / (uint64_t)P : n, !fd_job_speaks(j));
    edge_ranks er = {coff, P};
    /* Each rank finds the covers of an even share (parts can be uneven),
     * and the pairs go to the ranks whose parts hold them. */
    const uint64_t w0 = P > 1 ? N * (uint64_t)me / (uint64_t)P : 0, w1 = P > 1 ? N * ((uint64_t)me + 1) / (uint64_t)P : n;
    const lattice_covers_job cj = {.ctx = r->ctx,
                                   .n = N,
                                   .off = off,
                                   .ids = ids,
                                   .min_support = r->lo.min_support,
                                   .supports = supp,
                                   .first = coff[me],
                                   .count = n,
                                   .work_first = w0,
                                   .work_count = w1 - w0,
                                   .threads = r->lo.threads,
                                   .prog = &prog,
                                   .route = P > 1 ? route_pairs : NULL,
                                   .route_arg = &er,
                                   .up_covers = r->ops->up_covers,
                                   .device = r->lo.device};
    const double t1 = fd_now();
    r->edges_phase[0] = t1 - t0;
    st = lattice_covers(&cj, &cov_off, &cov_ids, &r->pass);
    t2 = fd_now();
    r->edges_phase[1] = t2 - t1;
    fd_progress_stop(&prog);
    FD_TRY_GOTO(fd_mpi_agree(st, NULL), st, done);
    uint64_t before = 0;
    r->n_edges = cov_off[n];
    FD_TRY_GOTO(fd_mpi_exscan_u64(&r->n_edges, &before, 1), st, done);
    for (uint64_t i = 0; i <= n; i++) cov_off[i] += before;
    st = lattice_h5_put_covers(r->h5, cov_off, cov_ids);
    st = fd_mpi_agree(st, NULL);
done:
    free(loff);
    free(lids);
    free(lsupp);
    free(off);
    free(ids);
    free(supp);
    free(cnt);
    free(coff);
    free(ioff);
    free(cov_off);
    free(cov_ids);
    r->edges_seconds = fd_now() - t0;
    r->edges_phase[2] = t2 > 0 ? fd_now() - t2 : 0;
    return st;
}

/* What this rank did, for rank 0's table. */
typedef struct rank_report {
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
    l->edges = r->n_edges;
    /* A GPU rank is one worker: its busy time is the device loop's. */
    h5part_rank_times(&l->r, r->stats.busy_seconds, r->ops->dev.devices ? 1 : r->lo.threads, r->enum_seconds);
    rep->stats = r->stats;
}

/* The output.  With checkpoints, this rank's part (or the single file) is
 * first made from the segments of this run and its share of earlier
 * runs'.  Single file: rename it.  Parts: turn local offsets into global
 * ones, commit every part, agree, then rank 0 writes the master over
 * them.  --text with several ranks or checkpoints: rank 0 prints the
 * intents from the result. */
static fd_status commit(fd_job *j)
{
    run *r = j->w;
    const lattice_job_opts *a = r->a;
    fd_status st = FD_OK;
    if (r->ck)
        FD_TRY(fd_mpi_agree(lattice_ckpt_build(r->ck, r->distributed ? j->out.part : j->out.result, &r->h5), NULL));
    /* Every rank has its part or file here: --edges needs -o. */
    if (a->edges) FD_TRY(put_edges(j, r));
    rank_report mine;
    fill_report(r, &mine);
    if (r->distributed) {
        uint64_t here[3] = {mine.rank.r.results, mine.rank.int_ids, mine.rank.ext_ids}, before[3];
        FD_TRY(fd_mpi_exscan_u64(here, before, 3));
        if (r->h5) {
            lattice_part part = {j->mpi.rank, j->mpi.size, before[0], before[1], before[2]};
            st = lattice_h5_commit_part(&r->h5, r->ctx, &part);
            if (st == FD_OK) rd_part_committed(&j->out);
        }
        FD_TRY(fd_mpi_agree(st, NULL));
    }
    if (!(r->reps = calloc((size_t)j->mpi.size, sizeof *r->reps))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    FD_TRY(fd_mpi_agree(st, NULL));
    FD_TRY(fd_mpi_gather_bytes(&mine, sizeof mine, r->reps));
    if (j->mpi.rank == 0) {
        for (int k = 0; k < j->mpi.size; k++) fcbo_stats_add(&r->total, &r->reps[k].stats);
        lattice_meta meta = {a->command,      r->ops->dev.name,        r->lo.min_support,
                             r->lo.threads,   j->mpi.size,             fd_now() - j->t0,
                             r->total,        r->ck ? a->checkpoint_seconds : 0,
                             r->ck ? lattice_ckpt_resumed(r->ck) : 0};
        if (a->outdir && !r->distributed) {
            st = lattice_h5_commit(&r->h5, r->ctx, &meta);
        } else if (a->outdir) {
            lattice_rank *rs = calloc((size_t)j->mpi.size, sizeof *rs);
            if (!rs) st = fd_fail(FD_ERR_NOMEM, "out of memory");
            for (int k = 0; rs && k < j->mpi.size; k++) rs[k] = r->reps[k].rank;
            if (rs) st = lattice_master_write(j->out.result, j->out.run_id, r->ctx, &meta, rs, j->mpi.size, a->extents, a->edges);
            free(rs);
        }
    }
    /* Only rank 0 knows whether the master was written. */
    FD_TRY(fd_mpi_agree(st, NULL));
    if (j->mpi.rank == 0 && a->text && (r->distributed || r->ck)) st = lattice_read_text(j->out.result, stdout);
    return st;
}

static void report(fd_job *j)
{
    const run *r = j->w;
    const lattice_job_opts *a = r->a;
    const fcbo_stats *s = &r->total;
    const double secs = fd_now() - j->t0;
    const char *out = j->out.result ? j->out.result : "";
    /* A resumed run wrote the concepts of earlier runs too. */
    uint64_t concepts = s->concepts;
    if (r->ck) {
        concepts = 0;
        for (int k = 0; k < j->mpi.size; k++) concepts += r->reps[k].rank.r.results;
    }
    fprintf(stderr, "%llu concepts in %.3f s (%.3g concepts/s), backend %s, ", (unsigned long long)concepts, secs,
            secs > 0 ? (double)s->concepts / secs : 0.0, r->ops->dev.name);
    if (j->mpi.size > 1) fprintf(stderr, "%d ranks x ", j->mpi.size);
    if (r->ops->dev.devices && j->device_pending) /* the host's threads did it all */
        fprintf(stderr, "the GPU not opened, %d threads%s%s\n", lattice_host_threads(r->lo.threads),
                *out ? "; wrote " : "", out);
    else if (r->ops->dev.devices) fprintf(stderr, "GPU %d%s%s\n", r->lo.device, *out ? "; wrote " : "", out);
    else fprintf(stderr, "%d thread%s%s%s\n", r->lo.threads, r->lo.threads == 1 ? "" : "s", *out ? "; wrote " : "", out);
    if (r->ck && lattice_ckpt_resumed(r->ck))
        fprintf(stderr, "resumed: %llu subtrees were done by earlier runs (concepts/s counts this run's)\n",
                (unsigned long long)lattice_ckpt_resumed(r->ck));
    if (a->edges) {
        uint64_t edges = 0;
        for (int k = 0; k < j->mpi.size; k++) edges += r->reps[k].rank.edges;
        fprintf(stderr, "%llu covering pairs (--edges) in %.3f s%s, ", (unsigned long long)edges, r->edges_seconds,
                j->mpi.size > 1 ? " (rank 0's)" : "");
        if (r->pass.down) fprintf(stderr, "pass down (lower covers from the extents)\n");
        else
            fprintf(stderr, "pass up (upper covers; %llu of %llu concepts%s by rows%s, the rest by columns)\n",
                    (unsigned long long)r->pass.by_rows, (unsigned long long)r->pass.concepts,
                    j->mpi.size > 1 ? " of rank 0's share" : "",
                    r->pass.on_device == r->pass.by_rows && r->pass.on_device ? " on the GPU" : "");
        if (r->pass.on_device && r->pass.on_device != r->pass.by_rows)
            fprintf(stderr, "  %llu of them on the GPU\n", (unsigned long long)r->pass.on_device);
        if (a->stats)
            fprintf(stderr, "covers: the intents gathered %.3f s, the covers found %.3f s, written %.3f s%s\n",
                    r->edges_phase[0], r->edges_phase[1], r->edges_phase[2], j->mpi.size > 1 ? " (rank 0's)" : "");
    }
    if (!a->stats) return;
    /* Rank 0's phases: the enumeration includes writing the concepts
     * (writer threads take them as they come); output is the merge of
     * checkpoint segments, the parts' commit and the master. */
    if (r->auto_asked && (r->auto_cpu & AUTO_CPU_SMALL))
        fprintf(stderr, "backend cpu: auto, the input's %llu bytes are below %llu for each of the job's %llu threads, "
                        "under which a GPU's start-up costs more than it saves (--backend cuda runs it there)\n",
                (unsigned long long)r->auto_bytes, (unsigned long long)LATTICE_AUTO_GPU_BYTES_PER_THREAD,
                (unsigned long long)r->lo.threads * (unsigned long long)j->mpi.size);
    else if (r->auto_asked && r->auto_cpu)
        fprintf(stderr, "backend cpu: auto, as %s\n",
                r->auto_cpu & AUTO_CPU_NO_GPU ? "a rank has no GPU" : "the ranks could not agree on the GPU");
    fprintf(stderr,
            "setup %.4f s (reading the context, the output, the device), enumeration %.4f s (rank 0, of which %.4f s "
            "splitting the tree or committing its top; concepts are written as they come), output %.4f s\n",
            j->setup_s, r->enum_seconds, s->split_seconds, j->commit_s);
    if (s->host_seconds > 0 && j->device_pending)
        fprintf(stderr,
                "the host's %d threads ran all %llu concepts in %.4f s while the GPU started beside them; the GPU "
                "was not needed, and its start is not waited for (FD_GPU_HOST_START=on)\n",
                lattice_host_threads(r->lo.threads), (unsigned long long)s->host_concepts, s->host_seconds);
    else if (s->host_seconds > 0)
        fprintf(stderr,
                "the host's %d threads ran %llu concepts in %.4f s while the GPU started beside them, then waited "
                "%.4f s for it (FD_GPU_HOST_START=on)\n",
                lattice_host_threads(r->lo.threads), (unsigned long long)s->host_concepts, s->host_seconds,
                j->late_wait_s);
    fprintf(stderr,
            "closures %llu  canonicity failures %llu  pruned by failed sets %llu  below min support %llu  "
            "subtrees %llu  layout %s\n",
            (unsigned long long)s->closures, (unsigned long long)s->fails, (unsigned long long)s->skipped_nj,
            (unsigned long long)s->skipped_support, (unsigned long long)s->tasks, r->prep->sparse ? "sparse" : "dense");
    h5part_rank *rows = calloc((size_t)j->mpi.size, sizeof *rows);
    if (!rows) return;
    for (int k = 0; k < j->mpi.size; k++) rows[k] = r->reps[k].rank.r;
    h5part_print_ranks(stderr, "concepts", "subtrees", rows, j->mpi.size);
    free(rows);
}

static void close_run(fd_job *j, fd_status st)
{
    run *r = j->w;
    lattice_h5_abort(&r->h5);
    lattice_ckpt_close(&r->ck, st, r->a->quiet);
    text_writer_destroy(&r->tw);
    if (r->sink_ok) concept_sink_destroy(&r->sink);
    fcbo_prep_destroy(&r->prep);
    fca_context_destroy(&r->ctx);
    free(r->reps);
}

static const fd_job_ops lattice_job_ops = {
    .validate = validate,
    .backend_by_size = backend_by_size,
    .read = read_context,
    .check_input = same_context,
    .setup = setup,
    .device_late = device_late,
    .run = run_enumeration,
    .commit = commit,
    .report = report,
    .close = close_run,
};

fd_status lattice_job_run(const lattice_job_opts *a)
{
    run r;
    memset(&r, 0, sizeof r);
    r.a = a;
    if (!strcmp(a->backend, "auto")) {
        /* Whether it can run is asked after the size rule (backend_by_size). */
        r.ops = lattice_backend_fastest();
        r.auto_asked = r.ops->device_tasks > 0;
    } else {
        /* Whether it can run here is asked beside the read (job.c). */
        FD_TRY(lattice_backend_find(a->backend, &r.ops));
    }
    const fd_job_opts jo = {.workload = "lattice", .outdir = a->outdir, .force = a->force, .resume = a->resume,
                            .quiet = a->quiet, .stats = a->stats, .threads = a->threads, .parts = 1};
    return fd_job_run(&lattice_job_ops, &jo, &r.ops->dev, &r);
}
