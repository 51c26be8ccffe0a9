/* The lattice result file (layout in docs/formats.md).
 *
 * lattice_h5_create opens "PATH.tmp.PID" and returns a concept_writer that
 * appends batches; lattice_h5_commit writes names and metadata, closes the
 * file and renames it to PATH, so a file at PATH is always complete.
 * lattice_h5_abort removes the temporary file. */
#ifndef FD_LATTICE_H5_H
#define FD_LATTICE_H5_H

#include "concepts.h"
#include "context.h"
#include "fcbo.h"

typedef struct lattice_h5 lattice_h5;

typedef struct lattice_meta {
    const char *command;      /* the command line */
    const char *backend;
    uint32_t min_support;
    int threads;
    int ranks;
    double wall_seconds;
    fcbo_stats stats;
} lattice_meta;

fd_status lattice_h5_create(lattice_h5 **out, const char *path, const fca_context *ctx, int with_extents);
concept_writer lattice_h5_as(lattice_h5 *w);
fd_status lattice_h5_commit(lattice_h5 **w, const fca_context *ctx, const lattice_meta *meta);
void lattice_h5_abort(lattice_h5 **w);

/* Prints a summary of a lattice file (fcbo-dist info). */
fd_status lattice_h5_info(const char *path, FILE *out);
/* Streams the intents of a lattice file as text, one per line. */
fd_status lattice_h5_text(const char *path, FILE *out);

#endif
