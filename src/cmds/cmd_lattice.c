/* fcbo-dist lattice: read a context, enumerate its concepts with the chosen
 * backend, write DIR/lattice.h5 (and/or intents as text). */
#include "../common/clock.h"
#include "../common/progress.h"
#include "../lattice/context.h"
#include "../lattice/lattice.h"
#include "../lattice/lattice_h5.h"
#include "../mpi/fdmpi.h"
#include "../mpi/placement.h"
#include "cmds.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *help =
    "usage: fcbo-dist lattice CONTEXT [-o DIR] [OPTIONS]\n"
    "       mpirun -np P fcbo-dist lattice CONTEXT -o DIR [OPTIONS]\n\n"
    "Enumerates all formal concepts (extent, intent) of a binary context with\n"
    "Fast Close-by-One, writing DIR/lattice.h5 (see docs/formats.md).  Under\n"
    "mpirun or srun, rank 0 splits the search tree and hands subtrees out on\n"
    "request; each rank writes DIR/part-RRRRR.h5 and rank 0 writes\n"
    "DIR/lattice.h5, which reads as one lattice over all parts.  DIR must be\n"
    "on a file system that every rank sees.\n\n"
    "input:\n"
    "  CONTEXT               Burmeister .cxt, FIMI .dat (one object per line,\n"
    "                        its attribute ids), or 0/1 .csv/.tsv (optional\n"
    "                        header row and name column)\n"
    "  --format F            cxt | dat | csv | tsv, when the extension does not say\n"
    "selection:\n"
    "  --min-support N|P%    only concepts whose extent has at least N objects\n"
    "                        (or P percent of them): the iceberg lattice\n"
    "output:\n"
    "  -o, --output DIR      write DIR/lattice.h5; DIR must not exist unless --force\n"
    "  --force               write into an existing DIR, replacing its lattice.h5\n"
    "  --extents             also store every extent (object ids)\n"
    "  --text                print intents to stdout, one per line, attribute ids\n"
    "                        ascending and separated by blanks (any order of lines);\n"
    "                        with several ranks, rank 0 prints them from DIR at the end\n"
    "execution:\n"
    "  -t, --threads T       worker threads per rank (default: the cores the launcher\n"
    "                        bound the rank to, else the node's cores / ranks on it)\n"
    "  --backend B           cpu | cuda | auto (default auto: the GPU when there is one)\n"
    "  --stats               print the search counters (closures, failures, pruning)\n"
    "                        and, per rank, concepts, subtrees, busy and idle seconds\n"
    "  -q, --quiet           no progress line and no summary\n"
    "  -h, --help            this text\n\n"
    "Attribute ids in the output are the user's: the numbers of a FIMI file,\n"
    "the 0-based column of a .cxt or CSV file.  Exit status 2 on bad input.\n";

typedef struct {
    const char *input, *outdir, *backend;
    ctx_format fmt;
    uint64_t min_support;
    double min_support_pct;  /* < 0 when given as a count */
    int threads, extents, text, force, quiet, stats;
} lattice_args;

static fd_status parse_args(int argc, char **argv, lattice_args *a, int *done)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'},  {"format", required_argument, 0, 'f'},
        {"min-support", required_argument, 0, 's'}, {"threads", required_argument, 0, 't'},
        {"backend", required_argument, 0, 'b'}, {"extents", no_argument, 0, 'e'},
        {"text", no_argument, 0, 'x'},          {"force", no_argument, 0, 'F'},
        {"quiet", no_argument, 0, 'q'},         {"stats", no_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->backend = "auto";
    a->min_support_pct = -1;
    a->threads = 0; /* from the placement, once the ranks are known */
    int c;
    uint32_t t;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:t:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': a->outdir = optarg; break;
        case 'f':
            a->fmt = ctx_format_from_name(optarg);
            if (a->fmt == CTX_FMT_AUTO) return fd_fail(FD_ERR_USAGE, "--format: '%s' is not one of cxt, dat, csv, tsv", optarg);
            break;
        case 's': {
            size_t n = strlen(optarg);
            if (n && optarg[n - 1] == '%') {
                char buf[64];
                snprintf(buf, sizeof buf, "%.*s", (int)(n - 1), optarg);
                FD_TRY(opt_f64("--min-support", buf, 0, 100, &a->min_support_pct));
            } else FD_TRY(opt_u64("--min-support", optarg, &a->min_support));
            break;
        }
        case 't': FD_TRY(opt_u32("--threads", optarg, 1, 4096, &t)); a->threads = (int)t; break;
        case 'b': a->backend = optarg; break;
        case 'e': a->extents = 1; break;
        case 'x': a->text = 1; break;
        case 'F': a->force = 1; break;
        case 'q': a->quiet = 1; break;
        case 'S': a->stats = 1; break;
        case 'h': fputs(help, stdout); *done = 1; return FD_OK;
        default: return opt_bad("lattice");
        }
    }
    if (optind != argc - 1)
        return fd_fail(FD_ERR_USAGE, "lattice needs exactly one CONTEXT file; see 'fcbo-dist lattice --help'");
    a->input = argv[optind];
    return FD_OK;
}

