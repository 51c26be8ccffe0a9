/* SPDX-License-Identifier: BSD-3-Clause */
/* --edges: the covering relation (Hasse diagram) of the computed concepts
 * (docs/algorithms.md, "Edges").  The upper covers of a concept with
 * intent B are the maximal intents among B ∩ g' over the objects g outside
 * its extent (each is an intent: an intersection of intents), so each
 * concept needs one look at the objects that share an attribute with B;
 * in an iceberg lattice the covers of a frequent concept are frequent
 * (larger extents), so they are all among the computed concepts. */
#ifndef FD_LATTICE_EDGES_H
#define FD_LATTICE_EDGES_H

#include "../common/progress.h"
#include "context.h"
#include "lattice_gpu.h" /* lattice_gpu_covers: a plain C interface */

/* What lattice_covers needs: every concept's intent, the concepts whose
 * covers are wanted, and with several ranks a router.  Concept c's intent
 * is ids[off[c] - off[0] .. off[c + 1] - off[0]), in the user ids
 * (attr_label) of ctx. */
typedef struct lattice_covers_job {
    const fca_context *ctx;
    uint64_t n;                /* every rank's concepts */
    const uint64_t *off;       /* n + 1 */
    const uint32_t *ids;
    uint32_t min_support;      /* the lattice's (an iceberg's covers below it are not concepts) */
    const uint32_t *supports;  /* every concept's extent size (n), for the choice of pass; or NULL */
    uint64_t first, count;     /* this rank's concepts, whose covers it returns */
    /* The concepts whose covers this rank finds: with a router any share
     * (an even one: a rank's part may hold most concepts), else first
     * and count. */
    uint64_t work_first, work_count;
    int threads;
    fd_progress *prog;         /* counts the concepts done, or NULL */
    /* Several ranks: agrees on `local` first (returning the agreed status
     * when it is not FD_OK), then sends each (lower, upper) pair of
     * concept ids (a covering pair) to the rank that holds the lower one and hands back
     * the pairs this rank got (*got malloc'ed, in rank order).  Called
     * exactly once on every rank.  NULL: one rank. */
    fd_status (*route)(void *arg, fd_status local, const uint64_t *pairs, uint64_t npairs, uint64_t **got,
                       uint64_t *ngot);
    void *route_arg;
    /* A device's up pass by rows (lattice_gpu_up_covers), or NULL: with
     * one, the concepts whose covers are cheaper by rows go to `device`,
     * as do all with FD_EDGES_PASS=rows (down is not taken then), and the
     * host's threads find the rest, and any the device leaves. */
    fd_status (*up_covers)(const lattice_gpu_covers *in, uint64_t *start, uint32_t *cnt, uint64_t **ids,
                           uint64_t *nids);
    int device;
} lattice_covers_job;

/* The pass lattice_covers took, for the summary: "down", or "up" with how
 * many of this rank's concepts took the rows (the rest the columns), and
 * how many of those the device found. */
typedef struct {
    int down;
    uint64_t by_rows, concepts;
    uint64_t on_device; /* of by_rows, found by the device */
} lattice_covers_pass;

/* The upper covers of concepts [first, first + count): *cov_off (count +
 * 1, from 0) and *cov_ids (concept ids among all n, ascending per
 * concept), on the job's threads; the pass taken into *pass unless NULL.
 * Several ranks each take their own range of the same n; collective then
 * (the router). */
fd_status lattice_covers(const lattice_covers_job *job, uint64_t **cov_off, uint64_t **cov_ids,
                         lattice_covers_pass *pass);

#endif
