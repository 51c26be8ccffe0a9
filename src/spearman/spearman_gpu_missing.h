/* SPDX-License-Identifier: BSD-3-Clause */
/* --missing pairwise on the GPU: the pairs with a row that misses a value,
 * which the int8 kernel (spearman_gpu.cu) passes over as constant rows.
 * Each pair is re-ranked over the observations both rows have, in
 * integers, exactly as smat_pair_sums does on the CPU (rankmat.c), and
 * counted, binned into the rho histogram and screened against the
 * selection of its own number of observations m (spearman_decide.h).
 * The pairs the host must see come back with their exact sums, so the
 * host decides the close ones with tile.c's test and writes the rest: the
 * CPU backend's pairs, bit for bit (tests/gpu_spearman.py).
 *
 * Rows up to SPEARMAN_GPU_MAX_N values.  One engine per spearman_gpu,
 * on its device and stream, reading its resident int8 rows for the rows
 * without a missing value; the rows that miss one travel as int16. */
#ifndef FD_SPEARMAN_GPU_MISSING_H
#define FD_SPEARMAN_GPU_MISSING_H

#include "../common/status.h"
#include "spearman_gpu.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct spearman_gpu_missing spearman_gpu_missing;

/* The rows of one input that miss a value: their numbers, ascending, and
 * each one's n values (doubled centred ranks over the values it has,
 * SMAT_MISSING where it has none), row after row. */
typedef struct spearman_gpu_incomplete {
    uint64_t count;
    const uint32_t *rows;
    const int16_t *values;
} spearman_gpu_incomplete;

typedef struct spearman_gpu_missing_sel {
    int mode;                    /* 'p', 'r' or 'a' (no --fdr key, no --top-k: the host does those) */
    const double *q_by_m;        /* n + 1 entries: the q of spearman_sel's by_n[m] (mode 'a': unused) */
    int hist;                    /* fill the rho histogram */
    int emit;                    /* pairs kept for certain come back too */
} spearman_gpu_missing_sel;

typedef struct spearman_gpu_mpair {
    uint32_t i, j;               /* rows of x and y */
    int32_t s, sii, sjj;         /* the pair's sums over its m common observations */
    uint16_t m;
    uint16_t keep;               /* 1: kept for certain (counted in selected); 0: the host decides */
} spearman_gpu_mpair;

typedef struct spearman_gpu_missing_out {
    uint64_t pairs;              /* pairs of >= 3 common observations over which both rows vary */
    uint64_t selected;           /* of which kept for certain */
    const unsigned long long *hist; /* SPEARMAN_HIST_BINS counts, or NULL */
    const spearman_gpu_mpair *rec; /* pinned, owned by the engine; valid until the next call */
    uint64_t nrec;
} spearman_gpu_missing_out;

/* n: values per row.  y NULL: pairs within x.  records: the pair
 * buffer's first size (it grows; FD_GPU_RECORDS). */
fd_status spearman_gpu_missing_create(spearman_gpu_missing **out, spearman_gpu *g, uint32_t n,
                                      const spearman_gpu_incomplete *x, const spearman_gpu_incomplete *y,
                                      uint64_t records);
void spearman_gpu_missing_destroy(spearman_gpu_missing **m);

/* The pairs of rows [i0, i1) of x and [j0, j1) of y (upper: pairs within
 * x, only j > i) with a row that misses a value. */
fd_status spearman_gpu_missing_rect(spearman_gpu_missing *m, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                                    int upper, const spearman_gpu_missing_sel *sel, spearman_gpu_missing_out *out);

/* Seconds from the launches to their results on the host, and launches. */
void spearman_gpu_missing_stats(const spearman_gpu_missing *m, double *seconds, uint64_t *launches);

#ifdef __cplusplus
}
#endif

#endif
