/* SPDX-License-Identifier: BSD-3-Clause */
/* fcbo-dist bcp: the command line.  The run is bcp_job_run
 * (src/bcp/bcp_job.c). */
#include "../bcp/bcp_job.h"
#include "../common/backend.h"
#include "../io/h5util.h"
#include "cmds.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *help =
    "usage: fcbo-dist bcp TENSOR [-o DIR] [OPTIONS]\n"
    "       mpirun -np P fcbo-dist bcp TENSOR -o DIR [OPTIONS]\n\n"
    "Bayesian CP (PARAFAC) factorisation of a dense tensor of 3 or more modes\n"
    "(Zhao, Zhang & Cichocki, IEEE TPAMI 2015): Y = [[A1, ..., AN]] + Gaussian\n"
    "noise, fitted by variational Bayes; the rank is found by pruning the\n"
    "components whose power vanishes, starting from --rank.  Writes DIR/bcp.h5\n"
    "(factors, lambda, tau, the rank found, the fit and lower-bound traces;\n"
    "docs/formats.md).  Under mpirun the ranks form a grid over the modes and\n"
    "each reads and works on its block (one rank per GPU with --backend cuda).\n\n"
    "input:\n"
    "  TENSOR                a .npy (float32 or float64, C order) or an HDF5\n"
    "                        dataset FILE.h5:/dataset (any float type)\n"
    "model and fit:\n"
    "  --rank R              the initial rank, pruned down (default 10; up to 256)\n"
    "  --max-iter K          sweeps at most (default 100)\n"
    "  --tol T               stop when the lower bound changes by less than T\n"
    "                        relative (default 1e-5)\n"
    "  --init svd|random     initial factors: each unfolding's leading singular\n"
    "                        vectors (default; modes of over 2,048 rows start\n"
    "                        random), or Gaussian from --seed\n"
    "  --seed S              seed of the random start (default 1)\n"
    "  --starts S            fit S times (the first from --init, the others\n"
    "                        random with seeds --seed + 1, ...) and keep the\n"
    "                        highest lower bound (default 1)\n"
    "  --fuse K1xK2x...      partition and fuse (grid PARAFAC): the tensor cut\n"
    "                        into K1 x K2 x ... sub-tensors, read and fitted one\n"
    "                        at a time (from 3 R, pruned), the R strongest\n"
    "                        components of each fused into full factors of rank\n"
    "                        R = --rank; for tensors larger than memory\n"
    "                        (sub-tensors spread over the ranks; with\n"
    "                        --missing each sub-tensor by the masked fit)\n"
    "  --missing             NaN entries are missing (unobserved): the fit uses the\n"
    "                        observed ones only (BCPF's completion variant: a\n"
    "                        covariance per factor row; any ranks, each\n"
    "                        holding the whole tensor and updating a share of\n"
    "                        the rows: one rank's bits; each sweep\n"
    "                        O(observed N^2 R^2) on the CPU, or its sums as\n"
    "                        DGEMMs on the rank's GPU with --backend cuda,\n"
    "                        which holds the tensor twice); the rank found is\n"
    "                        then checked by the bound: the weakest component is\n"
    "                        dropped and the rest refitted while that raises it;\n"
    "                        without --missing NaN is refused\n"
    "  --mask SPEC           also missing where this array of the tensor's shape\n"
    "                        (.npy float/uint8/bool, or FILE.h5:/dataset) is 0\n"
    "                        (a NaN in it is refused); implies --missing\n"
    "  --completed           write the model's tensor (every entry, the missing\n"
    "                        ones predicted) to DIR/bcp.h5:/completed\n"
    "  --predict-at FILE     the model's value at the entries FILE lists (one a\n"
    "                        row, its 0-based index in each mode a column; text,\n"
    "                        CSV, .npy or FILE.h5:/dataset) to DIR/bcp.h5:\n"
    "                        /predictions/values, the indices beside them\n"
    "  --nonneg              non-negative factors: started from magnitudes and\n"
    "                        projected on >= 0 after each update (the lower\n"
    "                        bound may then decrease)\n"
    "output and execution:\n"
    OPT_OUTPUT_HELP("bcp")
    "  --backend B           cpu | cuda | auto: the block and the factors on the\n"
    "                        rank's GPU where one is visible (default\n"
    "                        $FD_BACKEND, else auto); only the R x R algebra\n"
    "                        runs on the host\n"
    "  -t, --threads T       threads per rank for the MTTKRP (default: the\n"
    "                        rank's cores); the result does not depend on T\n"
    "  --stats               time per phase, and a sweep's median time with the\n"
    "                        means of its parts (products: the backend's calls,\n"
    "                        a GPU's work counted where the host waits for it;\n"
    "                        sums over ranks; the host's share)\n"
    "  -q, --quiet           no summary, no progress\n"
    "  -h, --help            this text\n\n"
    "Exit status 2 on bad input (fewer than 3 modes, NaN without --missing,\n"
    "infinite values, a dataset that does not exist, another element type, a\n"
    "mask of another shape, an index of --predict-at outside the tensor);\n"
    "nothing is written then.\n";

