/* SPDX-License-Identifier: BSD-3-Clause */
/* The master file of a partitioned lattice (docs/formats.md): virtual
 * datasets over the ranks' parts, written once every part is committed,
 * and the checks a reader runs on it before trusting it. */
#ifndef FD_LATTICE_MASTER_H
#define FD_LATTICE_MASTER_H

#include "lattice_h5.h"

/* Writes the master file PATH (under a temporary name, renamed at the
 * end) over the parts of `ranks` ranks, which must all be committed and
 * lie in the same directory, named from run_id (resultdir.h).  rs[r]
 * describes rank r. */
fd_status lattice_master_write(const char *path, const char *run_id, const fca_context *ctx, const lattice_meta *meta,
                               const lattice_rank *rs, int ranks, int with_extents, int with_edges);

/* The part checks a reader runs (FD_OK for a single file): every part
 * present, complete and from the same input, and every virtual dataset
 * reading from the parts alone, because HDF5 reads a missing part as fill
 * values without a word. */
fd_status lattice_master_check(hid_t f, const char *path);

#endif
