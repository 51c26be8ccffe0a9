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
fd_status opt_ckpt_finish(const opt_ckpt *c, const char **outdir, int *resume);
/* FD_ERR_USAGE for an option getopt_long rejected (it printed why). */
fd_status opt_bad(const char *cmd);

/* The whole command line, for metadata. */
extern char *fd_command_line;

#endif