static fd_status parse_args(int argc, char **argv, bcp_job_opts *a, int *done)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'}, {"rank", required_argument, 0, 'r'},
        {"max-iter", required_argument, 0, 'm'}, {"tol", required_argument, 0, 'T'},
        {"init", required_argument, 0, 'i'},   {"seed", required_argument, 0, 's'},
        {"nonneg", no_argument, 0, 'N'},       {"force", no_argument, 0, 'F'}, {"compress", no_argument, 0, OPT_COMPRESS},
        {"stats", no_argument, 0, 'S'},        {"quiet", no_argument, 0, 'q'},
        {"threads", required_argument, 0, 't'}, {"backend", required_argument, 0, 'b'},
        {"fuse", required_argument, 0, 'U'},   {"starts", required_argument, 0, 'A'},
        {"missing", no_argument, 0, 'M'},      {"mask", required_argument, 0, 'K'},
        {"completed", no_argument, 0, 'C'},    {"predict-at", required_argument, 0, 'P'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    memset(a, 0, sizeof *a);
    a->fit.rank = 10;
    a->fit.max_iter = 100;
    a->fit.tol = 1e-5;
    a->fit.init = BCP_INIT_SVD;
    a->fit.seed = 1;
    a->backend = fd_backend_default();
    int c;
    optind = 1;
    uint32_t threads;
    while ((c = getopt_long(argc, argv, "o:t:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': a->outdir = optarg; break;
        case 'r': FD_TRY(opt_u32("--rank", optarg, 1, 256, &a->fit.rank)); break;
        case 'm': FD_TRY(opt_u32("--max-iter", optarg, 1, 1000000, &a->fit.max_iter)); break;
        case 'T': FD_TRY(opt_f64("--tol", optarg, 0, 1, &a->fit.tol)); break;
        case 'i':
            if (!strcmp(optarg, "svd")) a->fit.init = BCP_INIT_SVD;
            else if (!strcmp(optarg, "random")) a->fit.init = BCP_INIT_RANDOM;
            else return fd_fail(FD_ERR_USAGE, "--init %s: expected svd or random", optarg);
            break;
        case 's': FD_TRY(opt_u64("--seed", optarg, &a->fit.seed)); break;
        case 'N': a->fit.nonneg = 1; break;
        case 'M': a->missing = 1; break;
        case 'K': a->mask = optarg; a->missing = 1; break;
        case 'C': a->completed = 1; break;
        case 'P': a->predict_at = optarg; break;
        case 'b': a->backend = optarg; break;
        case 'A': FD_TRY(opt_u32("--starts", optarg, 1, 1000, &a->starts)); break;
        case 'U': FD_TRY(opt_dims("--fuse", optarg, "parts per mode", BCP_MAX_ORDER, a->fuse, &a->fuse_n)); break;
        case 't': FD_TRY(opt_u32("--threads", optarg, 1, 4096, &threads)); a->fit.threads = (int)threads; break;
        case 'F': a->force = 1; break;
        case OPT_COMPRESS: h5u_set_deflate(H5U_COMPRESS_LEVEL); break;
        case 'S': a->stats = 1; break;
        case 'q': a->quiet = 1; break;
        case 'h': fputs(help, stdout); *done = 1; return FD_OK;
        default: return opt_bad("bcp");
        }
    }
    if (optind != argc - 1) return fd_fail(FD_ERR_USAGE, "bcp needs exactly one TENSOR; see 'fcbo-dist bcp --help'");
    a->input = argv[optind];
    a->command = fd_command_line;
    return FD_OK;
}

fd_status cmd_bcp(int argc, char **argv)
{
    bcp_job_opts a;
    int done = 0;
    fd_status st = parse_args(argc, argv, &a, &done);
    if (done || st != FD_OK) return st;
    return bcp_job_run(&a);
}
