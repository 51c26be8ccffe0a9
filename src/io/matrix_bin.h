/* SPDX-License-Identifier: BSD-3-Clause */
/* The binary matrix readers: NumPy .npy and HDF5 FILE.h5:/dataset
 * (matrix_read.h has the formats). */
#ifndef FD_IO_MATRIX_BIN_H
#define FD_IO_MATRIX_BIN_H

#include "matrix_sink.h"

fd_status fd_matrix_read_npy(const char *path, int drop_nan, const fd_matrix_sink *sink);
/* spec: FILE.h5:/dataset. */
fd_status fd_matrix_read_h5(const char *spec, int drop_nan, const fd_matrix_sink *sink);

#endif