/* Creates DIR (refusing an existing one without --force); *created tells
 * whether to remove it again on failure. */
static fd_status prepare_outdir(const char *dir, int force, int *created)
{
    struct stat sb;
    *created = 0;
    if (stat(dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) return fd_fail(FD_ERR_USAGE, "%s exists and is not a directory", dir);
        if (!force) return fd_fail(FD_ERR_USAGE, "%s exists; use --force to write into it", dir);
        return FD_OK;
    }
    if (mkdir(dir, 0777) != 0) return fd_fail(FD_ERR_IO, "%s: cannot create the output directory: %s", dir, strerror(errno));
    *created = 1;
    return FD_OK;
}

/* Everything one run holds, so that every stage can clean up after any
 * other.  With several ranks each rank has its own. */
typedef struct {
    const lattice_args *a;
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
    char *master, *part;      /* DIR/lattice.h5, DIR/part-RRRRR.h5 */
    int created;              /* rank 0 created DIR */
    int part_done;            /* the part is renamed into place */
    double t0, enum_seconds;
} run;

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Stage 1, rank 0: the output directory, before any rank writes into it.
 * A master file from an earlier run goes first, so that no complete-looking
 * lattice.h5 sits next to parts of this run. */
static fd_status stage_outdir(run *r)
{
    const lattice_args *a = r->a;
    if (r->distributed && a->text && !a->outdir)
        return fd_fail(FD_ERR_USAGE, "with several ranks, --text needs -o DIR: rank 0 prints the intents from "
                                     "DIR/lattice.h5 once every rank has written its part");
    if (!a->outdir) return FD_OK;
    r->master = path_in(a->outdir, "lattice.h5");
    if (!r->master) return fd_fail(FD_ERR_NOMEM, "out of memory");
    if (r->mpi.rank != 0) return FD_OK;
    FD_TRY(prepare_outdir(a->outdir, a->force, &r->created));
    if (unlink(r->master) != 0 && errno != ENOENT)
        return fd_fail(FD_ERR_IO, "%s: cannot remove the result of an earlier run: %s", r->master, strerror(errno));
    return FD_OK;
}

/* Every rank must enumerate the same context: compare with rank 0's hash. */
static fd_status same_input(const run *r)
{
    fd_status st = FD_OK;
    char sha[sizeof r->ctx->sha256];
    if (!r->distributed) return FD_OK;
    memcpy(sha, r->ctx->sha256, sizeof sha);
    MPI_CHECK_GOTO(MPI_Bcast(sha, (int)sizeof sha, MPI_CHAR, 0, MPI_COMM_WORLD), st, done);
    if (memcmp(sha, r->ctx->sha256, sizeof sha) != 0)
        st = fd_fail(FD_ERR_INPUT, "%s differs from the file rank 0 read (SHA-256 %.16s... against %.16s...)",
                     r->a->input, r->ctx->sha256, sha);
done:
    return st;
}

/* Stage 2, every rank: read the input, open the writers.  The hash check
 * is collective, so every rank reaches it even when its read failed. */
