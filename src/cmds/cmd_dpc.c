/* SPDX-License-Identifier: BSD-3-Clause */
/* fcbo-dist dpc: the command line.  The run, on one rank or many, is
 * dpc_job_run (src/dpc/dpc_job.c). */
#include "../common/backend.h"
#include "../dpc/dpc_job.h"
#include "../dpc/dpc_plot.h"
#include "../io/h5util.h"
#include "cmds.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *help =
    "usage: fcbo-dist dpc POINTS [-o DIR] [OPTIONS]\n"
    "       mpirun -np P fcbo-dist dpc POINTS -o DIR [OPTIONS]\n\n"
    "Density peak clustering (Rodriguez & Laio, Science 2014), exact, without\n"
    "the N x N distance matrix: local density rho, distance delta to the\n"
    "nearest denser point, centres from the decision graph, every other point\n"
    "in its nearest denser neighbour's cluster.  Writes DIR/dpc.h5 (labels,\n"
    "rho, delta, parent, gamma, centres; docs/formats.md).  Under mpirun every\n"
    "rank holds the points and computes its share of the rows; with --backend\n"
    "cuda, one rank per GPU.\n\n"
    "input:\n"
    "  POINTS                whitespace-separated numbers (one point per line),\n"
    "                        .csv, .npy or FILE.h5:/dataset (2-D; 1-D: one column)\n"
    OPT_HEADER_HELP
    "  --columns LIST        the coordinate columns, 1-based: 1,2 or 1-3 (default:\n"
    "                        every column but the label column)\n"
    "  --label-column C      a ground-truth label per point in column C: report\n"
    "                        the adjusted Rand index against it\n"
    "  --labels FILE         the same from a file of one integer per point (what\n"
    "                        'gen blobs' writes beside its points)\n"
    "  --predict NEW         assign NEW's points (the same columns) to the fitted\n"
    "                        clusters by the fit's own rule: each takes the label of\n"
    "                        its nearest fitted point of higher density (counted\n"
    "                        among the fitted points, same kernel and d_c) within\n"
    "                        d_c, else of its nearest fitted point; -o's file\n"
    "                        gets /predict (labels, rho, parent, delta)\n"
    "density:\n"
    "  --kernel K            cutoff (points closer than d_c; default) | gaussian\n"
    "                        (sum of exp(-(d/d_c)^2) over the other points)\n"
    "  --dc X                the cutoff distance d_c\n"
    "  --dc-percent P        d_c = the P-th percentile of the pairwise distances\n"
    "                        (default 2; exact up to 10^7 pairs, else from 10^7\n"
    "                        pairs drawn with --seed)\n"
    "  --neighbors K         d_c such that a point has K neighbours on average\n"
    "                        (exact up to 2,048 points, else from 2,048 of them)\n"
    "  --seed S              seed of the samples above (default 1)\n"
    "centres (one rule):\n"
    "  --centers K           the K points of largest gamma = rho x delta\n"
    "  --rho-min R --delta-min D  the points with rho > R and delta > D (the\n"
    "                        decision-graph rectangle)\n"
    "  (default)             automatic, by --auto-centers RULE; the summary gives\n"
    "                        both rules' counts and says when they disagree:\n"
    "  --auto-centers gap    the points before the largest ratio between\n"
    "                        consecutive gammas, in decreasing order, among the\n"
    "                        first 1,000 (a heuristic; the default)\n"
    "  --auto-centers outliers  the points whose log gamma is an outlier: above\n"
    "                        the median by more than z robust standard deviations\n"
    "                        (1.4826 MAD), z the normal quantile of alpha / N (a\n"
    "                        test at level alpha over the N points)\n"
    "  --outlier-alpha A     the outlier rule's level (default 0.01)\n"
    "                        The densest point is always a centre; give --centers\n"
    "                        when the number is known.\n"
    "  --halo                mark each cluster's halo (points less dense than its\n"
    "                        border density) as noise: /core_labels, label 0\n"
    "output and execution:\n"
    OPT_OUTPUT_HELP("dpc")
    "  --plot FILE.png       the decision graph (rho against delta, centres marked)\n"
    "                        and, for 2-D points, the clusters (needs cairo)\n"

    "  -t, --threads T       worker threads per rank (default: as for lattice);\n"
    "                        with cuda, for what stays on the host\n"
    "  --backend B           cpu | cuda | auto: cuda where a GPU is visible\n"
    "                        (default $FD_BACKEND, else auto); cuda takes points\n"
    "                        of up to 128 coordinates, more run on the CPU\n"
    "  --stats               time per phase\n"
    "  -q, --quiet           no summary\n"
    "  -h, --help            this text\n\n"
    "Exit status 2 on bad input (ragged rows, NaN, non-numbers, fewer than 2\n"
    "points), with FILE:LINE; nothing is written then.\n";

