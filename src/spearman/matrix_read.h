/* Reading the matrix of `spearman`: one row per variable, one column per
 * observation.  Formats (docs/formats.md): whitespace-separated text,
 * CSV with an optional header row, NumPy .npy, and HDF5 as
 * FILE.h5:/dataset.  Rows are ranked as they stream in, so only the rank
 * matrix is ever held.  Bad input is FD_ERR_INPUT with FILE:LINE. */
#ifndef FD_SPEARMAN_MATRIX_READ_H
#define FD_SPEARMAN_MATRIX_READ_H

#include "rankmat.h"

/* drop_nan: skip rows with NaN or infinite values (counted) instead of
 * refusing the file. */
fd_status spearman_read(spearman_mat **out, const char *spec, int drop_nan);

/* The text and CSV reader (matrix_text.c); csv: commas, optional header. */
fd_status spearman_read_text(spearman_mat **out, const char *path, int csv, int drop_nan);

#endif
