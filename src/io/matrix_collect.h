/* SPDX-License-Identifier: BSD-3-Clause */
/* A whole matrix in memory as doubles, with its names where the file has
 * them: for readers that need every value before they start (dpc's
 * points, spearman --by columns, which transposes), over any format of
 * matrix_read.h. */
#ifndef FD_IO_MATRIX_COLLECT_H
#define FD_IO_MATRIX_COLLECT_H

#include "../common/sha256.h"
#include "../common/status.h"

#include <stdint.h>

typedef struct fd_matrix_all {
    uint64_t rows;        /* data rows */
    uint32_t n;           /* values per row */
    double *all;          /* rows x n, row-major */
    sha256_future sha;    /* the file's SHA-256, maybe still being computed:
                           * whoever needs it joins it (sha256_future_get) */
    char **row_names;     /* the rows' names (name_column), or NULL */
    uint64_t n_row_names; /* how many row_names holds (rows, once read) */
    char **col_names;     /* n names (a header as wide as the rows), or NULL */
} fd_matrix_all;

/* header: FD_HEADER_*; name_column: the first field of each text line is
 * the row's name; threads: as fd_matrix_sink's.  NaN or infinite values
 * are refused (FD_ERR_INPUT, with FILE:LINE), except NaN with keep_nan
 * (kept as missing values). */
fd_status fd_matrix_collect(const char *spec, int header, int name_column, int threads, int keep_nan,
                            fd_matrix_all *out);
void fd_matrix_all_free(fd_matrix_all *m);
/* Frees n strings and the array. */
void fd_names_free(char **names, uint64_t n);

#endif