static fd_status parse_args(int argc, char **argv, dpc_opts *a, int *done)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'},   {"columns", required_argument, 0, 'c'},
        {"label-column", required_argument, 0, 'l'}, {"labels", required_argument, 0, 'L'}, {"predict", required_argument, 0, 'W'}, {"kernel", required_argument, 0, 'K'},
        {"dc", required_argument, 0, 'x'},       {"dc-percent", required_argument, 0, 'p'},
        {"neighbors", required_argument, 0, 'k'}, {"seed", required_argument, 0, 's'},
        {"centers", required_argument, 0, 'C'},  {"rho-min", required_argument, 0, 'R'},
        {"delta-min", required_argument, 0, 'D'}, {"halo", no_argument, 0, 'H'},
        {"force", no_argument, 0, 'F'}, {"compress", no_argument, 0, OPT_COMPRESS},          {"threads", required_argument, 0, 't'},
        {"header", required_argument, 0, 'E'},
        {"backend", required_argument, 0, 'b'},  {"stats", no_argument, 0, 'S'},
        {"quiet", no_argument, 0, 'q'},          {"help", no_argument, 0, 'h'},
        {"plot", required_argument, 0, 'P'},     {"auto-centers", required_argument, 0, 'A'},
        {"outlier-alpha", required_argument, 0, 'Z'},
        {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->kernel = DPC_CUTOFF;
    a->dc_rule = 'p';
    a->dc_percent = 2;
    a->seed = 1;
    a->backend = fd_backend_default();
    int c, rules = 0, rho_min = 0, delta_min = 0, auto_rule = 0;
    uint32_t t;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:t:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': a->outdir = optarg; break;
        case 'c': a->cols.coords = optarg; break;
        case 'l': FD_TRY(opt_u32("--label-column", optarg, 1, 1u << 20, &a->cols.label)); break;
        case 'L': a->cols.labels = optarg; break;
        case 'W': a->predict = optarg; break;
        case 'K':
            if (!strcmp(optarg, "cutoff")) a->kernel = DPC_CUTOFF;
            else if (!strcmp(optarg, "gaussian")) a->kernel = DPC_GAUSSIAN;
            else return fd_fail(FD_ERR_USAGE, "--kernel %s: expected cutoff or gaussian", optarg);
            break;
        case 'x': FD_TRY(opt_f64("--dc", optarg, 0, INFINITY, &a->dc)); a->dc_rule = 'x'; rules++; break;
        case 'p': FD_TRY(opt_f64("--dc-percent", optarg, 0, 100, &a->dc_percent)); a->dc_rule = 'p'; rules++; break;
        case 'k': FD_TRY(opt_f64("--neighbors", optarg, 0, 1e12, &a->neighbors)); a->dc_rule = 'k'; rules++; break;
        case 's': FD_TRY(opt_u64("--seed", optarg, &a->seed)); break;
        case 'C': FD_TRY(opt_u32("--centers", optarg, 1, 65536, &a->centers.k)); break;
        case 'R': FD_TRY(opt_f64("--rho-min", optarg, -INFINITY, INFINITY, &a->centers.rho_min)); rho_min = 1; break;
        case 'D': FD_TRY(opt_f64("--delta-min", optarg, 0, INFINITY, &a->centers.delta_min)); delta_min = 1; break;
        case 'A':
            if (!strcmp(optarg, "gap")) a->centers.outliers = 0;
            else if (!strcmp(optarg, "outliers")) a->centers.outliers = 1;
            else return fd_fail(FD_ERR_USAGE, "--auto-centers %s: expected gap or outliers", optarg);
            auto_rule = 1;
            break;
        case 'Z': FD_TRY(opt_f64("--outlier-alpha", optarg, 0, 1, &a->centers.alpha)); auto_rule = 1; break;
        case 'H': a->halo = 1; break;
        case 'P': a->plot = optarg; break;
        case 'F': a->force = 1; break;
        case OPT_COMPRESS: h5u_set_deflate(H5U_COMPRESS_LEVEL); break;
        case 'E': FD_TRY(opt_header(optarg, &a->cols.header)); break;
        case 't': FD_TRY(opt_u32("--threads", optarg, 1, 4096, &t)); a->threads = (int)t; break;
        case 'b': a->backend = optarg; break;
        case 'S': a->stats = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h': fputs(help, stdout); *done = 1; return FD_OK;
        default: return opt_bad("dpc");
        }
    }
    if (rules > 1) return fd_fail(FD_ERR_USAGE, "--dc, --dc-percent and --neighbors exclude each other");
    if (a->dc_rule == 'x' && !(a->dc > 0)) return fd_fail(FD_ERR_USAGE, "--dc must be above 0");
    if (a->dc_rule == 'p' && !(a->dc_percent > 0)) return fd_fail(FD_ERR_USAGE, "--dc-percent must be above 0");
    if (a->dc_rule == 'k' && !(a->neighbors > 0)) return fd_fail(FD_ERR_USAGE, "--neighbors must be above 0");
    if (rho_min != delta_min) return fd_fail(FD_ERR_USAGE, "--rho-min and --delta-min go together");
    if (delta_min && !(a->centers.delta_min > 0)) return fd_fail(FD_ERR_USAGE, "--delta-min must be above 0");
    if (a->centers.k && delta_min) return fd_fail(FD_ERR_USAGE, "--centers and --rho-min/--delta-min exclude each other");
    if (auto_rule && (a->centers.k || delta_min))
        return fd_fail(FD_ERR_USAGE, "--auto-centers and --outlier-alpha choose among the automatic rules; --centers and "
                                     "--rho-min/--delta-min are rules of their own");
    if (a->centers.alpha != 0 && !(a->centers.alpha > 0 && a->centers.alpha < 1))
        return fd_fail(FD_ERR_USAGE, "--outlier-alpha must be between 0 and 1");
    if (a->plot) FD_TRY(dpc_plot_ready());
    if (optind != argc - 1) return fd_fail(FD_ERR_USAGE, "dpc needs exactly one POINTS file; see 'fcbo-dist dpc --help'");
    if (a->cols.label && a->cols.labels) return fd_fail(FD_ERR_USAGE, "--label-column and --labels exclude each other");
    a->input = argv[optind];
    a->command = fd_command_line;
    return FD_OK;
}

fd_status cmd_dpc(int argc, char **argv)
{
    dpc_opts a;
    int done = 0;
    fd_status st = parse_args(argc, argv, &a, &done);
    if (done || st != FD_OK) return st;
    return dpc_job_run(&a);
}
