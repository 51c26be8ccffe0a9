/* SPDX-License-Identifier: BSD-3-Clause */
/* --edges: the covering relation (Hasse diagram) of the computed concepts
 * (docs/algorithms.md, "Edges").  The upper covers of a concept with
 * intent B are the maximal intents among B ∩ g' over the objects g outside
 * its extent (each is an intent: an intersection of intents), so each
 * concept needs one pass over the objects' rows; in an iceberg lattice
 * the covers of a frequent concept are frequent (larger extents), so they
 * are all among the computed concepts. */
#ifndef FD_LATTICE_EDGES_H
#define FD_LATTICE_EDGES_H

#include "context.h"

/* n concepts, concept c's intent ids[off[c] .. off[c+1]) in the user ids
 * (attr_label) of ctx: *cov_off (n + 1) and *cov_ids (ascending concept
 * ids) are each concept's upper covers, on T threads. */
fd_status lattice_covers(const fca_context *ctx, uint64_t n, const uint64_t *off, const uint32_t *ids, int threads,
                         uint64_t **cov_off, uint64_t **cov_ids);

#endif
