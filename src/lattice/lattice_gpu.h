/* SPDX-License-Identifier: BSD-3-Clause */
/* FCbO subtrees on one GPU: the device engine of the CUDA lattice backend.
 * Plain C interface (no CUDA header leaks through it).
 *
 * The engine keeps a stack of search-tree nodes in device memory: intent
 * (bitset over internal attributes), next attribute y, and extent: an
 * ascending list of object ids, or a bitset over the objects when that is
 * smaller.  One step pops up to `chunk` nodes from the
 * top, emits their concepts into a pinned host buffer and pushes their
 * canonical children; popping the newest nodes first keeps the stack
 * depth-first, so it grows with the depth of the tree times the chunk, not
 * with the width of a level.  docs/algorithms.md, "FCbO on the GPU", says
 * why the inherited failed sets of FCbO are not carried on the device. */
#ifndef FD_LATTICE_GPU_H
#define FD_LATTICE_GPU_H

#include "../common/status.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lattice_gpu lattice_gpu;

/* How a bitset extent C is closed: by rows (AND the rows of C's objects),
 * by columns (m is in the closure when C ⊆ col(m)), or by whichever an
 * estimate of the work favours, per candidate. */
typedef enum { FCA_GPU_CLOSE_AUTO = 0, FCA_GPU_CLOSE_ROWS, FCA_GPU_CLOSE_COLUMNS } lattice_gpu_closure;

typedef struct lattice_gpu_ctx {
    int device;                  /* CUDA device index */
    uint32_t n_obj, n_attr, aw;  /* n_attr internal attributes, aw words per intent */
    const uint64_t *rows;        /* n_obj x aw: object rows over internal attributes */
    const uint64_t *cols;        /* n_attr x ceil(n_obj / 64): the same by attribute */
    const uint64_t *all;         /* aw words: every internal attribute */
    /* Output order: rank r = 0..n_attr-1 in ascending user order; internal
     * attribute rank_int[r] is written as the id rank_label[r]. */
    const uint32_t *rank_int, *rank_label;
    uint32_t min_support;
    int with_extents;
    uint32_t chunk;              /* nodes per step, 0 for the default */
    /* Extents of bits_min objects or more are kept as bitsets: 0 for the
     * default (where a bitset is smaller than the list), UINT32_MAX for
     * never; smaller values exercise the bitset code in tests. */
    uint32_t bits_min;
    lattice_gpu_closure closure;
} lattice_gpu_ctx;

/* One step's concepts, in the CSR layout of concept_batch, in pinned host
 * memory owned by the engine (lattice_gpu_out_free releases it). */
typedef struct lattice_gpu_out {
    uint64_t n, nint, next;
    uint32_t *supp;
    uint64_t *int_end;
    uint32_t *int_ids;
    uint64_t *ext_end;           /* NULL without extents */
    uint32_t *ext_ids;
    uint64_t cap_n, cap_int, cap_ext;
} lattice_gpu_out;

typedef struct lattice_gpu_stats {
    uint64_t closures;           /* closures computed (canonical or not) */
    uint64_t fails;              /* of which failed the canonicity test */
    uint64_t skipped_support;    /* candidates below the minimum support */
    uint64_t by_columns;         /* closures computed by columns */
    uint64_t steps;              /* chunks processed */
    uint64_t max_nodes;          /* deepest the node stack got */
    uint64_t max_ext;            /* most 4-byte extent words it held (ids or bitset halves) */
} lattice_gpu_stats;

fd_status lattice_gpu_create(lattice_gpu **out, const lattice_gpu_ctx *c);
void lattice_gpu_destroy(lattice_gpu **g);

/* Pushes n nodes: intents n x aw words, y and extent sizes n each, the
 * extents concatenated in node order (ascending object ids each). */
fd_status lattice_gpu_push(lattice_gpu *g, uint32_t n, const uint64_t *intents, const uint32_t *y, const uint32_t *size,
                       const uint32_t *ext, uint64_t n_ext);
/* Nodes in the layout of lattice_gpu_push, on the host (malloc'ed). */
typedef struct lattice_gpu_nodes {
    uint64_t n, n_ext;
    uint64_t *intents;           /* n x aw */
    uint32_t *y, *size;          /* n each */
    uint32_t *ext;               /* the extents' ascending ids, concatenated */
} lattice_gpu_nodes;
/* Takes every node off the stack (none left on the device), so that the
 * subtrees not yet searched can be committed as tasks and searched later,
 * here or elsewhere: the stack after a step is exactly what is left. */
fd_status lattice_gpu_pop_all(lattice_gpu *g, lattice_gpu_nodes *out);
void lattice_gpu_nodes_free(lattice_gpu_nodes *h);
/* Nodes waiting on the stack. */
uint64_t lattice_gpu_pending(const lattice_gpu *g);
/* Nodes one step takes when that many are waiting. */
uint32_t lattice_gpu_chunk(const lattice_gpu *g);

/* Processes one chunk from the top of the stack: its concepts go to out
 * (grown as needed), its children onto the stack.  out->n = 0 when the
 * stack was empty. */
fd_status lattice_gpu_step(lattice_gpu *g, lattice_gpu_out *out);
void lattice_gpu_out_free(lattice_gpu_out *out);

void lattice_gpu_get_stats(const lattice_gpu *g, lattice_gpu_stats *s);

/* --edges' up pass by rows on the GPU (lattice_covers_gpu.cu): the upper
 * covers of the listed concepts, each the maximal intents among B ∩ g'
 * over the objects g outside its extent, one warp a concept.  Every
 * concept's intent is given (ascending attribute indices: concept c's are
 * iidx[ioff[c] - ioff[0] .. ioff[c + 1] - ioff[0])), for the look-up of
 * the covers by their intents; rows are the objects' bitsets of w words
 * over the same indices. */
#define LATTICE_GPU_COVERS_MAX_WORDS 16 /* attributes up to 1,024 */
typedef struct lattice_gpu_covers {
    int device;
    uint64_t n;                  /* concepts */
    const uint64_t *ioff;        /* n + 1 */
    const uint32_t *iidx;
    uint32_t n_obj, w;           /* w <= LATTICE_GPU_COVERS_MAX_WORDS */
    const uint64_t *rows;        /* n_obj x w */
    const uint64_t *list;        /* the concepts whose covers are wanted */
    uint64_t nlist;
} lattice_gpu_covers;

/* list[t]'s covers are (*ids)[start[t] .. start[t] + cnt[t]), ascending
 * concept ids; cnt[t] UINT32_MAX: not found here (more maximal candidates
 * at once than a warp keeps, or the output full), the host's to find.
 * *ids is malloc'ed (*nids entries).  FD_ERR_INPUT when a cover is not
 * among the concepts (the intents are not a lattice's). */
fd_status lattice_gpu_up_covers(const lattice_gpu_covers *in, uint64_t *start, uint32_t *cnt, uint64_t **ids,
                                uint64_t *nids);

#ifdef __cplusplus
}
#endif

#endif
