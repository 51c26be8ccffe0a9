/* SPDX-License-Identifier: BSD-3-Clause */
/* SIGTERM and SIGINT as a request to stop, not a kill: SLURM sends
 * SIGTERM before a job's time limit (and scancel does), a user presses
 * Ctrl-C.  The first such signal sets a flag that the workers read at
 * record boundaries: a checkpointed run commits what it finished, every
 * run removes what it half wrote, and the command exits with 128 +
 * the signal's number (143, 130).  A second signal ends the process at
 * once, as if no handler were installed.  docs/running.md, "Data safety". */
#ifndef FD_INTERRUPT_H
#define FD_INTERRUPT_H

/* Installs the handlers (main, before any thread starts). */
void fd_interrupt_install(void);
/* The signal that asked us to stop, or 0.  Async-signal-safe, cheap. */
int fd_interrupted(void);
/* FD_OK, or FD_ERR_INTERRUPTED with its message once a signal came:
 * what a stage boundary returns when nothing else failed. */
#include "status.h"
fd_status fd_interrupt_check(void);

/* Acts as if signal sig had arrived (tests; a rank told by another rank
 * to stop). */
void fd_interrupt_raise(int sig);

#endif
