/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading the matrix of `spearman`: one row per variable, one column per
 * observation, in any format of src/io/matrix_read.h.  Rows are ranked as
 * they stream in (by the text reader's threads), so only the rank matrix
 * is ever held. */
#ifndef FD_SPEARMAN_READ_H
#define FD_SPEARMAN_READ_H

#include "rankmat.h"

/* drop_nan: skip rows with NaN or infinite values (counted) instead of
 * refusing the file.  threads: to rank rows on while reading (the sink's
 * threads, fd_matrix_sink). */
fd_status spearman_read(spearman_mat **out, const char *spec, int drop_nan, int header, int threads);

#endif
