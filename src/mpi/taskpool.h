/* SPDX-License-Identifier: BSD-3-Clause */
/* Dynamic distribution of work records across ranks and threads.
 *
 * Rank 0 owns a list of records (opaque runs of 64-bit words: FCbO
 * subtrees now, Spearman tiles later), ordered costliest first, and hands
 * them out on request.  Worker threads on every rank take records with
 * fd_pool_next(); each rank's main thread runs fd_pool_drive(), the only
 * code that calls MPI, so MPI_THREAD_FUNNELED is enough.
 *
 * Rank 0's workers take records straight from the list through an atomic
 * cursor.  Other ranks keep a small local queue that the main thread
 * refills before it runs dry, so their workers rarely wait for a message.
 * Chunks shrink as the list drains (guided self-scheduling), so no rank
 * hoards the last records while others idle.  Waiting is done by polling
 * with short sleeps, never by spinning in MPI: the main thread shares its
 * cores with the workers.
 *
 * Without MPI (or with one rank) the pool is the atomic cursor alone and
 * fd_pool_drive() returns at once. */
#ifndef FD_TASKPOOL_H
#define FD_TASKPOOL_H

#include "../common/progress.h"
#include "../common/status.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Record i is data[start[i] .. start[i+1]), the last one ends at nwords.
 * Its id is ids[i], or i when ids is NULL: a resumed run hands out what
 * is left of a list under the ids the first run gave them. */
typedef struct fd_records {
    const uint64_t *data;
    const size_t *start;
    size_t n, nwords;
    const uint64_t *ids;
} fd_records;

typedef struct fd_pool fd_pool;

/* Collective over MPI_COMM_WORLD when MPI is active.  workers: threads of
 * this rank that will call fd_pool_next().  failed: this rank's failure
 * flag (set by its workers or writers); the pool stops handing out work
 * when it is set, and tells rank 0 so that every rank stops early. */
fd_status fd_pool_create(fd_pool **out, int workers, atomic_int *failed);
void fd_pool_destroy(fd_pool **p);
/* Longest pause between two polls for a message (default 1 ms).  Shorter
 * answers sooner and costs the main thread more CPU: right when the
 * workers are on a GPU and the cores idle. */
void fd_pool_set_max_sleep(fd_pool *p, long ns);

/* Rank 0 only, before fd_pool_drive(): the records to hand out.  The
 * caller keeps them alive until fd_pool_destroy(). */
void fd_pool_set_work(fd_pool *p, const fd_records *recs);

/* Thread-safe.  The next record for this rank and its id, or *rec = NULL
 * when no work is left.  Record memory stays valid until
 * fd_pool_destroy(). */
void fd_pool_next(fd_pool *p, const uint64_t **rec, size_t *len, uint64_t *id);

/* Main thread only, on every rank.  Returns once every record is handed
 * out and every rank has been told so.  progress: this rank's counter; on
 * rank 0 the other ranks' counts, reported with their requests, are added
 * to it so that rank 0's progress line shows the whole job. */
fd_status fd_pool_drive(fd_pool *p, fd_progress *progress);

/* The whole of a pool's work on this rank: `threads` worker threads call
 * fn(arg, thread, record, words) for every record this rank gets, while
 * the calling (main) thread drives the pool.  A failing fn stops this
 * rank's workers and, through rank 0, every rank's.  Returns the first
 * failure. */
typedef fd_status (*fd_pool_fn)(void *arg, int thread, uint64_t id, const uint64_t *rec, size_t len);
fd_status fd_pool_work(fd_pool *p, int threads, fd_pool_fn fn, void *arg, fd_progress *progress);

/* This rank in the pool (0 without MPI) and the worker threads of all
 * ranks together. */
int fd_pool_rank(const fd_pool *p);
/* Ranks sharing the pool (1 without MPI). */
int fd_pool_ranks(const fd_pool *p);
int fd_pool_total_workers(const fd_pool *p);

#endif
