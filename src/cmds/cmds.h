/* SPDX-License-Identifier: BSD-3-Clause */
/* Subcommands: one file each (cmd_*.c), reached through the table in
 * main.c.  Each returns an fd_status; main prints the recorded message and
 * turns the status into the exit code. */
#ifndef FD_CMDS_H
#define FD_CMDS_H

#include "../common/status.h"

#include <stdint.h>

fd_status cmd_lattice(int argc, char **argv);
fd_status cmd_spearman(int argc, char **argv);
fd_status cmd_dpc(int argc, char **argv);
fd_status cmd_bcp(int argc, char **argv);
fd_status cmd_gen(int argc, char **argv);
fd_status cmd_info(int argc, char **argv);
fd_status cmd_rules(int argc, char **argv);

/* Option values, strictly parsed; a bad value is FD_ERR_USAGE naming opt. */
fd_status opt_u32(const char *opt, const char *val, uint32_t lo, uint32_t hi, uint32_t *out);
fd_status opt_u64(const char *opt, const char *val, uint64_t *out);
fd_status opt_f64(const char *opt, const char *val, double lo, double hi, double *out);
/* "AxBxC": up to max positive integers joined by x into v, *n of them;
 * what names them in the message ("sizes", "parts per mode"). */
fd_status opt_dims(const char *opt, const char *val, const char *what, uint32_t max, uint64_t *v, uint32_t *n);
/* --resume DIR and --checkpoint-seconds S, once parsed: DIR becomes the
 * output directory (-o, when also given, must name the same one), and
 * resuming needs checkpoints. */
typedef struct opt_ckpt {
    const char *resume_dir;
    double seconds;          /* default 300; 0: no checkpoints */
} opt_ckpt;
#define OPT_CKPT_DEFAULT_SECONDS 300.0
/* getopt_long codes and table entries, and their --help lines (what: the
 * units of work a resumed run does not redo). */
enum { OPT_CKPT_SECONDS = 0x100, OPT_CKPT_RESUME, OPT_COMPRESS };
#define OPT_CKPT_LONGOPTS                                                     \
    {"checkpoint-seconds", required_argument, 0, OPT_CKPT_SECONDS},           \
        {"resume", required_argument, 0, OPT_CKPT_RESUME}
#define OPT_CKPT_HELP(workload, what)                                                      \
    "  --checkpoint-seconds S  with -o: every worker commits what it has done to\n"         \
    "                        DIR/" workload ".checkpoint/ at least every S seconds\n"      \
    "                        (default 300; 0: never), and at once on SIGTERM or\n"        \
    "                        Ctrl-C, so a killed run loses at most that much\n"           \
    "  --resume DIR          finish the run that was writing DIR (killed, out of\n"        \
    "                        time, disk full) with the same options: the " what "\n"       \
    "                        its checkpoint holds are not computed again\n"
/* -o and --force, the same for every workload (docs/running.md, "Data
 * safety"). */
#define OPT_OUTPUT_HELP(workload)                                                          \
    "  -o, --output DIR      write DIR/" workload ".h5 (DIR is made when missing;\n"       \
    "                        nothing else in it is touched)\n"                            \
    "  --compress            deflate the datasets (zlib level 4 after HDF5's shuffle:\n"   \
    "                        filters h5py and h5dump read without plugins); smaller\n"    \
    "                        files, slower to write and read\n"                          \
    "  --force               replace an existing DIR/" workload ".h5: the new result\n"    \
    "                        is written beside it and takes its place only once\n"       \
    "                        complete; a failed run leaves the old one\n"
/* --header for the text and CSV readers. */
#define OPT_HEADER_HELP                                                                    \
    "  --header auto|yes|no  text and CSV: whether the first line holds column\n"         \
    "                        names; auto (default): when none of its fields is a\n"      \
    "                        number or empty\n"
fd_status opt_header(const char *val, int *out);
/* 1 when code is one of the two options (*st tells whether its value was
 * good), 0 for any other. */
int opt_ckpt_take(opt_ckpt *c, int code, const char *val, fd_status *st);
fd_status opt_ckpt_finish(const opt_ckpt *c, const char **outdir, int *resume);
/* FD_ERR_USAGE for an option getopt_long rejected (it printed why). */
fd_status opt_bad(const char *cmd);

/* The whole command line, for metadata. */
extern char *fd_command_line;

#endif
