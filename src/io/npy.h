/* SPDX-License-Identifier: BSD-3-Clause */
/* The header of a NumPy .npy file (format versions 1 to 3), shared by
 * the matrix reader (spearman, dpc) and bcp's tensor reader: the magic,
 * the header's length and its dict (descr, fortran_order, shape).  What
 * each reader accepts (dimensions, element types, order) it checks
 * itself, in its own words; npy_bytes_held then says whether the file
 * holds the data the shape promises, before anyone allocates for it. */
#ifndef FD_IO_NPY_H
#define FD_IO_NPY_H

#include "../common/status.h"

#include <stdint.h>
#include <stdio.h>

#define NPY_MAX_DIMS 32

typedef struct npy_header {
    char descr[16];                 /* as written: '<f8', '|u1', ... */
    int fortran;                    /* fortran_order True */
    uint32_t ndim;
    uint64_t shape[NPY_MAX_DIMS];
    uint32_t elem;                  /* bytes an element, from descr (0: unknown) */
} npy_header;

/* Reads the header from f (at the file's start), leaving f at the data.
 * FD_ERR_INPUT naming path:
 * not a .npy, a truncated or malformed header, a shape that is not a
 * tuple of non-negative integers, more than NPY_MAX_DIMS dimensions. */
fd_status npy_read_header(FILE *f, const char *path, npy_header *h);

/* The bytes of data the file holds after the header (f at the data). */
uint64_t npy_bytes_held(FILE *f);

#endif
