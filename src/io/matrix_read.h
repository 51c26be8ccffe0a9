/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a numeric matrix, one row at a time, for any workload that takes
 * one (spearman's variables, dpc's points).  Formats (docs/formats.md):
 * whitespace-separated text, CSV with an optional header row, NumPy .npy
 * (2-D, C order), and HDF5 as FILE.h5:/dataset.  Bad input is
 * FD_ERR_INPUT with FILE:LINE (text) or the row and column (binary).
 *
 * The rows go to a sink.  Text is parsed by worker threads, which also
 * apply the sink's transform (spearman ranks there, so that only the
 * ranked rows are ever held); the sink then receives the transformed rows
 * in input order, from the calling thread only. */
#ifndef FD_IO_MATRIX_READ_H
#define FD_IO_MATRIX_READ_H

#include "matrix_sink.h"

/* The reader by the name's form (FILE.h5:/dataset, .npy, .csv, else
 * text).  drop_nan: FD_NAN_* (matrix_sink.h).  Fails with "no data rows" when nothing
 * was pushed. */
fd_status fd_matrix_read(const char *spec, int drop_nan, const fd_matrix_sink *sink);

#endif
