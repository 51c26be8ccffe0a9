/* SPDX-License-Identifier: BSD-3-Clause */
/* The rank matrix: every row of the input replaced by its centred,
 * doubled average ranks a_k = 2 rank_k - (n + 1), integers in
 * [-(n-1), n-1] (ties share the average rank, so 2 rank is an integer).
 * Spearman's rho of rows i and j is then exactly
 *     rho = S_ij / sqrt(S_ii S_jj),   S_ij = sum_k a_ik a_jk,
 * with every S an exact integer (docs/algorithms.md, "Spearman").
 *
 * Rows are stored packed for the tile kernels: groups of 8 rows, and
 * within a group, for each pair of columns (2p, 2p+1), the 8 rows' two
 * int16 values side by side in one 32-bit word.  One 256-bit load then
 * gives 8 rows' values of a column pair, and a 32-bit broadcast gives one
 * row's, which is what an int16 multiply-add (pmaddwd) wants.  Rows past
 * the end of the last group are zero, i.e. constant, i.e. never emitted. */
#ifndef FD_SPEARMAN_RANKMAT_H
#define FD_SPEARMAN_RANKMAT_H

#include "../common/sha256.h"
#include "../common/status.h"
#include "kendall.h"

#include <stdint.h>

/* Observations per row up to which the SIMD kernel is exact: |a| < 2^15
 * for int16, two products per pmaddwd lane below 2^31, and the sum
 * |S| <= n (n-1)^2 below 2^31 (n <= 1290).  Above it the exact int64
 * path is used. */
#define SMAT_FAST_MAX_N 1290

typedef struct spearman_mat {
    uint64_t rows;        /* data rows kept */
    uint32_t n;           /* observations (columns); Kendall: the sign vector's width n_obs (n_obs - 1) / 2 */
    uint32_t n_obs;       /* observations per row as read (after --missing drop) */
    kendall_ties *ties;   /* --method kendall: each row's ties (kendall.h), else NULL */
    uint64_t ties_cap;
    uint32_t kp;          /* column pairs: (n + 1) / 2 */
    uint32_t *packed;     /* groups x kp x 8 words */
    uint64_t cap_groups;
    size_t packed_bytes, sii_bytes, root_bytes; /* fd_big_* arrays: packed, sii, root and inv_root */
    int64_t *sii;         /* S_ii per row; 0 for a constant row */
    float *root;          /* sqrt(S_ii) per row, for the float prefilter */
    float *inv_root;      /* 1 / sqrt(S_ii) (0 for a constant row), for the histogram */
    uint64_t *row_id;     /* input row number of each kept row; NULL when none was dropped */
    uint64_t constant;    /* rows with S_ii = 0 */
    uint64_t dropped;     /* rows dropped for NaN/inf (--drop-nan-rows) */
    uint64_t dropped_obs; /* observations dropped for a missing value (--missing drop) */
    /* --missing pairwise: rows with a missing value hold the ranks of the
     * values they have among themselves and SMAT_MISSING elsewhere, and
     * S_ii = 0, so that the tile kernels pass over them as over constant
     * rows; their pairs are computed one by one (smat_pair_sums).  NULL
     * when no row misses a value. */
    uint8_t *incomplete;
    uint64_t incomplete_cap, n_incomplete;
    /* The input file's SHA-256, for the output's metadata: it may still be
     * computing when the read ends (smat_sha256 joins it). */
    sha256_future sha;
    /* What the results depend on, the ranks and the input row numbers,
     * digested (smat_digest): what ranks compare, and checkpoints record,
     * instead of waiting for the file's hash. */
    char digest[65];
    char *source;
    /* The variables' names by input row (--row-names, or a header with
     * --by columns), or NULL. */
    char **names;
    uint64_t n_names;
} spearman_mat;

fd_status smat_create(spearman_mat **out, uint32_t n);
void smat_destroy(spearman_mat **m);
/* Appends a row of n values (ranked here).  input_row: its number in the
 * input, counting dropped rows. */
fd_status smat_push(spearman_mat *m, const double *x, uint64_t input_row);
/* Room for this many rows (a reader's estimate; growth still works). */
fd_status smat_reserve(spearman_mat *m, uint64_t rows);
/* Appends a row already ranked (a from spearman_rank). */
fd_status smat_push_ranked(spearman_mat *m, const int32_t *a, uint64_t input_row);
/* Counts a dropped row of the input; from then on kept rows record their
 * input row numbers (the input_row of smat_push). */
