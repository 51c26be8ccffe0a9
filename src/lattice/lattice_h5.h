/* SPDX-License-Identifier: BSD-3-Clause */
/* The lattice result files (layout in docs/formats.md).
 *
 * lattice_h5_create opens "PATH.tmp.PID" and returns a concept_writer that
 * appends batches; lattice_h5_commit writes names and metadata, closes the
 * file and renames it to PATH, so a file at PATH is always complete.
 * lattice_h5_abort removes the temporary file.
 *
 * With several ranks, each rank writes the same kind of file as a part
 * (DIR/part-RRRRR.h5, committed with lattice_h5_commit_part, which turns
 * its offsets into global ones), and rank 0 then writes DIR/lattice.h5, a
 * master file whose datasets are HDF5 virtual datasets over the parts
 * (lattice_master_write).  Readers see one lattice either way. */
#ifndef FD_LATTICE_H5_H
#define FD_LATTICE_H5_H

#include "concepts.h"
#include "context.h"
#include "fcbo.h"

#include "../job/h5part.h"

#include <hdf5.h>

typedef struct lattice_h5 lattice_h5;

typedef struct lattice_meta {
    const char *command;      /* the command line */
    const char *backend;
    uint32_t min_support;
    int threads;
    int ranks;
    double wall_seconds;
    fcbo_stats stats;
    double checkpoint_seconds;  /* 0: no checkpoints */
    uint64_t resumed_subtrees;  /* done by earlier runs (--resume) */
} lattice_meta;

/* A part's place in the whole: the global index of its first concept and
 * of its first intent and extent id (exclusive prefix sums over ranks). */
typedef struct lattice_part {
    int rank, ranks;
    uint64_t first_concept, first_int, first_ext;
} lattice_part;

/* What each rank did, gathered on rank 0 for the master file and --stats:
 * the shared row (results = concepts, units = subtrees) and the counts the
 * master's virtual datasets need. */
typedef struct lattice_rank {
    h5part_rank r;
    uint64_t int_ids, ext_ids, closures;
    uint64_t edges;  /* --edges: the covers in the part */
} lattice_rank;

/* replaces: the file the result will take the place of (h5u_out_create_for). */
fd_status lattice_h5_create(lattice_h5 **out, const char *path, const char *replaces, const fca_context *ctx,
                            int with_extents);
concept_writer lattice_h5_as(lattice_h5 *w);
fd_status lattice_h5_commit(lattice_h5 **w, const fca_context *ctx, const lattice_meta *meta);
/* --edges: the intents written so far (offsets from 0, n + 1 of them;
 * checked in order) and their supports, and the covers of those concepts as /edges/offsets
 * (n + 1, global in a part) and /edges/ids, with the attribute n_edges
 * (the part's own in a part).  Before the commit. */
fd_status lattice_h5_intents(lattice_h5 *w, uint64_t **off, uint32_t **ids, uint32_t **supports);
fd_status lattice_h5_put_covers(lattice_h5 *w, const uint64_t *cov_off, const uint64_t *cov_ids);
void lattice_h5_abort(lattice_h5 **w);
fd_status lattice_h5_commit_part(lattice_h5 **w, const fca_context *ctx, const lattice_part *part);
/* Concepts, intent ids and extent ids written so far. */
void lattice_h5_counts(const lattice_h5 *w, uint64_t *n, uint64_t *nint, uint64_t *next);

/* Shared by the single-file and the master writer. */
fd_status lattice_h5_put_meta(hid_t f, const fca_context *ctx, const lattice_meta *m, uint64_t n_concepts,
                              int with_extents);
/* The file type of intent ids (extents = 0) or extent ids (extents = 1). */
hid_t lattice_h5_id_type(const fca_context *ctx, int extents);
/* Checkpoint segments (src/job/ckpt.h) are lattice files too: the file,
 * for the segment's attributes; its final name; the commit that closes
 * and renames it with no part attributes.  append_file copies the
 * concepts of a segment at path into w. */
hid_t lattice_h5_file(const lattice_h5 *w);
const char *lattice_h5_path(const lattice_h5 *w);
fd_status lattice_h5_finish(lattice_h5 **w);
fd_status lattice_h5_append_file(lattice_h5 *w, const char *path);
/* A writer for path that starts from the committed segment seg, renamed
 * to path's temporary name: the largest segment becomes the part without
 * being copied. */
fd_status lattice_h5_adopt(lattice_h5 **w, const char *seg, const char *path, int with_extents);

/* The concepts of an open lattice file (or part, or segment) handed to
 * wr in slices, so that memory stays bounded for any size; full: supports
 * and extents too (a copy), else intents only (text).  Offsets are checked
 * as they are read (ascending, within the ids). */
fd_status lattice_h5_stream(hid_t f, const char *path, int full, concept_writer wr);

#endif
