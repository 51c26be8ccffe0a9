/* SPDX-License-Identifier: BSD-3-Clause */
/* `fcbo-dist rules DIR`: the stem base and the Luxenburger basis of a
 * lattice result (src/lattice/rules.h). */
#include "../common/clock.h"
#include "../common/progress.h"
#include "../lattice/rules.h"
#include "../lattice/rules_io.h"
#include "../mpi/placement.h"
#include "cmds.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

extern char *fd_command_line;

static const char *help =
    "usage: fcbo-dist rules DIR|FILE.h5 [--basis stem|luxenburger|both]\n"
    "                       [--min-confidence C] [--context FILE] [-o FILE.h5]\n"
    "                       [--text [--names]] [--force] [-t T] [-q]\n\n"
    "The implications and association rules of a lattice result (DIR/lattice.h5\n"
    "of `fcbo-dist lattice -o DIR`, any number of ranks, with or without\n"
    "--edges):\n"
    "  - the stem base (Duquenne-Guigues basis) of the context: the fewest\n"
    "    implications premise => conclusion from which every implication that\n"
    "    holds in it follows, with the premise's support;\n"
    "  - the Luxenburger basis of the lattice's concepts (an iceberg lattice of\n"
    "    --min-support S too): a rule B1 => B2\\B1 for each concept (A1, B1)\n"
    "    and each concept (A2, B2) just below it, with support |A2|,\n"
    "    confidence |A2| / |A1| and lift; every partial rule between frequent\n"
    "    intents follows from these.\n"
    "The context is re-read from the input the lattice file names, and must\n"
    "still be the same file (SHA-256).  Writes DIR/rules.h5 (or beside\n"
    "FILE.h5); an existing one is replaced only with --force, and only once\n"
    "the new one is complete.\n\n"
    "  --basis B             stem, luxenburger or both (default both)\n"
    "  --min-confidence C    keep rules of confidence >= C, 0..1 (default 0.5)\n"
    "  --context FILE        the context, when it has moved since the lattice run\n"
    "  -o FILE.h5            write the rules there instead\n"
    "  --text                print the rules (ids; see docs/formats.md) instead of\n"
    "                        writing a file, unless -o is given too\n"
    "  --names               with --text, attribute names (tab-separated)\n"
    "  --force               replace an existing rules file\n"
    "  -t, --threads T       threads for the covers when the file has no /edges\n"
    "                        (default: the cores)\n"
    "  -q, --quiet           no summary\n"
    "  -h, --help            this text\n\n"
    "The stem base is found by NextClosure over the pseudo-closed sets; its time\n"
    "grows with the intents times the implications (docs/algorithms.md, \"Rules\");\n"
    "--basis stem needs no covers.\n";

enum { OPT_BASIS = 0x200, OPT_MINCONF, OPT_CONTEXT, OPT_NAMES, OPT_TEXT };

/* The stem base reports every 65,536 closed sets it passes. */
static void sets_passed(void *arg, uint64_t sets)
{
    (void)sets;
    fd_progress_add(arg, 64);
}

