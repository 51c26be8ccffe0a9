/* SPDX-License-Identifier: BSD-3-Clause */
/* Result directories: where a workload's result goes, and the rules that
 * keep an earlier result safe (docs/running.md, "Data safety").
 *
 * DIR may hold the results of several workloads.  Workload W owns, by
 * exact name, and never touches anything else:
 *   W.h5                          the result (single file, or a master)
 *   W.RUNID.part-RRRRR.h5         rank R's part of the run RUNID (a master
 *                                 names its run id; 16 hex digits)
 *   W.checkpoint/                 the checkpoint of an unfinished run
 *   *.tmp.PID of the above        files being written
 *   .fcbo-dist.lock               the lock a writer of DIR holds while it runs
 *
 * A run writes beside the old result and replaces W.h5 by a rename once
 * the new one is complete; only then are the parts of the run it replaced
 * (and what killed runs of W left) removed.  Nothing is removed before.
 *
 * The life of a set, on every rank:
 *   rd_open       rank 0 makes DIR (or accepts it: an existing W.h5 only
 *                 with --force), takes the lock, picks the run id; every
 *                 rank learns the verdict and the names.  Collective.
 *   ... write the part to d->part, or the single file to d->result ...
 *   rd_part_committed   after this rank's part is renamed into place
 *   rd_close      success: rank 0 removes W's superseded parts and dead
 *                 temporaries; failure: every rank removes its part, rank
 *                 0 removes DIR again if it made it (only when empty).
 *                 Collective when distributed and the ranks agreed. */
#ifndef FD_RESULTDIR_H
#define FD_RESULTDIR_H

#include "../common/status.h"
#include "../mpi/fdmpi.h"

#include <stddef.h>

#define RD_RUN_ID_LEN 16
#define RD_NAME_MAX 96

/* RD_NEW: W.h5 must not exist.  RD_FORCE: an existing W.h5 is replaced
 * when this run completes.  RD_RESUME: W.checkpoint must exist (the
 * checkpoint module checks it); W.h5 is replaced as with RD_FORCE. */
typedef enum { RD_NEW = 0, RD_FORCE = 1, RD_RESUME = 2 } rd_mode;

typedef struct resultdir {
    char *dir;                        /* NULL: no output */
    char workload[32];
    char *result;                     /* DIR/W.h5 */
    char *part;                       /* DIR/W.RUNID.part-RRRRR.h5 when parts */
    char *checkpoint;                 /* DIR/W.checkpoint */
    char run_id[RD_RUN_ID_LEN + 1];
    int rank, size, parts;
    int created;                      /* rank 0 made DIR */
    int committed;                    /* this rank's part is in place */
    int lock_fd;                      /* rank 0: the lock, or -1 */
} resultdir;

/* dir NULL: no output (every name NULL).  parts: every rank writes a part
 * and rank 0 a master (else rank 0 writes the single file).  Collective
 * when MPI is active with several ranks: every rank gets rank 0's verdict.
 * A fresh run (not RD_RESUME) is refused while W.checkpoint exists: it
 * holds the work of an interrupted run that --resume would finish. */
fd_status rd_open(resultdir *d, const char *dir, const char *workload, rd_mode mode, const fd_mpi *mpi, int parts);
void rd_part_committed(resultdir *d);
void rd_close(resultdir *d, fd_status st);

/* "W.RUNID.part-RRRRR.h5" into buf; run_id NULL or "" gives the name of
 * results written before run ids (format 1: "part-RRRRR.h5"). */
void rd_part_name(char *buf, size_t cap, const char *workload, const char *run_id, int rank);
/* 1 when s is a run id: exactly RD_RUN_ID_LEN lower-case hex digits (a
 * master's run id names files to open: nothing else may pass). */
int rd_is_run_id(const char *s);

/* A new run id (random) into out[RD_RUN_ID_LEN + 1]. */
void rd_new_run_id(char *out);

/* "DIR/NAME" in newly allocated memory, or NULL. */
char *fd_path_join(const char *dir, const char *name);

/* Removes the files of directory dir for which ours(name, arg) is 1, and
 * nothing else; never follows a symbolic link (dir itself included).
 * Returns how many it removed, or -1 when dir cannot be opened as a
 * directory. */
long rd_remove_matching(const char *dir, int (*ours)(const char *name, void *arg), void *arg);

#endif
