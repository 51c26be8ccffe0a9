/* SPDX-License-Identifier: BSD-3-Clause */
/* The text and CSV matrix reader (matrix_read.h has the formats). */
#ifndef FD_IO_MATRIX_TEXT_H
#define FD_IO_MATRIX_TEXT_H

#include "matrix_sink.h"

/* csv: commas (else blanks and tabs); drop_nan as fd_matrix_read. */
fd_status fd_matrix_read_text(const char *path, int csv, int drop_nan, const fd_matrix_sink *sink);

#endif
