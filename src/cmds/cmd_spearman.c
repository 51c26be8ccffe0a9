/* SPDX-License-Identifier: BSD-3-Clause */
/* fcbo-dist spearman: the command line.  The run, on one rank or many, is
 * spearman_job_run (src/spearman/spearman_job.c). */
#include "../common/backend.h"
#include "../spearman/spearman_job.h"
#include "../io/h5util.h"
#include "cmds.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_MISSING = 0x300, OPT_METHOD };

static const char *help =
    "usage: fcbo-dist spearman MATRIX [-o DIR] [OPTIONS]   (correlates ROWS; --by columns\n"
    "       mpirun -np P fcbo-dist spearman MATRIX -o DIR [OPTIONS]   for columns)\n\n"
    "Spearman's rho and its two-sided p-value (as scipy.stats.spearmanr) for\n"
    "every pair of rows i < j of MATRIX (rows are variables, columns are\n"
    "observations, unlike pandas and scipy, which correlate columns: --by\n"
    "columns does that), computed exactly from integer ranks; writes the selected\n"
    "pairs (i, j, rho, p) to DIR/spearman.h5 (see docs/formats.md).  Under\n"
    "mpirun, rank 0 hands out tiles of the pair matrix; each rank writes a\n"
    "part (DIR/spearman.RUNID.part-RRRRR.h5) and rank 0 the master\n"
    "DIR/spearman.h5 over them.\n\n"
    "input:\n"
    "  MATRIX                whitespace-separated numbers (one row per line),\n"
    "                        .csv, .npy or FILE.h5:/dataset (2-D; 1-D: one column); blank\n"
    "                        lines are skipped\n"
    OPT_HEADER_HELP
    "  --by rows|columns     the variables: rows (default) or columns (as pandas'\n"
    "                        DataFrame.corr; the whole matrix is read first);\n"
    "                        i and j number them from 0 either way\n"
    "  --row-names           text and CSV: the first field of each line names its\n"
    "                        row (pandas' index column); with --by rows the names\n"
    "                        go to the output (/names) and info --text\n"
    "  --y FILE2             pairs of rows of MATRIX with rows of FILE2 (all of them)\n"
    "  --drop-nan-rows       skip rows with NaN or infinite values (default: refuse)\n"
    "  --method M            spearman (default) or kendall: Kendall's tau-b with\n"
    "                        ties, p as scipy.stats.kendalltau (exact for small\n"
    "                        untied rows); rows of up to 256 observations; selects\n"
    "                        by --pvalue or --fdr (each pair's p), --rho\n"
    "                        (|tau_b|) or --top-k; the GPU takes rows of up to 128\n"
    "                        observations\n"
    "  --missing drop        NaN is a missing value: drop every observation that\n"
    "                        is missing in any variable (complete cases, as\n"
    "                        pandas' dropna().corr()); the whole matrix is read\n"
    "                        first, 8 bytes a value (default: refuse NaN)\n"
    "  --missing pairwise    NaN is a missing value: each pair uses the observations\n"
    "                        both variables have, ranked over those (as pandas'\n"
    "                        DataFrame.corr(method=\"spearman\")), p from the pair's\n"
    "                        own n; pairs of fewer than 3 are not counted.  Pairs\n"
    "                        with a missing value cost O(n) each on the CPU\n"
    "                        backend\n"
    "  --check-input         read and rank the input, print its shape and stop\n"
    "selection (one; -o needs one, there is no default):\n"
    "  --pvalue A            pairs with p <= A (without -o: counts of p <= 0.05)\n"
    "  --rho R               pairs with |rho| >= R\n"
    "  --fdr Q               Benjamini-Hochberg at false discovery rate Q over all\n"
    "                        pairs of varying rows (exact cutoff, three passes)\n"
    "  --top-k K             for every row, its K partners of largest |rho|\n"
    "                        (ties: smaller row number first), whatever their p\n"
    "  --count-only          count and histogram only; write no pairs\n"
    "  --no-histogram        no histogram of rho over all pairs (it costs a binning\n"
    "                        per pair: half the GPU's time at --pvalue 1e-12)\n"
    "output:\n"
    OPT_OUTPUT_HELP("spearman")
    "  --max-output SIZE     refuse to write more than SIZE bytes of pairs (default\n"
    "                        50G; suffixes K M G T, powers of 1000)\n"
    OPT_CKPT_HELP("spearman", "tiles")
    "execution:\n"
    "  -t, --threads T       worker threads per rank (default: as for lattice)\n"
    "  --backend B           cpu | cuda | auto (default $FD_BACKEND, else auto: the GPU\n"
    "                        when there is one; rows of more than 128 values run\n"
    "                        on the CPU backend)\n"
    "  --stats               timings per pass and a row per rank\n"
    "  -q, --quiet           no progress and no summary\n"
    "  -h, --help            this text\n\n"
    "Rows with all values equal have no rho; they are never selected and are\n"
    "counted in the metadata.  Exit status 2 on bad input.\n";

