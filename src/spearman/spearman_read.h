/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the matrix of `spearman`: one row per variable, one column per
 * observation, in any format of src/io/matrix_read.h.  Rows are ranked as
 * they stream in (by the text reader's threads), so only the rank matrix
 * is ever held. */
#ifndef FD_SPEARMAN_READ_H
#define FD_SPEARMAN_READ_H

#include "rankmat.h"

typedef struct spearman_read_opts {
    int drop_nan;    /* skip rows with NaN or infinite values (counted) instead of refusing the file */
    int header;      /* FD_HEADER_* */
    int threads;     /* to rank rows on while reading (the sink's threads, fd_matrix_sink) */
    int by_columns;  /* the columns are the variables (--by columns) */
    int row_names;   /* text and CSV: the first field of each line is the row's name */
    int missing_drop; /* --missing drop: NaN is missing; observations missing in any variable are dropped */
    int missing_pairwise; /* --missing pairwise: NaN is missing; each pair uses the observations both have */
    int kendall;     /* --method kendall: rows as sign vectors (kendall.h) */
} spearman_read_opts;

fd_status spearman_read(spearman_mat **out, const char *spec, const spearman_read_opts *o);

#endif
