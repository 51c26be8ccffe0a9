/* SPDX-License-Identifier: BSD-3-Clause */
/* fcbo-dist lattice: the command line.  The run itself, on one rank or
 * many, is lattice_job_run (src/lattice/lattice_job.c). */
#include "../common/backend.h"
#include "../lattice/lattice_job.h"
#include "../io/h5util.h"
#include "cmds.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *help =
    "usage: fcbo-dist lattice CONTEXT [-o DIR] [OPTIONS]\n"
    "       mpirun -np P fcbo-dist lattice CONTEXT -o DIR [OPTIONS]\n\n"
    "Enumerates all formal concepts (extent, intent) of a binary context with\n"
    "Fast Close-by-One, writing DIR/lattice.h5 (see docs/formats.md).  Under\n"
    "mpirun or srun, rank 0 splits the search tree and hands subtrees out on\n"
    "request; each rank writes a part (DIR/lattice.RUNID.part-RRRRR.h5) and rank 0\n"
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
    OPT_OUTPUT_HELP("lattice")
    "  --extents             also store every extent (object ids)\n"
    "  --edges               also store the covering relation (Hasse diagram): each\n"
    "                        concept's upper covers as concept ids, /edges (any\n"
    "                        number of ranks; every rank holds every intent)\n"
    "  --text                print intents to stdout, one per line, attribute ids\n"
    "                        ascending and separated by blanks (any order of lines);\n"
    "                        with several ranks or checkpoints, printed from DIR at\n"
    "                        the end\n"
    OPT_CKPT_HELP("lattice", "subtrees")
    "execution:\n"
    "  -t, --threads T       worker threads per rank (default: the cores the launcher\n"
    "                        bound the rank to, else the node's cores / ranks on it)\n"
    "  --backend B           cpu | cuda | auto (default $FD_BACKEND, else auto: the GPU\n"
    "                        when there is one and the input has 768 KiB or more\n"
    "                        for each CPU thread of the job; below, its start-up\n"
    "                        costs more than it saves)\n"
    "  --stats               print the search counters (closures, failures, pruning)\n"
    "                        and, per rank, concepts, subtrees, busy and idle seconds\n"
    "  -q, --quiet           no progress line and no summary\n"
    "  -h, --help            this text\n\n"
    "Attribute ids in the output are the user's: the numbers of a FIMI file,\n"
    "the 0-based column of a .cxt or CSV file.  Exit status 2 on bad input.\n";

static fd_status parse_args(int argc, char **argv, lattice_job_opts *a, int *done)
{
    static const struct option opts[] = {
        {"output", required_argument, 0, 'o'},  {"format", required_argument, 0, 'f'},
        {"min-support", required_argument, 0, 's'}, {"threads", required_argument, 0, 't'},
        {"backend", required_argument, 0, 'b'}, {"extents", no_argument, 0, 'e'},
        {"text", no_argument, 0, 'x'}, {"edges", no_argument, 0, 'G'},          {"force", no_argument, 0, 'F'}, {"compress", no_argument, 0, OPT_COMPRESS},
        {"quiet", no_argument, 0, 'q'},         {"stats", no_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'},          OPT_CKPT_LONGOPTS,
        {0, 0, 0, 0}};
    opt_ckpt ck = {NULL, OPT_CKPT_DEFAULT_SECONDS};
    memset(a, 0, sizeof *a);
    a->backend = fd_backend_default();
    a->min_support_pct = -1;
    a->threads = 0; /* from the placement, once the ranks are known */
    int c;
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
        case 'G': a->edges = 1; break;
        case OPT_COMPRESS: h5u_set_deflate(H5U_COMPRESS_LEVEL); break;
        case 'q': a->quiet = 1; break;
        case 'S': a->stats = 1; break;
        case 'h': fputs(help, stdout); *done = 1; return FD_OK;
        default: return opt_bad("lattice");
        }
    }
    if (optind != argc - 1)
        return fd_fail(FD_ERR_USAGE, "lattice needs exactly one CONTEXT file; see 'fcbo-dist lattice --help'");
    a->input = argv[optind];
    a->command = fd_command_line;
    FD_TRY(opt_ckpt_finish(&ck, &a->outdir, &a->resume));
    a->checkpoint_seconds = ck.seconds;
    return FD_OK;
}

fd_status cmd_lattice(int argc, char **argv)
{
    lattice_job_opts a;
    int done = 0;
    fd_status st = parse_args(argc, argv, &a, &done);
    if (done) return FD_OK;
    /* Every rank parses the same command line, so a usage error happens
     * everywhere and needs no agreement. */
    if (st != FD_OK) return st;
    return lattice_job_run(&a);
}