static fd_status opt_size(const char *opt, const char *val, uint64_t *out)
{
    char *end;
    double v = strtod(val, &end);
    double mult = 1;
    if (*end == 'K' || *end == 'k') mult = 1e3, end++;
    else if (*end == 'M' || *end == 'm') mult = 1e6, end++;
    else if (*end == 'G' || *end == 'g') mult = 1e9, end++;
    else if (*end == 'T' || *end == 't') mult = 1e12, end++;
    if (*end == 'B' || *end == 'b') end++;
    if (end == val || *end || !(v >= 0) || v * mult > 1.8e19)
        return fd_fail(FD_ERR_USAGE, "%s: '%s' is not a size like 50G", opt, val);
    *out = (uint64_t)(v * mult);
    return FD_OK;
}

static fd_status parse_args(int argc, char **argv, spearman_opts *a, int *done)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'},     {"pvalue", required_argument, 0, 'p'},
        {"rho", required_argument, 0, 'r'},        {"count-only", no_argument, 0, 'c'},
        {"fdr", required_argument, 0, 'f'},        {"top-k", required_argument, 0, 'k'},
        {"y", required_argument, 0, 'y'},          {"drop-nan-rows", no_argument, 0, 'n'},
        {"missing", required_argument, 0, OPT_MISSING}, {"method", required_argument, 0, OPT_METHOD},
        {"force", no_argument, 0, 'F'}, {"compress", no_argument, 0, OPT_COMPRESS},            {"max-output", required_argument, 0, 'M'},
        {"threads", required_argument, 0, 't'},    {"backend", required_argument, 0, 'b'},
        {"stats", no_argument, 0, 'S'},            {"quiet", no_argument, 0, 'q'},
        {"check-input", no_argument, 0, 'C'},      {"help", no_argument, 0, 'h'},
        {"no-histogram", no_argument, 0, 'H'},     {"header", required_argument, 0, 'E'},
        {"by", required_argument, 0, 'B'},         {"row-names", no_argument, 0, 'N'},
        OPT_CKPT_LONGOPTS,                         {0, 0, 0, 0}};
    opt_ckpt ck = {NULL, OPT_CKPT_DEFAULT_SECONDS};
    memset(a, 0, sizeof *a);
    a->mode = 'p';
    a->value = 0.05;
    a->backend = fd_backend_default();
    a->max_output = 50000000000ull;
    int c, chosen = 0;
    uint32_t t;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:t:qh", opts, NULL)) != -1) {
        fd_status cst;
        if (opt_ckpt_take(&ck, c, optarg, &cst)) {
            FD_TRY(cst);
            continue;
        }
        switch (c) {
        case 'o': a->outdir = optarg; break;
        case 'p': FD_TRY(opt_f64("--pvalue", optarg, 0, 1, &a->value)); a->mode = 'p'; chosen++; break;
        case 'r': FD_TRY(opt_f64("--rho", optarg, 0, 1, &a->value)); a->mode = 'r'; chosen++; break;
        case 'f': FD_TRY(opt_f64("--fdr", optarg, 0, 1, &a->value)); a->mode = 'f'; chosen++; break;
        case 'k': FD_TRY(opt_u32("--top-k", optarg, 1, 1u << 20, &t)); a->value = t; a->mode = 'k'; chosen++; break;
        case 'c': a->count_only = 1; break;
        case 'H': a->no_hist = 1; break;
        case 'y': a->y_input = optarg; break;
        case 'n': a->drop_nan = 1; break;
        case OPT_METHOD:
            if (!strcmp(optarg, "kendall")) a->kendall = 1;
            else if (!strcmp(optarg, "spearman")) a->kendall = 0;
            else return fd_fail(FD_ERR_USAGE, "--method: '%s' is not spearman or kendall", optarg);
            break;
        case OPT_MISSING:
            a->missing_drop = !strcmp(optarg, "drop");
            a->missing_pairwise = !strcmp(optarg, "pairwise");
            if (!a->missing_drop && !a->missing_pairwise && strcmp(optarg, "refuse"))
                return fd_fail(FD_ERR_USAGE, "--missing: '%s' is not pairwise, drop or refuse", optarg);
            break;
        case 'E': FD_TRY(opt_header(optarg, &a->header)); break;
        case 'N': a->row_names = 1; break;
        case 'B':
            if (!strcmp(optarg, "rows")) a->by_columns = 0;
            else if (!strcmp(optarg, "columns")) a->by_columns = 1;
            else return fd_fail(FD_ERR_USAGE, "--by: '%s' is not rows or columns", optarg);
            break;
        case 'C': a->check_input = 1; break;
        case 'F': a->force = 1; break;
        case OPT_COMPRESS: h5u_set_deflate(H5U_COMPRESS_LEVEL); break;
        case 'M': FD_TRY(opt_size("--max-output", optarg, &a->max_output)); break;
        case 't': FD_TRY(opt_u32("--threads", optarg, 1, 4096, &t)); a->threads = (int)t; break;
        case 'b': a->backend = optarg; break;
        case 'S': a->stats = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h': fputs(help, stdout); *done = 1; return FD_OK;
        default: return opt_bad("spearman");
        }
    }
    if (chosen > 1) return fd_fail(FD_ERR_USAGE, "--pvalue, --rho, --fdr and --top-k exclude each other");

    if ((a->missing_drop || a->missing_pairwise) && a->drop_nan)
        return fd_fail(FD_ERR_USAGE, "--missing %s keeps the variables that miss values, --drop-nan-rows drops them: "
                                     "choose one", a->missing_drop ? "drop" : "pairwise");
    if (a->missing_pairwise && a->kendall)
        return fd_fail(FD_ERR_USAGE, "--missing pairwise with --method kendall: not yet (--missing drop works)");

    if (a->missing_drop && a->y_input)
        return fd_fail(FD_ERR_USAGE, "--missing drop with --y: not yet (the two inputs would have to drop the same "
                                     "observations)");
    if (a->by_columns && a->drop_nan)
        return fd_fail(FD_ERR_USAGE, "--drop-nan-rows drops variables of --by rows; with --by columns a NaN is refused");
    if (a->mode == 'k' && a->count_only) return fd_fail(FD_ERR_USAGE, "--top-k writes pairs; it does not go with --count-only");
    if ((a->mode == 'p' || a->mode == 'f') && a->value <= 0)
        return fd_fail(FD_ERR_USAGE, "--%s must be above 0", a->mode == 'p' ? "pvalue" : "fdr");
    if (optind != argc - 1)
        return fd_fail(FD_ERR_USAGE, "spearman needs exactly one MATRIX file; see 'fcbo-dist spearman --help'");
    a->input = argv[optind];
    a->command = fd_command_line;
    FD_TRY(opt_ckpt_finish(&ck, &a->outdir, &a->resume));
    a->checkpoint_seconds = ck.seconds;
    if (a->resume && a->check_input) return fd_fail(FD_ERR_USAGE, "--check-input writes nothing; it does not go with --resume");
    if (a->mode == 'k' && !a->outdir && !a->check_input) return fd_fail(FD_ERR_USAGE, "--top-k writes its pairs to -o DIR; give one");
    /* No default selection for what is written: p <= 0.05 over 1e6 rows
     * is some 2.5e10 pairs, hundreds of GB.  Counting alone keeps it. */
    if (!chosen && a->outdir && !a->count_only && !a->check_input)
        return fd_fail(FD_ERR_USAGE,
                       "-o writes the selected pairs: say which with --pvalue A, --rho R, --fdr Q or --top-k K "
                       "(or --count-only); p <= 0.05, the old default, keeps 5%% of all pairs, 2.5e10 at 1e6 rows");
    return FD_OK;
}

fd_status cmd_spearman(int argc, char **argv)
{
    spearman_opts a;
    int done = 0;
    fd_status st = parse_args(argc, argv, &a, &done);
    if (done || st != FD_OK) return st;
    return spearman_job_run(&a);
}
