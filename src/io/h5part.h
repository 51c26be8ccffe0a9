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

fd_status h5part_set_open(h5part_set *s, const char *dir, const char *master_name, int force, int rank, int size);
void h5part_set_committed(h5part_set *s);
void h5part_set_close(h5part_set *s, fd_status st);

/* Reader side: when master (opened from path) has a "parts" attribute,
 * checks that each part is present, has format part_format and
 * complete = 1, the master's input_sha256, and count_attr equal to element
 * r of the master's 1-D dataset counts_dset.  FD_OK for a single file. */
fd_status h5part_check(hid_t master, const char *path, const char *part_format, const char *count_attr,
                       const char *counts_dset);

/* The per-rank table of --stats and `info`: rank, results, work units,
 * busy and idle seconds, and the load imbalance (max busy / mean busy). */
void h5part_print_ranks(FILE *out, const char *results, const char *units, const uint64_t *nres,
                        const uint64_t *nunits, const double *busy, const double *idle, int ranks);

#endif
