/* SPDX-License-Identifier: BSD-3-Clause */
/* A formal context (objects x attributes, binary) as the user gave it.
 *
 * Rows are stored sparse (CSR, attribute indices ascending), which is the
 * smallest form for every input format; the FCbO engine builds its own
 * bitsets from it (fcbo_prep).  Attribute index a in 0..n_attr-1 is the
 * dense position; attr_label[a] is the id the user sees in outputs: the
 * original number for FIMI files (ids mapped densely, order kept), the
 * 0-based column for .cxt and CSV. */
#ifndef FD_CONTEXT_H
#define FD_CONTEXT_H

#include "../common/status.h"

#include <stdint.h>

typedef enum { CTX_FMT_AUTO = 0, CTX_FMT_CXT, CTX_FMT_FIMI, CTX_FMT_CSV, CTX_FMT_TSV } ctx_format;

typedef struct fca_context {
    uint32_t n_obj, n_attr;
    uint64_t *row_ptr;     /* n_obj + 1 offsets into row_idx */
    uint32_t *row_idx;     /* attribute indices, ascending within a row */
    uint32_t *attr_label;  /* n_attr user ids */
    char **attr_names;     /* n_attr names (never NULL entries) */
    char **obj_names;      /* n_obj names, or NULL when the format has none */
    char *source;          /* path it was read from, or a description */
    char sha256[65];       /* of the file's bytes, "" when generated */
    ctx_format format;
} fca_context;

/* Empty context with room for the given shape; names left NULL. */
fd_status fca_context_create(fca_context **out, uint32_t n_obj, uint32_t n_attr, uint64_t nnz);
void fca_context_destroy(fca_context **ctx);
/* Frees the incidence (row_ptr, row_idx; NULL after) once nothing will
 * read it again, keeping the shape, names, labels and hash: `lattice`
 * without --edges, whose search reads its own copy (fcbo_prep). */
void fca_context_drop_incidence(fca_context *ctx);

/* Format from a file name's extension, or CTX_FMT_AUTO when unknown. */
ctx_format ctx_format_from_path(const char *path);
/* "cxt", "dat"/"fimi", "csv", "tsv" -> format; CTX_FMT_AUTO when unknown. */
ctx_format ctx_format_from_name(const char *name);
const char *ctx_format_name(ctx_format f);

/* Reads a context.  fmt CTX_FMT_AUTO picks by extension.  Bad input is
 * FD_ERR_INPUT with "FILE:LINE: what"; a shape that cannot fit in memory is
 * FD_ERR_NOMEM.  On success *out is owned by the caller. */
fd_status fca_context_read(fca_context **out, const char *path, ctx_format fmt);

/* Writes ctx in the given format (not AUTO).  The file is written to a
 * temporary name and renamed, so a failure leaves no partial file. */
fd_status fca_context_write(const fca_context *ctx, const char *path, ctx_format fmt);

/* Number of incidences of attribute a over all objects, for all a. */
void fca_context_supports(const fca_context *ctx, uint32_t *supp);

/* Memory the machine has, in bytes (for refusing hopeless sizes early). */
uint64_t fd_phys_memory(void);

#endif
