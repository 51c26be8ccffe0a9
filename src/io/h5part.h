/* Partitioned results: one part file per rank (DIR/part-RRRRR.h5, serial
 * HDF5) and a master file that rank 0 writes last over them.  Shared by
 * every workload: the directory and its clean-up, part names, and the
 * checks a reader runs before trusting a master (HDF5 reads a missing
 * source of a virtual dataset as fill values, without an error).
 *
 * The life of a set, on every rank:
 *   h5part_set_open     rank 0 prepares DIR and removes an earlier master;
 *                       the caller agrees (fd_mpi_agree) before any rank
 *                       writes into DIR
 *   ... write the part to s->part (or the single file to s->master) ...
 *   h5part_set_committed  after the part is renamed into place
 *   h5part_set_close    success: rank 0 removes stale parts of earlier runs;
 *                       failure: every rank removes its part, then rank 0
 *                       removes DIR if it created it.  Collective when
 *                       distributed and the ranks agreed on the failure. */
#ifndef FD_H5PART_H
#define FD_H5PART_H

#include "../common/status.h"

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define H5PART_NAME_MAX 32

/* "part-RRRRR.h5" */
void h5part_name(char *buf, size_t cap, int rank);

typedef struct h5part_set {
    const char *dir;        /* NULL: no output */
    char *master;           /* DIR/MASTER_NAME */
    char *part;             /* DIR/part-RRRRR.h5 when distributed */
    int rank, size, distributed;
    int created;            /* rank 0 created DIR */
    int committed;          /* this rank's part is in place */
} h5part_set;

/* force: H5PART_NEW (DIR must not exist), H5PART_FORCE (may exist; an
 * earlier master is removed), H5PART_RESUME (must hold a checkpoint: left
 * as it is, a master included, until the run commits). */
enum { H5PART_NEW = 0, H5PART_FORCE = 1, H5PART_RESUME = 2 };
fd_status h5part_set_open(h5part_set *s, const char *dir, const char *master_name, int force, int rank, int size);
void h5part_set_committed(h5part_set *s);
void h5part_set_close(h5part_set *s, fd_status st);

/* Reader side: when master (opened from path) has a "parts" attribute,
 * checks that each part is present, has format part_format and
 * complete = 1, the master's input_sha256, and count_attr equal to element
 * r of the master's 1-D dataset counts_dset.  FD_OK for a single file. */
fd_status h5part_check(hid_t master, const char *path, const char *part_format, const char *count_attr,
                       const char *counts_dset);

/* What one rank did, for the master's /ranks group, --stats and `info`:
 * its results (concepts, pairs), its work units (subtrees, tiles), and
 * the mean busy and idle seconds of its worker threads. */
typedef struct h5part_rank {
    uint64_t results, units;
    double busy_seconds, idle_seconds;
    uint32_t threads;
    char host[64];
} h5part_rank;

/* Fills busy and idle from the threads' total busy seconds and the wall
 * time of the work, and the host name. */
void h5part_rank_times(h5part_rank *r, double busy_thread_seconds, int threads, double wall_seconds);

/* Creates /ranks in the master f with part, host, threads, RESULTS,
 * UNITS, busy_seconds and idle_seconds (one row per rank) and leaves it
 * open in *group for a workload's own columns. */
fd_status h5part_write_ranks(hid_t f, const h5part_rank *rs, int ranks, const char *results, const char *units,
                             hid_t *group);

/* The table printed by --stats and `info`, with the load imbalance (max
 * busy / mean busy); from memory, or from a master file's /ranks (nothing
 * for a single file). */
void h5part_print_ranks(FILE *out, const char *results, const char *units, const h5part_rank *rs, int ranks);
fd_status h5part_print_ranks_file(hid_t f, FILE *out, const char *results, const char *units);

#endif
