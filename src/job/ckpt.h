/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoints of a long run, so that a rerun with --resume loses minutes,
 * not the run (docs/architecture.md, "Checkpoints and --resume").
 *
 * DIR/W.checkpoint/ (W: the workload; io/resultdir.h) holds, and this
 * module writes or removes nothing else there:
 *   job.h5        rank 0: the workload, the parameters that decide the
 *                 result, the work list (records, as the task pool hands
 *                 them out) and its digest, the generation (runs so far),
 *                 the first run's nonce and the run key (a digest of the
 *                 workload, the parameters and the nonce)
 *   seg-G-R-S.h5  committed segments: what one consumer (a worker thread,
 *                 or a GPU rank) of rank R in generation G wrote, with the
 *                 ids of the records whose results it holds in full and
 *                 the run key
 *   values-NAME.h5  a few numbers a resumed run needs (the FDR cutoff)
 *   *.tmp.PID     the above being written; a killed run leaves these, and
 *                 the next --resume removes them
 *
 * A segment or a job.h5 that does not match the run key (another run's,
 * or edited) is refused with a message, never used or removed.
 * A consumer writes its results to its own segment and commits it (closes
 * and renames it) at a record boundary once it is --checkpoint-seconds
 * old, so a dead rank loses at most that much of each consumer's work.
 * Segments are renamed only after their data is closed: a committed
 * segment is whole, and a record counts as done only through one.  The
 * workload decides what else a segment holds (its results and sums) and
 * builds the final parts from the segments when the run ends. */
#ifndef FD_CKPT_H
#define FD_CKPT_H

#include "../common/status.h"
#include "../mpi/taskpool.h"

#include <hdf5.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ckpt ckpt;

typedef struct ckpt_opts {
    const char *dir;          /* the run's output directory */
    const char *ckdir;        /* DIR/W.checkpoint (resultdir's checkpoint) */
    const char *workload;     /* "lattice", "spearman" */
    const char *params;       /* "key=value" lines that must match on --resume */
    double seconds;           /* commit a segment once it is this old */
    int resume;
    int rank, size;
} ckpt_opts;

/* Collective.  A fresh run (rank 0) makes the directory (resultdir has
 * refused one that exists); --resume checks that job.h5 exists, has the
 * same workload and parameters (FD_ERR_USAGE naming the first that
 * differs) and its run key, removes the temporaries a killed run left,
 * and starts a new generation. */
fd_status ckpt_open(ckpt **out, const ckpt_opts *o);
void ckpt_close(ckpt **ck);
int ckpt_resuming(const ckpt *ck);

/* Rank 0.  Saves the work list (fresh run) or loads it (resume: the list
 * the first run saved, whatever the ranks and threads now).  Loaded
 * memory belongs to ck. */
fd_status ckpt_save_records(ckpt *ck, const fd_records *recs);
fd_status ckpt_load_records(ckpt *ck, fd_records *recs);
/* Rank 0, after ckpt_load_records: every record passes valid (the
 * workload's check that it names only rows, tiles or ids of this run's
 * data), else FD_ERR_INPUT naming the file.  The records' digest only
 * shows an edit; a forged file recomputes it. */
typedef int (*ckpt_record_check)(const void *arg, const uint64_t *rec, size_t words);
fd_status ckpt_check_records(const ckpt *ck, const fd_records *recs, ckpt_record_check valid, const void *arg);

/* What a resumed run still has to do: a copy in *left of the records of
 * all whose done[i] is 0 (every one when done is NULL), each with its
 * index in all as its id.  Its arrays are allocated; ckpt_records_free
 * frees them. */
fd_status ckpt_records_left(const fd_records *all, const uint8_t *done, fd_records *left);
void ckpt_records_free(fd_records *r);

/* Rank 0: a few numbers a resumed run needs besides the segments (the
 * FDR cutoff), in values-NAME.h5 (NAME: lower case and _), written
 * atomically with the run key; get: 1 in *found when there, 0 when not
 * computed yet; a file that is there but not this run's is FD_ERR_INPUT. */
fd_status ckpt_put_values(const ckpt *ck, const char *name, const double *v, size_t n);
fd_status ckpt_get_values(const ckpt *ck, const char *name, double *v, size_t n, int *found);

/* Segments.  ckpt_seg_path: a new name for one, in allocated memory (the
 * workload writes it under fd_tmp_name(path) and renames it).
 * ckpt_seg_mark: before the commit, the attributes every segment carries
 * (stage: the workload's pass, 1 or 2) and the ids of its records.
 * ckpt_seg_committed: after the rename; the test hook FD_TEST_KILL_AFTER
 * = "R:K[:S]" kills rank R with SIGKILL once it has committed K segments
 * that hold records (of stage S). */
char *ckpt_seg_path(ckpt *ck);
fd_status ckpt_seg_mark(hid_t f, const ckpt *ck, int stage, const uint64_t *ids, size_t n);
void ckpt_seg_committed(ckpt *ck, int stage, size_t nids);
/* 1 when a segment opened at `opened` (fd_now()) is old enough to commit. */
int ckpt_due(const ckpt *ck, double opened);

/* Rank 0: calls fn for every committed segment of earlier generations,
 * with the file open for reading and its record ids (each below
 * nrecords, the work list's length).  A segment that cannot be read, or
 * that carries another run key, is FD_ERR_INPUT naming it: it is the
 * user's to remove, never ours. */
typedef fd_status (*ckpt_seg_fn)(void *arg, const char *path, hid_t f, int stage, const uint64_t *ids, size_t n);
fd_status ckpt_scan(ckpt *ck, size_t nrecords, ckpt_seg_fn fn, void *arg);

/* Sends rank 0's list of paths to every rank and returns this rank's
 * share (every size-th from its rank on): the segments of earlier runs
 * that it copies into its part.  Collective; *mine is allocated, a
 * NULL-terminated array. */
fd_status ckpt_share_paths(const ckpt *ck, char **paths, size_t n, char ***mine);
void ckpt_free_paths(char **paths);

/* Rank 0, at the end.  Removes the checkpoint (its files, by name) once
 * the run's result is committed (st = FD_OK), or after a failure of a
 * fresh run that committed nothing.  Otherwise keeps it, with what this
 * run committed (an interrupted run's work, a failure of the machine, or
 * an error the user can mend, such as --max-output), and when --resume
 * can continue it says so on stderr and returns 1. */
int ckpt_finish(ckpt *ck, fd_status st);

#endif
