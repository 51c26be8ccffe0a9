/* SPDX-License-Identifier: BSD-3-Clause */
/* What `fcbo-dist rules` reads and writes: a lattice result in memory,
 * checked against its context, and the rules as HDF5 (rules.h5,
 * docs/formats.md) or text. */
#ifndef FD_RULES_IO_H
#define FD_RULES_IO_H

#include "context.h"
#include "rules.h"

#include <hdf5.h>
#include <stdio.h>

/* A lattice result's concepts: intents as attribute indices of the
 * context (CSR), supports, and the upper covers (CSR of concept ids,
 * from /edges, or computed when the file has none). */
typedef struct rules_lattice {
    uint64_t n, min_support;
    uint64_t *off, *supp, *cov_off, *cov_ids;
    uint32_t *ids;
    int had_edges;
} rules_lattice;

void rules_lattice_free(rules_lattice *l);

/* The lattice file at path and its context: ctx_path, or the file's own
 * `input`, whose SHA-256 must be the file's `input_sha256`.  Everything
 * the rules use is checked (ids within the context, offsets in range,
 * covers with larger extents): a file that disagrees is FD_ERR_INPUT.
 * covers: the covering relation too (the file's /edges, or computed on
 * `threads` threads), which only the Luxenburger basis needs. */
fd_status rules_lattice_read(const char *path, const char *ctx_path, int covers, int threads, fca_context **ctx,
                             rules_lattice *l);

typedef struct rules_meta {
    const char *command, *lattice;
    double min_confidence;
    uint64_t min_support;
    int stem, lux;              /* which bases were computed */
} rules_meta;

/* rules.h5 at path, written beside and renamed into place when complete. */
fd_status rules_write_h5(const char *path, const fca_context *ctx, const rules_meta *m, const rules_out *stem,
                         const rules_out *lux);
/* The rules as text: "# ..." headers, then "PREMISE => CONCLUSION" with the
 * attributes' ids (names: their names, tab-separated) and the numbers. */
fd_status rules_write_text(FILE *f, const fca_context *ctx, int names, const rules_out *stem, const rules_out *lux);

/* fcbo-dist info of a rules file: every count checked against the
 * datasets, then a summary. */
fd_status rules_h5_info(hid_t f, const char *path, FILE *out);

#endif
