/* fcbo-dist lattice: read a context, enumerate its concepts with the chosen
 * backend, write DIR/lattice.h5 (and/or intents as text). */
#include "../common/clock.h"
#include "../common/progress.h"
#include "../lattice/context.h"
#include "../lattice/lattice.h"
#include "../lattice/lattice_h5.h"
#include "../mpi/fdmpi.h"
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
    "usage: fcbo-dist lattice CONTEXT [-o DIR] [OPTIONS]\n\n"
    "Enumerates all formal concepts (extent, intent) of a binary context with\n"
    "Fast Close-by-One, writing DIR/lattice.h5 (see docs/formats.md).\n\n"
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
    "                        ascending and separated by blanks (any order of lines)\n"
    "execution:\n"
    "  -t, --threads T       worker threads per rank (default: all cores)\n"
    "  --backend B           cpu | cuda | auto (default auto: the GPU when there is one)\n"
    "  --stats               print the search counters (closures, failures, pruning)\n"
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
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    a->threads = ncpu > 0 ? (int)ncpu : 1;
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

static void print_summary(const lattice_args *a, const fcbo_stats *s, double secs, const char *backend,
                          const char *outfile)
{
    if (a->quiet) return;
    fprintf(stderr, "%llu concepts in %.3f s (%.3g concepts/s), backend %s, %d thread%s%s%s\n",
            (unsigned long long)s->concepts, secs, secs > 0 ? (double)s->concepts / secs : 0.0, backend,
            a->threads, a->threads == 1 ? "" : "s", outfile ? "; wrote " : "", outfile ? outfile : "");
    if (a->stats)
        fprintf(stderr,
                "closures %llu  canonicity failures %llu  pruned by failed sets %llu  below min support %llu  "
                "subtrees %llu\n",
                (unsigned long long)s->closures, (unsigned long long)s->fails, (unsigned long long)s->skipped_nj,
                (unsigned long long)s->skipped_support, (unsigned long long)s->tasks);
}

/* The whole run on one rank.  Nothing is left in DIR unless it succeeds. */
static fd_status run_local(const lattice_args *a)
{
    fd_status st = FD_OK;
    fca_context *ctx = NULL;
    fcbo_prep *prep = NULL;
    lattice_h5 *h5 = NULL;
    text_writer *tw = NULL;
    const struct lattice_ops *ops = NULL;
    concept_sink sink;
    fd_progress prog;
    fcbo_stats stats = {0};
    char *outfile = NULL;
    int created = 0, sink_ok = 0;
    double t0 = fd_now();

    FD_TRY(lattice_backend_get(a->backend, &ops));
    FD_TRY(fca_context_read(&ctx, a->input, a->fmt));
    lattice_opts lo = {0};
    lo.threads = a->threads;
    lo.quiet = a->quiet;
    if (a->min_support_pct >= 0) {
        double ms = ceil(a->min_support_pct / 100.0 * ctx->n_obj - 1e-9);
        lo.min_support = ms < 0 ? 0 : (uint32_t)ms;
    } else {
        lo.min_support = a->min_support > UINT32_MAX ? UINT32_MAX : (uint32_t)a->min_support;
    }

    if (a->outdir) {
        FD_TRY_GOTO(prepare_outdir(a->outdir, a->force, &created), st, done);
        size_t n = strlen(a->outdir) + 16;
        outfile = malloc(n);
        if (!outfile) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
        snprintf(outfile, n, "%s/lattice.h5", a->outdir);
    }
    FD_TRY_GOTO(concept_sink_init(&sink, a->extents, &prog), st, done);
    sink_ok = 1;
    if (outfile) {
        FD_TRY_GOTO(lattice_h5_create(&h5, outfile, ctx, a->extents), st, done);
        FD_TRY_GOTO(concept_sink_add(&sink, lattice_h5_as(h5)), st, done);
    }
    if (a->text) {
        FD_TRY_GOTO(text_writer_create(&tw, stdout), st, done);
        FD_TRY_GOTO(concept_sink_add(&sink, text_writer_as(tw)), st, done);
    }
    FD_TRY_GOTO(fcbo_prep_create(&prep, ctx, lo.min_support), st, done);
    fd_progress_start(&prog, "concepts", a->quiet);
    st = lattice_enumerate(prep, &lo, ops, &sink, &stats);
    fd_progress_stop(&prog);
    if (st != FD_OK) goto done;
    double secs = fd_now() - t0;
    if (h5) {
        lattice_meta meta = {fd_command_line, ops->name, lo.min_support, a->threads, 1, secs, stats};
        FD_TRY_GOTO(lattice_h5_commit(&h5, ctx, &meta), st, done);
    }
    print_summary(a, &stats, fd_now() - t0, ops->name, outfile);
done:
    lattice_h5_abort(&h5);
    text_writer_destroy(&tw);
    if (sink_ok) concept_sink_destroy(&sink);
    if (st != FD_OK && created) rmdir(a->outdir);
    fcbo_prep_destroy(&prep);
    fca_context_destroy(&ctx);
    free(outfile);
    return st;
}

fd_status cmd_lattice(int argc, char **argv)
{
    lattice_args a;
    int done = 0;
    fd_status st = parse_args(argc, argv, &a, &done);
    if (done) return FD_OK;
    fd_mpi mpi = {0, 1, 0, 1};
    if (st == FD_OK) st = fd_mpi_query(&mpi);
    /* Until the search is distributed (issue #3), rank 0 does the work and
     * the others wait for its verdict, so every rank exits alike. */
    if (mpi.rank == 0 && st == FD_OK) st = run_local(&a);
    int failed_rank = 0;
    fd_status all = fd_mpi_agree(st, &failed_rank);
    if (st == FD_OK && all != FD_OK && mpi.rank != 0) return all;
    return st != FD_OK ? st : all;
}
