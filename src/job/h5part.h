/* SPDX-License-Identifier: BSD-3-Clause */
/* Partitioned results: one part file per rank (DIR/W.RUNID.part-RRRRR.h5,
 * serial HDF5; names and the directory's rules in resultdir.h) and a
 * master file that rank 0 writes last over them.  Shared by every
 * workload: the checks a reader runs before trusting a master (HDF5 reads
 * a missing source of a virtual dataset as fill values, without an
 * error), and the table of what each rank did. */
#ifndef FD_H5PART_H
#define FD_H5PART_H

#include "../common/status.h"
#include "resultdir.h"

#include <hdf5.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define H5PART_NAME_MAX RD_NAME_MAX

/* The format_version attribute of every result file.  2: parts named
 * W.RUNID.part-RRRRR.h5 from the master's run_id (1: part-RRRRR.h5). */
#define FD_FORMAT_VERSION 2

/* Writer side: the master's attributes that name its parts (parts, and
 * run_id, which readers turn into the parts' names). */
fd_status h5part_put_parts(hid_t master, const char *run_id, int ranks);

/* Reader side: when master (opened from path) has a "parts" attribute,
 * checks that each part (named from the master's run_id) is a plain file,
 * has format "fcbo-dist WORKLOAD part" and complete = 1, the master's
 * input_sha256, and count_attr equal to element r of the master's 1-D
 * dataset counts_dset, and that every mapping of each virtual dataset in
 * vds (NULL-terminated) reads from one of the parts.  FD_OK for a single
 * file.  A master whose run_id is not a run id is refused: it would name
 * other files. */
fd_status h5part_check(hid_t master, const char *path, const char *workload, const char *count_attr,
                       const char *counts_dset, const char *const *vds);

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

/* Creates /ranks in the master f with part (the parts' names), host, threads, RESULTS,
 * UNITS, busy_seconds and idle_seconds (one row per rank) and leaves it
 * open in *group for a workload's own columns. */
fd_status h5part_write_ranks(hid_t f, const char *workload, const char *run_id, const h5part_rank *rs, int ranks,
                             const char *results, const char *units, hid_t *group);

/* The table printed by --stats and `info`, with the load imbalance (max
 * busy / mean busy); from memory, or from a master file's /ranks (nothing
 * for a single file). */
void h5part_print_ranks(FILE *out, const char *results, const char *units, const h5part_rank *rs, int ranks);
fd_status h5part_print_ranks_file(hid_t f, FILE *out, const char *results, const char *units);

#endif
