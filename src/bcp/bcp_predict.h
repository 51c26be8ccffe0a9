/* SPDX-License-Identifier: BSD-3-Clause */
/* --predict-at FILE: the model's value at listed entries of the tensor
 * (the missing ones, or entries held out), without writing the whole
 * completed tensor.  FILE is any matrix src/io/matrix_read.h reads (text,
 * CSV, .npy, an HDF5 dataset): one entry a row, its 0-based index in each
 * mode a column, as NumPy indexes the tensor. */
#ifndef FD_BCP_PREDICT_H
#define FD_BCP_PREDICT_H

#include "bcp.h"

typedef struct bcp_entries {
    uint64_t n;           /* entries */
    uint32_t order;
    uint64_t *idx;        /* n x order, row-major */
} bcp_entries;

/* Refuses (FD_ERR_INPUT, with the row and column) a file of other than
 * `order` columns, and an index that is not an integer in [0, dims[n]). */
fd_status bcp_entries_read(const char *spec, uint32_t order, const uint64_t *dims, int threads, bcp_entries *out);
void bcp_entries_free(bcp_entries *e);

/* v[k] = sum_r prod_n A(n)[idx[k][n], r], as /completed holds it. */
void bcp_entries_predict(const bcp_model *m, const bcp_entries *e, double *v);

#endif
