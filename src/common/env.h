/* SPDX-License-Identifier: BSD-3-Clause */
/* Numbers from the environment: the tuning and test knobs
 * (docs/performance.md lists them).  A knob set to anything but what it
 * takes is a usage error that names it, never a silent default. */
#ifndef FD_ENV_H
#define FD_ENV_H

#include "status.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* *out = the whole number in [lo, hi] that variable `name` holds, or dflt
 * when it is unset.  Empty, signed, partly numeric, out-of-range or
 * overflowing values are refused (FD_ERR_USAGE); `what` names the unit
 * for the message ("column tiles"). */
fd_status fd_env_count(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt, const char *what, uint64_t *out);

/* *out = the positive, finite number of seconds that `name` holds ("0.5",
 * "2e-1"), or dflt when it is unset; anything else is refused. */
fd_status fd_env_seconds(const char *name, double dflt, double *out);

/* FD_LATTICE_LAYOUT's words, in the order of FCBO_LAYOUT_* (lattice/fcbo.h). */
extern const char *const fd_env_layouts[];

/* *out = the index in words (NULL-terminated) of the word that `name`
 * holds, or dflt when it is unset; any other value is refused, with the
 * words it takes in the message. */
fd_status fd_env_word(const char *name, const char *const *words, int dflt, int *out);

/* The knobs that are read where a failure cannot be passed on (a progress
 * line's period, the switches below), checked once before any work: their
 * readers may then trust them.  The knobs read where a failure can be
 * passed on are checked there. */
fd_status fd_env_check(void);

/* Whether switch `name` (one of env.c's table: fd_env_switch lists them)
 * is set to its other word than the default (FD_WRITEBACK=off,
 * FD_BCP_GPU_SWEEP=host, FD_SPEARMAN_SCALAR=1).  fd_env_check has refused
 * any other value.  A name not in the table reads as not switched. */
int fd_env_switched(const char *name);

/* The table of switches, for the tests and the docs' check: how many, and
 * the i-th one's name, its words (NULL-terminated, the default first)
 * through *words when words is not NULL; NULL past the end. */
size_t fd_env_switches(void);
const char *fd_env_switch(size_t i, const char *const **words);

#ifdef __cplusplus
}
#endif

#endif