fd_status cmd_rules(int argc, char **argv)
{
    static const struct option opts[] = {{"basis", required_argument, 0, OPT_BASIS},
                                         {"min-confidence", required_argument, 0, OPT_MINCONF},
                                         {"context", required_argument, 0, OPT_CONTEXT},
                                         {"output", required_argument, 0, 'o'},
                                         {"text", no_argument, 0, OPT_TEXT},
                                         {"names", no_argument, 0, OPT_NAMES},
                                         {"force", no_argument, 0, 'F'},
                                         {"threads", required_argument, 0, 't'},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *out = NULL, *ctx_path = NULL;
    int text = 0, names = 0, quiet = 0, force = 0, stem = 1, lux = 1, c;
    uint32_t threads = 0;
    double min_conf = 0.5;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:t:qh", opts, NULL)) != -1) {
        switch (c) {
        case OPT_BASIS:
            if (!strcmp(optarg, "stem")) stem = 1, lux = 0;
            else if (!strcmp(optarg, "luxenburger")) stem = 0, lux = 1;
            else if (!strcmp(optarg, "both")) stem = 1, lux = 1;
            else return fd_fail(FD_ERR_USAGE, "--basis takes stem, luxenburger or both, not '%s'", optarg);
            break;
        case OPT_MINCONF: FD_TRY(opt_f64("--min-confidence", optarg, 0, 1, &min_conf)); break;
        case OPT_CONTEXT: ctx_path = optarg; break;
        case 'o': out = optarg; break;
        case OPT_TEXT: text = 1; break;
        case OPT_NAMES: names = 1; break;
        case 'F': force = 1; break;
        case 't': FD_TRY(opt_u32("--threads", optarg, 1, 4096, &threads)); break;
        case 'q': quiet = 1; break;
        case 'h': fputs(help, stdout); return FD_OK;
        default: return opt_bad("rules");
        }
    }
    if (optind != argc - 1) return fd_fail(FD_ERR_USAGE, "rules needs exactly one DIR or FILE.h5; see 'fcbo-dist rules --help'");
    if (names && !text) return fd_fail(FD_ERR_USAGE, "--names goes with --text");
    const char *arg = argv[optind];
    struct stat sb;
    char lattice[4096], dflt[4096];
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(lattice, sizeof lattice, "%s/lattice.h5", arg);
        snprintf(dflt, sizeof dflt, "%s/rules.h5", arg);
    } else {
        snprintf(lattice, sizeof lattice, "%s", arg);
        const char *slash = strrchr(arg, '/');
        snprintf(dflt, sizeof dflt, "%.*srules.h5", slash ? (int)(slash - arg + 1) : 0, arg);
    }
    if (!out && !text) out = dflt;
    /* Checked before the (possibly long) stem base, not at the rename. */
    if (out && !force && stat(out, &sb) == 0)
        return fd_fail(FD_ERR_USAGE, "%s exists; use --force to replace it (the old file stays until the new one is complete)",
                       out);
    if (!threads) {
        fd_mpi one = {0, 1, 0, 1};
        threads = (uint32_t)fd_place_threads(&one);
    }

    fd_status st = FD_OK;
    fca_context *ctx = NULL;
    rules_lattice l;
    rules_out so = {0}, lo = {0};
    double t0 = fd_now(), t_read, t_stem = 0, t_lux = 0;
    FD_TRY(rules_lattice_read(lattice, ctx_path, lux, (int)threads, &ctx, &l));
    t_read = fd_now() - t0;
    if (stem) {
        double t = fd_now();
        fd_progress prog;
        fd_progress_start(&prog, "closed sets (stem base)", 0, quiet);
        st = rules_stem_base(ctx, &so, sets_passed, &prog);
        fd_progress_stop(&prog);
        FD_TRY_GOTO(st, st, done);
        t_stem = fd_now() - t;
    }
    if (lux) {
        double t = fd_now();
        FD_TRY_GOTO(rules_luxenburger(ctx, l.n, l.off, l.ids, l.supp, l.cov_off, l.cov_ids, min_conf, &lo), st, done);
        t_lux = fd_now() - t;
    }
    if (out) {
        rules_meta m = {fd_command_line, lattice, min_conf, l.min_support, stem, lux};
        FD_TRY_GOTO(rules_write_h5(out, ctx, &m, &so, &lo), st, done);
    }
    if (text) FD_TRY_GOTO(rules_write_text(stdout, ctx, names, stem ? &so : NULL, lux ? &lo : NULL), st, done);
    if (!quiet) {
        if (stem) fprintf(stderr, "%llu implications in the stem base (%.3f s)", (unsigned long long)so.n, t_stem);
        if (lux)
            fprintf(stderr, "%s%llu rules of confidence >= %g in the Luxenburger basis of %llu concepts (%.3f s; covers %s)",
                    stem ? ", " : "", (unsigned long long)lo.n, min_conf, (unsigned long long)l.n, t_lux,
                    l.had_edges ? "from /edges" : "computed");
        fprintf(stderr, "; reading %.3f s%s%s\n", t_read, out ? "; wrote " : "", out ? out : "");
    }
done:
    rules_out_free(&so);
    rules_out_free(&lo);
    rules_lattice_free(&l);
    fca_context_destroy(&ctx);
    return st;
}