static fd_status stage_setup(run *r)
{
    const lattice_args *a = r->a;
    fd_status st = lattice_backend_get(a->backend, &r->ops);
    if (st == FD_OK) st = fca_context_read(&r->ctx, a->input, a->fmt);
    if (r->distributed) {
        fd_status agreed = fd_mpi_agree(st, NULL);
        if (agreed != FD_OK) return st != FD_OK ? st : agreed;
    } else if (st != FD_OK) {
        return st;
    }
    FD_TRY(same_input(r));
    lattice_opts *lo = &r->lo;
    lo->threads = a->threads > 0 ? a->threads : fd_place_threads(&r->mpi);
    lo->quiet = a->quiet;
    if (a->min_support_pct >= 0) {
        double ms = ceil(a->min_support_pct / 100.0 * r->ctx->n_obj - 1e-9);
        lo->min_support = ms < 0 ? 0 : (uint32_t)ms;
    } else {
        lo->min_support = a->min_support > UINT32_MAX ? UINT32_MAX : (uint32_t)a->min_support;
    }
    FD_TRY(concept_sink_init(&r->sink, a->extents, &r->prog));
    r->sink_ok = 1;
    if (a->outdir) {
        const char *file = r->master;
        if (r->distributed) {
            char name[32];
            lattice_part_name(name, sizeof name, r->mpi.rank);
            if (!(r->part = path_in(a->outdir, name))) return fd_fail(FD_ERR_NOMEM, "out of memory");
            file = r->part;
        }
        st = lattice_h5_create(&r->h5, file, r->ctx, a->extents);
        if (st != FD_OK && r->distributed)
            return fd_fail(st, "%s: cannot write this rank's part (is %s on a file system every rank sees?)", file,
                           a->outdir);
        FD_TRY(st);
        FD_TRY(concept_sink_add(&r->sink, lattice_h5_as(r->h5)));
    }
    if (a->text && !r->distributed) {
        FD_TRY(text_writer_create(&r->tw, stdout));
        FD_TRY(concept_sink_add(&r->sink, text_writer_as(r->tw)));
    }
    return fcbo_prep_create(&r->prep, r->ctx, lo->min_support);
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
    if (r->h5) lattice_h5_counts(r->h5, &l->concepts, &l->int_ids, &l->ext_ids);
    else l->concepts = r->stats.concepts;
    l->subtrees = r->stats.tasks;
    l->closures = r->stats.closures;
    l->threads = (uint32_t)r->lo.threads;
    l->busy_seconds = r->lo.threads > 0 ? r->stats.busy_seconds / r->lo.threads : 0;
    l->idle_seconds = r->enum_seconds > l->busy_seconds ? r->enum_seconds - l->busy_seconds : 0;
    gethostname(l->host, sizeof l->host - 1);
    rep->stats = r->stats;
}

static void print_summary(const run *r, const fcbo_stats *s, const rank_report *reps, double secs)
{
    const lattice_args *a = r->a;
    if (a->quiet || r->mpi.rank != 0) return;
    const char *out = r->master ? r->master : "";
    fprintf(stderr, "%llu concepts in %.3f s (%.3g concepts/s), backend %s, ", (unsigned long long)s->concepts,
            secs, secs > 0 ? (double)s->concepts / secs : 0.0, r->ops->name);
    if (r->mpi.size > 1) fprintf(stderr, "%d ranks x ", r->mpi.size);
    fprintf(stderr, "%d thread%s%s%s\n", r->lo.threads, r->lo.threads == 1 ? "" : "s", *out ? "; wrote " : "", out);
    if (!a->stats) return;
    fprintf(stderr,
            "closures %llu  canonicity failures %llu  pruned by failed sets %llu  below min support %llu  "
            "subtrees %llu\n",
            (unsigned long long)s->closures, (unsigned long long)s->fails, (unsigned long long)s->skipped_nj,
            (unsigned long long)s->skipped_support, (unsigned long long)s->tasks);
    int P = r->mpi.size;
    uint64_t *c = calloc((size_t)P, sizeof *c), *t = calloc((size_t)P, sizeof *t);
    double *b = calloc((size_t)P, sizeof *b), *i = calloc((size_t)P, sizeof *i);
    if (c && t && b && i) {
        for (int k = 0; k < P; k++) {
            c[k] = reps[k].stats.concepts;
            t[k] = reps[k].rank.subtrees;
            b[k] = reps[k].rank.busy_seconds;
            i[k] = reps[k].rank.idle_seconds;
        }
        lattice_print_rank_table(stderr, c, t, b, i, P);
    }
    free(c);
    free(t);
    free(b);
    free(i);
}

/* Rank 0, after success: part files of an earlier run with more ranks
 * (or any, after a single-file run) would confuse whoever lists DIR. */
