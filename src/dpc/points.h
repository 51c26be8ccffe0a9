/* SPDX-License-Identifier: BSD-3-Clause */
/* The points of `dpc`: one row per point, one column per coordinate, in
 * any format of src/io/matrix_read.h; --columns picks the coordinates and
 * --label-column (or --labels FILE) a ground truth to score against. */
#ifndef FD_DPC_POINTS_H
#define FD_DPC_POINTS_H

#include "../common/sha256.h"
#include "../common/status.h"

#include <stdint.h>

typedef struct dpc_points {
    uint64_t n;           /* points */
    uint32_t d;           /* coordinates per point */
    double *x;            /* n x d, row-major */
    double *xt;           /* d x n, coordinate k of point j at xt[k n + j]: the passes' j loops read it */
    int64_t *truth;       /* the true label per point, or NULL */
    uint32_t columns;     /* values per input row */
    double *lo, *hi;      /* the bounding box (d each), or NULL: dpc_points_box scans */
    sha256_future sha;    /* the file's SHA-256: dpc_points_sha256 joins it */
    char *source;
} dpc_points;

/* The input file's SHA-256 as hex, waiting for its thread the first time:
 * a run on one rank needs it only for the result file, so the hash goes on
 * beside the fit instead of lengthening the read. */
fd_status dpc_points_sha256(dpc_points *p, const char **hex);

/* The bounding box into lo[d] and hi[d]: the read's (one pass over the
 * points there, where every pass over 10^7 points that the grids made
 * for it cost tens of milliseconds), or a scan when p was made otherwise. */
void dpc_points_box(const dpc_points *p, double *lo, double *hi);

/* The squared distance of two points of d coordinates, (a_k - b_k)^2
 * summed over k in order, each operation rounded on its own: the files
 * that call it are compiled without fused multiply-adds
 * (-ffp-contract=off, CMakeLists.txt), so that the fit, --predict and
 * the GPU's kernels (D2_STEP) get the same bits. */
static inline double dpc_d2(const double *a, const double *b, uint32_t d)
{
    double s = 0;
    for (uint32_t k = 0; k < d; k++) {
        const double t = a[k] - b[k];
        s += t * t;
    }
    return s;
}

typedef struct dpc_columns {
    const char *coords;   /* "1,2" or "1-3,5" (1-based), or NULL: every column but the label */
    uint32_t label;       /* 1-based label column, 0: none */
    const char *labels;   /* --labels FILE: the truth in a file of its own, or NULL */
    int header;           /* text inputs: FD_HEADER_AUTO, _YES or _NO (io/matrix_read.h) */
} dpc_columns;

/* Bad input (ragged rows, NaN, non-numeric, a column past the end, fewer
 * than 2 points) is FD_ERR_INPUT with FILE:LINE or the row and column.
 * threads: to convert rows on while reading (fd_matrix_sink). */
fd_status dpc_points_read(dpc_points **out, const char *spec, const dpc_columns *cols, int threads);
void dpc_points_destroy(dpc_points **p);

#endif
