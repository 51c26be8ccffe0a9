/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoints of a lattice run (src/io/ckpt.h; docs/architecture.md,
 * "Checkpoints and --resume").
 *
 * Every consumer of subtrees (a CPU worker thread, or the one GPU loop of
 * a rank) writes its concepts through a router that stands in the sink
 * where the rank's part writer would be, to the segment that was current
 * when it took its first subtree (consumers share it).  Once that segment
 * is --checkpoint-seconds old (due), each consumer finishes what it took,
 * hands the concepts to the sink and says so (quiet); it then counts as
 * done in that segment, which commits when its last consumer is out, and
 * the consumer's next subtree starts a new one.
 * Rank 0's split of the top of the tree is a segment of its own (stage
 * 0), committed before the work list is saved, so a resumed run neither
 * splits again nor loses those concepts.  A lone consumer that follows
 * a long split (a GPU rank's host start) keeps writing to the split's
 * segment until it is due, and the list is saved when it commits: a run
 * that ends first has one segment, which becomes the result by a rename
 * instead of a copy. */
#ifndef FD_LATTICE_CKPT_H
#define FD_LATTICE_CKPT_H

#include "concepts.h"
#include "context.h"
#include "lattice.h"
#include "lattice_h5.h"

#include "../mpi/taskpool.h"

typedef struct lattice_ckpt lattice_ckpt;

typedef struct lattice_ckpt_opts {
    const char *dir, *ckdir;      /* DIR, DIR/lattice.checkpoint */
    double seconds;
    int resume, extents, device;  /* device: tasks made for a GPU backend */
    uint32_t min_support;
    int consumers;                /* slots: worker threads + 1 */
    int rank, size;
    const char *result;           /* the file the segments end up in place of */
} lattice_ckpt_opts;

/* Collective; the caller agrees on the result (a later allocation may
 * fail on one rank). */
fd_status lattice_ckpt_open(lattice_ckpt **out, const lattice_ckpt_opts *o, const fca_context *ctx);
/* Ends the run's checkpoint: removes it after a success, keeps it after a
 * failure of the machine that left work (and says so), and frees ck. */
void lattice_ckpt_close(lattice_ckpt **ck, fd_status st, int quiet);
int lattice_ckpt_resuming(const lattice_ckpt *ck);

/* 1 when a checkpoint begun at `since` (fd_now()) is due. */
int lattice_ckpt_due(const lattice_ckpt *ck, double since);

/* The writer that routes the calling thread's concepts to its segment. */
concept_writer lattice_ckpt_writer(lattice_ckpt *ck);

/* Rank 0.  After the split of a fresh run: commits the split's segment
 * and saves the list; keep_open (one consumer, one rank): the segment
 * stays the current one, unless due, and both wait for its commit.  On --resume: the saved list (each task checked
 * against p) less the subtrees earlier runs committed (out is ck's
 * memory). */
fd_status lattice_ckpt_split_done(lattice_ckpt *ck, const fd_records *all, int keep_open);
fd_status lattice_ckpt_remaining(lattice_ckpt *ck, const fcbo_prep *p, fd_records *out);
uint64_t lattice_ckpt_resumed(const lattice_ckpt *ck);

/* A task source over the pool that tracks which subtree each consumer
 * took (next), and commits segments (quiet, due). */
task_source lattice_ckpt_source(lattice_ckpt *ck, fd_pool *pool);

/* After a successful enumeration: commits every consumer's segment. */
fd_status lattice_ckpt_end(lattice_ckpt *ck);

/* At commit: the writer *w of path (the rank's part or the single file)
 * made from this rank's segments and its share of earlier runs': the
 * largest becomes the file in place, the others are copied into it.
 * Collective. */
fd_status lattice_ckpt_build(lattice_ckpt *ck, const char *path, lattice_h5 **w);

#endif