static void remove_stale_parts(const run *r)
{
    if (!r->a->outdir) return;
    for (int k = r->distributed ? r->mpi.size : 0;; k++) {
        char name[32];
        lattice_part_name(name, sizeof name, k);
        char *p = path_in(r->a->outdir, name);
        int gone = !p || unlink(p) != 0;
        free(p);
        if (gone) break;
    }
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
        uint64_t here[3] = {mine.rank.concepts, mine.rank.int_ids, mine.rank.ext_ids}, before[3];
        FD_TRY(fd_mpi_exscan_u64(here, before, 3));
        if (r->h5) {
            lattice_part part = {r->mpi.rank, r->mpi.size, before[0], before[1], before[2]};
            st = lattice_h5_commit_part(&r->h5, r->ctx, &part);
            if (st == FD_OK) r->part_done = 1;
        }
        FD_TRY(fd_mpi_agree(st, NULL));
    }
    FD_TRY(fd_mpi_gather_bytes(&mine, sizeof mine, reps));
    if (r->mpi.rank != 0) return FD_OK;
    for (int k = 0; k < r->mpi.size; k++) fcbo_stats_add(total, &reps[k].stats);
    lattice_meta meta = {fd_command_line, r->ops->name, r->lo.min_support, r->lo.threads, r->mpi.size,
                         fd_now() - r->t0, *total};
    if (!r->a->outdir) return FD_OK;
    if (!r->distributed) return lattice_h5_commit(&r->h5, r->ctx, &meta);
    lattice_rank *rs = calloc((size_t)r->mpi.size, sizeof *rs);
    if (!rs) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (int k = 0; k < r->mpi.size; k++) rs[k] = reps[k].rank;
    st = lattice_master_write(r->master, r->ctx, &meta, rs, r->mpi.size, r->a->extents);
    free(rs);
    return st;
}

static void cleanup(run *r, fd_status st)
{
    lattice_h5_abort(&r->h5);
    text_writer_destroy(&r->tw);
    if (r->sink_ok) concept_sink_destroy(&r->sink);
    if (st != FD_OK && r->part_done) unlink(r->part);
    /* Rank 0 may remove DIR only once every rank has removed its part. */
    if (st != FD_OK && r->distributed && st != FD_ERR_MPI) MPI_Barrier(MPI_COMM_WORLD);
    if (st != FD_OK && r->created) rmdir(r->a->outdir);
    fcbo_prep_destroy(&r->prep);
    fca_context_destroy(&r->ctx);
    free(r->master);
    free(r->part);
}

static fd_status run_lattice(const lattice_args *a, const fd_mpi *mpi)
{
    run r;
    memset(&r, 0, sizeof r);
    r.a = a;
    r.mpi = *mpi;
    r.distributed = mpi->size > 1;
    r.t0 = fd_now();
    fcbo_stats total = {0};
    rank_report *reps = NULL;

    fd_status st = stage_outdir(&r);
    st = fd_mpi_agree(st, NULL);
    if (st == FD_OK) st = fd_mpi_agree(stage_setup(&r), NULL);
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
    if (st == FD_OK) {
        reps = calloc((size_t)mpi->size, sizeof *reps);
        st = reps ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
        if (st == FD_OK) st = stage_commit(&r, reps, &total);
        /* Only rank 0 knows whether the master was written. */
        if (st != FD_ERR_MPI) st = fd_mpi_agree(st, NULL);
    }
    if (st == FD_OK && mpi->rank == 0) {
        remove_stale_parts(&r);
        print_summary(&r, &total, reps, fd_now() - r.t0);
        if (a->text && r.distributed) st = lattice_h5_text(r.master, stdout);
    }
done:
    cleanup(&r, st);
    free(reps);
    return st;
}

fd_status cmd_lattice(int argc, char **argv)
{
    lattice_args a;
    int done = 0;
    fd_mpi mpi = {0, 1, 0, 1};
    fd_status st = parse_args(argc, argv, &a, &done);
    if (done) return FD_OK;
    /* Every rank parses the same command line, so a usage error happens
     * everywhere and needs no agreement. */
    if (st != FD_OK) return st;
    FD_TRY(fd_mpi_query(&mpi));
    return run_lattice(&a, &mpi);
}
