/* SPDX-License-Identifier: BSD-3-Clause */
/* The rank matrix as the sink of the matrix readers: each row becomes its
 * doubled centred average ranks (int32, then packed by smat_push_ranked). */
#include "spearman_read.h"

#include "../io/matrix_read.h"

#include <stdlib.h>
#include <string.h>

static size_t rank_row_bytes(uint32_t n) { return (size_t)n * sizeof(int32_t); }

static void rank_row(const double *x, const uint64_t *ints, uint32_t n, void *out, double *scratch)
{
    if (ints) spearman_rank_uint(ints, n, out, scratch);
    else spearman_rank(x, n, out);
}

static fd_status rank_begin(void *ctx, uint32_t n, uint64_t rows_hint)
{
    spearman_mat **m = ctx;
    FD_TRY(smat_create(m, n));
    return rows_hint ? smat_reserve(*m, rows_hint) : FD_OK;
}

static fd_status rank_push(void *ctx, const void *row, uint64_t input_row)
{
    return smat_push_ranked(*(spearman_mat **)ctx, row, input_row);
}

static fd_status rank_drop(void *ctx) { return smat_drop(*(spearman_mat **)ctx); }

static fd_status rank_place_begin(void *ctx, uint64_t rows) { return smat_place_begin(*(spearman_mat **)ctx, rows); }

static void rank_place(void *ctx, const void *row, uint64_t slot)
{
    smat_place_ranked(*(spearman_mat **)ctx, row, slot);
}

/* The hash is kept running: a run needs it only for its output. */
static fd_status rank_finish(void *ctx, sha256_future *sha)
{
    spearman_mat *m = *(spearman_mat **)ctx;
    m->sha = *sha;
    sha->job = NULL;
    return FD_OK;
}

fd_status spearman_read(spearman_mat **out, const char *spec, int drop_nan, int header, int threads)
{
    spearman_mat *m = NULL;
    const fd_matrix_sink sink = {&m,        rank_row_bytes, rank_row,   rank_begin, rank_push, rank_drop, rank_finish,
                                 " (--drop-nan-rows skips such rows)", threads, rank_place_begin, rank_place, header};
    fd_status st = fd_matrix_read(spec, drop_nan, &sink);
    if (st == FD_OK) st = smat_finish(m, fd_matrix_threads(threads));
    if (st == FD_OK && !(m->source = strdup(spec))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st != FD_OK) smat_destroy(&m);
    *out = m;
    return st;
}
