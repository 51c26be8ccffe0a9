/* SPDX-License-Identifier: BSD-3-Clause */
/* `fcbo-dist rules`: the implications and association rules of a context
 * (docs/algorithms.md, "Rules").
 *
 *  - The Duquenne-Guigues basis (stem base): the implications P -> P''\P
 *    for the pseudo-intents P of the context, the smallest set from which
 *    every implication that holds follows (Guigues & Duquenne 1986).
 *    Found by Ganter's NextClosure over the sets closed under the
 *    pseudo-closure L* of the implications found so far, in lectic order
 *    (Ganter 1984; Ganter & Obiedkov 2016, Alg. 18): each such set is an
 *    intent or a pseudo-intent.
 *  - The Luxenburger basis of the partial rules of an (iceberg) lattice:
 *    one rule B1 -> B2\B1 per covering pair of concepts (A2, B2) < (A1,
 *    B1), with support |A2|, confidence |A2| / |A1| and lift confidence
 *    |G| / |(B2\B1)'|; every rule between frequent intents follows from
 *    these by the product of confidences (Luxenburger 1991; Stumme et al.
 *    2001). */
#ifndef FD_RULES_H
#define FD_RULES_H

#include "context.h"

#include <stdint.h>

/* Sets of attribute indices of the context as CSR: set k is
 * ids[off[k] .. off[k+1]), ascending. */
typedef struct rules_sets {
    uint64_t n, nids;
    size_t cap, capids;
    uint64_t *off;
    uint32_t *ids;
} rules_sets;

typedef struct rules_out {
    rules_sets premise, conclusion;
    uint64_t *support;          /* |premise'| for implications, |A2| for rules */
    double *confidence, *lift;  /* rules only */
    uint64_t *lower, *upper;    /* rules only: the concepts (A2, B2) and (A1, B1) */
    uint64_t n;
    size_t cap;
} rules_out;

void rules_out_free(rules_out *r);

/* The stem base of ctx into *out (premises in lectic order).  progress:
 * called every 64 sets enumerated with the count so far, or NULL. */
fd_status rules_stem_base(const fca_context *ctx, rules_out *out, void (*progress)(void *arg, uint64_t sets),
                          void *arg);

/* The Luxenburger basis of n concepts: intent k = attribute indices
 * ids[off[k] .. off[k+1]) (ascending), support supp[k], upper covers
 * cov_ids[cov_off[k] .. cov_off[k+1]); rules of confidence >= min_conf
 * and support > 0. */
fd_status rules_luxenburger(const fca_context *ctx, uint64_t n, const uint64_t *off, const uint32_t *ids,
                            const uint64_t *supp, const uint64_t *cov_off, const uint64_t *cov_ids, double min_conf,
                            rules_out *out);

#endif
