#include "../lattice/lattice_h5.h"
#include "cmds.h"

#include <getopt.h>
#include <stdio.h>

static const char *help =
    "usage: fcbo-dist info FILE.h5 [--text]\n\n"
    "Prints the metadata of a result file: what was run, on which input\n"
    "(with its SHA-256), how many results, and whether it is complete.\n\n"
    "  --text      print the intents instead, one per line, attribute ids\n"
    "              ascending and separated by blanks (as `lattice --text`)\n"
    "  -h, --help  this text\n";

fd_status cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {{"text", no_argument, 0, 't'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int text = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 't') text = 1;
        else if (c == 'h') { fputs(help, stdout); return FD_OK; }
        else return opt_bad("info");
    }
    if (optind != argc - 1) return fd_fail(FD_ERR_USAGE, "info needs exactly one FILE.h5; see 'fcbo-dist info --help'");
    return text ? lattice_h5_text(argv[optind], stdout) : lattice_h5_info(argv[optind], stdout);
}
