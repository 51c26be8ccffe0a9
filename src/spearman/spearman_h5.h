/* SPDX-License-Identifier: BSD-3-Clause */
/* The spearman result files (docs/formats.md): DIR/spearman.h5 from one
 * rank, or one DIR/part-RRRRR.h5 per rank and a master DIR/spearman.h5
 * whose /pairs datasets are virtual datasets over the parts.  Pairs are
 * (i, j, rho, p): i and j are 0-based row numbers of the input(s). */
#ifndef FD_SPEARMAN_H5_H
#define FD_SPEARMAN_H5_H

#include "../common/status.h"
#include "../job/h5part.h"

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>

typedef struct spearman_h5 spearman_h5;

/* Everything the master (or single) file records about the run. */
typedef struct spearman_meta {
    const char *command, *mode;     /* mode: "pvalue", "rho", "fdr", "top-k" */
    const char *backend;
    const char *input, *input_sha256, *y_input, *y_sha256;
    uint64_t rows, y_rows, constant_rows, y_constant_rows, dropped_rows;
    const char *missing;            /* --missing: "refuse", "drop" or "pairwise" */
    const char *method;             /* "spearman" or "kendall" */
    uint64_t dropped_observations;  /* --missing drop: observations left out */
    uint64_t incomplete_rows, y_incomplete_rows; /* --missing pairwise: rows that miss a value */
    uint32_t n;                     /* observations per row */
    double threshold;               /* alpha, R, Q, or K */
    double rho_cut;                 /* the |rho| a pair needs (sqrt(q)) */
    int count_only;
    uint64_t pairs_tested, pairs_selected;
    const uint64_t *hist;           /* SPEARMAN_HIST_BINS */
    int ranks, threads;
    double wall_seconds, load_seconds, pass1_seconds, pass2_seconds;
    double fdr_seconds;             /* --fdr: the cutoff's collecting pass; not written otherwise */
    double checkpoint_seconds;      /* 0: no checkpoints */
    uint64_t resumed_records;       /* tile records earlier runs did (--resume) */
    /* The variables' names by input row (/names, /y_names), or NULL. */
    char *const *names, *const *y_names;
    uint64_t n_names, n_y_names;
} spearman_meta;


fd_status spearman_h5_create(spearman_h5 **out, const char *path);
/* Appends n pairs.  Not thread-safe: the caller serialises. */
fd_status spearman_h5_append(spearman_h5 *w, const uint64_t *i, const uint64_t *j, const float *rho,
                             const double *p, size_t n);
uint64_t spearman_h5_count(const spearman_h5 *w);
fd_status spearman_h5_commit(spearman_h5 **w, const spearman_meta *m);
fd_status spearman_h5_commit_part(spearman_h5 **w, const char *sha256, int rank, int ranks);
void spearman_h5_abort(spearman_h5 **w);

/* Checkpoint segments (src/io/ckpt.h) are pair files too: the file, for
 * the segment's own attributes and sums, and the commit that closes and
 * renames it without a part's attributes. */
hid_t spearman_h5_file(const spearman_h5 *w);
const char *spearman_h5_path(const spearman_h5 *w);
fd_status spearman_h5_finish(spearman_h5 **w);
/* Appends the pairs of the open file src (a segment). */
fd_status spearman_h5_append_file(spearman_h5 *w, hid_t src, const char *what);
/* A writer for path that starts from the committed segment seg (renamed
 * to path's temporary name), so the largest segment is not copied. */
fd_status spearman_h5_adopt(spearman_h5 **w, const char *seg, const char *path);

/* rs[r]: rank r's pairs (results) and tile records (units); the parts are
 * named from run_id (resultdir.h). */
fd_status spearman_master_write(const char *path, const char *run_id, const spearman_meta *m, const h5part_rank *rs,
                                int ranks);

/* Readers (fcbo-dist info): a spearman file's summary, or its pairs as
 * text lines "i j rho p". */
fd_status spearman_h5_info(hid_t f, const char *path, FILE *out);
fd_status spearman_h5_text(hid_t f, const char *path, FILE *out);

#endif
