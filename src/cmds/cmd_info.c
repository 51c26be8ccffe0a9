/* SPDX-License-Identifier: BSD-3-Clause */
#include "../bcp/bcp_h5.h"
#include "../dpc/dpc_h5.h"
#include "../common/inputfile.h"
#include "../io/h5util.h"
#include "../lattice/lattice_read.h"
#include "../lattice/rules_io.h"
#include "../spearman/spearman_h5.h"
#include "cmds.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *help =
    "usage: fcbo-dist info FILE.h5|DIR [--text [--names]]\n\n"
    "Prints the metadata of a result file (lattice, rules, spearman, dpc or bcp; single or a\n"
    "master over parts), or of the one result in an output directory DIR\n"
    "(DIR/lattice.h5, rules.h5, spearman.h5, dpc.h5 or bcp.h5): what was run, on which input (with its SHA-256),\n"
    "how many results, and whether it is complete.  A master file is\n"
    "refused when one of its parts is missing or incomplete.\n\n"
    "  --text      print the results instead: for a lattice the intents, one\n"
    "              per line (as `lattice --text`); for spearman \"i j rho p\";\n"
    "              for dpc \"point label rho delta parent\"; for bcp \"mode row\n"
    "              values\" of the factors (modes 1..N as /factors/A1..AN, rows\n"
    "              from 0); spearman adds the rows' names when the file has them\n"
    "  --names     with --text, a lattice's intents as attribute names (tab-\n"
    "              separated) instead of ids\n"
    "  -h, --help  this text\n";

/* A result file is read, not written: an HDF5 call that fails on it says
 * the file is damaged (exit status 2), whatever the library reported. */
static fd_status as_input(fd_status st, const char *path)
{
    if (st != FD_ERR_HDF5) return st;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", fd_errmsg());
    fd_errclear();
    return fd_fail(FD_ERR_INPUT, "%s: damaged, or not a complete fcbo-dist result (%s)", path, msg);
}

/* text: 0 the summary, 1 the results, 2 the results with names. */
static fd_status info_file(const char *path, int text);

/* An output directory names its one result (the master where there are
 * parts): a directory holding none, or several, is refused by name. */
static fd_status result_in(const char *path, char *out, size_t cap)
{
    static const char *const names[] = {"lattice.h5", "rules.h5", "spearman.h5", "dpc.h5", "bcp.h5"};
    struct stat sb;
    snprintf(out, cap, "%s", path);
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode)) return FD_OK; /* a file: fd_input_check says the rest */
    int found = 0;
    char cand[4096];
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        snprintf(cand, sizeof cand, "%s/%s", path, names[k]);
        if (stat(cand, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (found++) return fd_fail(FD_ERR_USAGE, "%s holds more than one result (%s and %s): name the file", path, out,
                                        cand);
            snprintf(out, cap, "%s", cand);
        }
    }
    if (!found)
        return fd_fail(FD_ERR_INPUT, "%s: a directory with no result in it (lattice.h5, rules.h5, spearman.h5, dpc.h5 "
                                     "or bcp.h5)", path);
    return FD_OK;
}

fd_status cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {{"text", no_argument, 0, 't'}, {"names", no_argument, 0, 'n'},
                                         {"help", no_argument, 0, 'h'},  {0, 0, 0, 0}};
    int text = 0, names = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 't') text = 1;
        else if (c == 'n') names = 1;
        else if (c == 'h') { fputs(help, stdout); return FD_OK; }
        else return opt_bad("info");
    }
    if (optind != argc - 1) return fd_fail(FD_ERR_USAGE, "info needs exactly one FILE.h5; see 'fcbo-dist info --help'");
    if (names && !text) return fd_fail(FD_ERR_USAGE, "--names goes with --text");
    char path[4096];
    FD_TRY(result_in(argv[optind], path, sizeof path));
    return as_input(info_file(path, text + names), path);
}

static fd_status info_file(const char *path, int text)
{
    char fmt[64] = "";
    FD_TRY(fd_input_check(path));
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return fd_fail(FD_ERR_INPUT, "%s: not an HDF5 file", path);
    h5u_read_attr_str(f, "format", fmt, sizeof fmt);
    fd_errclear();
    fd_status st;
    if (!strcmp(fmt, "fcbo-dist dpc")) {
        st = text ? dpc_h5_text(f, path, stdout) : dpc_h5_info(f, path, stdout);
        H5Fclose(f);
        return st;
    }
    if (!strcmp(fmt, "fcbo-dist bcp")) {
        st = text ? bcp_h5_text(f, path, stdout) : bcp_h5_info(f, path, stdout);
        H5Fclose(f);
        return st;
    }
    if (!strcmp(fmt, "fcbo-dist rules")) {
        st = text ? fd_fail(FD_ERR_USAGE, "%s: a rules file; `fcbo-dist rules DIR --text` prints the rules", path)
                  : rules_h5_info(f, path, stdout);
        H5Fclose(f);
        return st;
    }
    if (!strcmp(fmt, "fcbo-dist spearman")) {
        st = text ? spearman_h5_text(f, path, stdout) : spearman_h5_info(f, path, stdout);
        H5Fclose(f);
        return st;
    }
    H5Fclose(f);
    if (text == 2) return lattice_read_text_names(path, stdout);
    return text ? lattice_read_text(path, stdout) : lattice_read_info(path, stdout);
}