fd_status smat_drop(spearman_mat *m);
/* Instead of pushing: room for exactly `rows` rows, then each row's
 * ranks into its place r from any thread (distinct r), every row once
 * (a reader's workers: the push of each row in order on one thread bounded
 * reading a .npy on 16 cores).  Not after any push or drop. */
fd_status smat_place_begin(spearman_mat *m, uint64_t rows);
void smat_place_ranked(spearman_mat *m, const int32_t *a, uint64_t r);
/* Once all rows are in: the constant rows counted, and the per-row roots
 * the prefilter uses, on `threads` threads. */
fd_status smat_finish(spearman_mat *m, int threads);
/* The input file's SHA-256 into m->sha.hex, joining the hash if it is
 * still running (a failure of its read is the error). */
fd_status smat_sha256(spearman_mat *m);
/* m->digest from the observations per row, the ranks and the input row
 * numbers, on `threads` threads (sha256_spans_hex): equal digests, equal
 * results, whatever file or format the values came from. */
fd_status smat_digest(spearman_mat *m, int threads);

/* --method kendall: rows of n_obs observations as their sign vectors
 * (kendall.h): smat_create with the width, then this; each row's ties go
 * in with smat_set_ties before or after its push (any thread for distinct
 * rows once smat_place_begin or smat_reserve made room). */
fd_status smat_kendall(spearman_mat *m, uint32_t n_obs);
fd_status smat_set_ties(spearman_mat *m, uint64_t r, const kendall_ties *t);

/* --missing pairwise: a row of n values, NaN missing (ranked over the
 * values it has; a row with none missing is pushed as smat_push would). */
fd_status smat_push_missing(spearman_mat *m, const double *x, uint64_t input_row);

/* The value that marks a missing observation in a row (never a rank:
 * |a| <= n - 1 <= 32766). */
#define SMAT_MISSING (-32768)

static inline int smat_incomplete(const spearman_mat *m, uint64_t r) { return m->incomplete && m->incomplete[r]; }

/* Pairwise complete observations (pandas' DataFrame.corr): S, S_ii and
 * S_jj of row i of x and row j of y over the columns both have, each row
 * re-ranked over those columns (exact: a row's ranks order its values as
 * the values do, ties included).  Returns how many columns that is. */
uint32_t smat_pair_sums(const spearman_mat *x, const spearman_mat *y, uint64_t i, uint64_t j, int64_t *s, int64_t *sii,
                        int64_t *sjj);

/* A pair's sums as written: S_ii and S_jj of its rows and its S (in *s
 * on entry), or, with a row that misses a value, smat_pair_sums' over
 * their common columns; returns the p-value's degrees of freedom (dof for
 * complete rows, m - 2 for the others). */
static inline int smat_pair_stats(const spearman_mat *x, const spearman_mat *y, uint64_t i, uint64_t j, int64_t *s,
                                  int64_t *sii, int64_t *sjj, int dof)
{
    *sii = x->sii[i];
    *sjj = y->sii[j];
    if (!smat_incomplete(x, i) && !smat_incomplete(y, j)) return dof;
    return (int)smat_pair_sums(x, y, i, j, s, sii, sjj) - 2;
}

/* a_k of row r, column k. */
static inline int32_t smat_a(const spearman_mat *m, uint64_t r, uint32_t k)
{
    uint32_t w = m->packed[((r >> 3) * m->kp + (k >> 1)) * 8 + (r & 7)];
    return (int16_t)(k & 1 ? w >> 16 : w & 0xffff);
}
static inline uint64_t smat_id(const spearman_mat *m, uint64_t r) { return m->row_id ? m->row_id[r] : r; }

/* The doubled centred average ranks of x[0..n) into a (see above). */
void spearman_rank(const double *x, uint32_t n, int32_t *a);
/* The same for non-negative integers (counting when their range is small;
 * scratch holds n doubles for the other case). */
void spearman_rank_uint(const uint64_t *v, uint32_t n, int32_t *a, double *scratch);

#endif
