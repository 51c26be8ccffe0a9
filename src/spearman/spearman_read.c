/* SPDX-License-Identifier: BSD-3-Clause */
/* The rank matrix as the sink of the matrix readers: each row becomes its
 * doubled centred average ranks (int32, then packed by smat_push_ranked). */
#include "spearman_read.h"

#include "../io/matrix_collect.h"
#include "../io/matrix_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static size_t rank_row_bytes(uint32_t n) { return (size_t)n * sizeof(int32_t); }

/* --method kendall: a row is its sign vector, then its ties. */
static size_t kendall_ties_at(uint32_t n) { return ((size_t)kendall_width(n) * sizeof(int32_t) + 7) / 8 * 8; }
static size_t kendall_row_bytes(uint32_t n) { return kendall_ties_at(n) + sizeof(kendall_ties); }

static void kendall_row(const double *x, const uint64_t *ints, uint32_t n, void *out, double *scratch)
{
    double xs[KENDALL_MAX_N], sorted[KENDALL_MAX_N];
    (void)scratch;
    if (n > KENDALL_MAX_N) return; /* refused by the sink's begin */
    if (ints)
        for (uint32_t k = 0; k < n; k++) xs[k] = (double)ints[k];
    kendall_embed(ints ? xs : x, n, out, (kendall_ties *)((char *)out + kendall_ties_at(n)), sorted);
}

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

static fd_status kendall_begin(void *ctx, uint32_t n, uint64_t rows_hint)
{
    spearman_mat **m = ctx;
    if (n < 3 || n > KENDALL_MAX_N)
        return fd_fail(FD_ERR_INPUT, "--method kendall takes rows of 3 to %d observations, not %u (a row becomes its "
                                     "n(n-1)/2 pairs of observations)", KENDALL_MAX_N, n);
    FD_TRY(smat_create(m, kendall_width(n)));
    FD_TRY(smat_kendall(*m, n));
    return rows_hint ? smat_reserve(*m, rows_hint) : FD_OK;
}

static fd_status kendall_push(void *ctx, const void *row, uint64_t input_row)
{
    spearman_mat *m = *(spearman_mat **)ctx;
    FD_TRY(smat_push_ranked(m, row, input_row));
    return smat_set_ties(m, m->rows - 1, (const kendall_ties *)((const char *)row + kendall_ties_at(m->n_obs)));
}

static void kendall_place(void *ctx, const void *row, uint64_t slot)
{
    spearman_mat *m = *(spearman_mat **)ctx;
    smat_place_ranked(m, row, slot);
    m->ties[slot] = *(const kendall_ties *)((const char *)row + kendall_ties_at(m->n_obs));
}

/* One variable of nobs values, ranked (or as its sign vector), onto m;
 * buf: room for the row (kendall_width(nobs) values for Kendall). */
static fd_status push_variable(spearman_mat *m, const double *x, uint32_t nobs, uint64_t input_row, int32_t *buf,
                               double *scratch)
{
    if (!m->ties) {
        spearman_rank(x, nobs, buf);
        return smat_push_ranked(m, buf, input_row);
    }
    kendall_ties t;
    kendall_embed(x, nobs, buf, &t, scratch);
    FD_TRY(smat_push_ranked(m, buf, input_row));
    return smat_set_ties(m, m->rows - 1, &t);
}

/* Values a variable of up to nobs observations needs (Kendall: its sign
 * vector, of at most KENDALL_MAX_N observations: kendall_begin refuses
 * more). */
static uint64_t row_room(const spearman_read_opts *o, uint64_t nobs)
{
    if (!o->kendall) return nobs;
    const uint64_t w = kendall_width((uint32_t)(nobs < KENDALL_MAX_N ? nobs : KENDALL_MAX_N));
    return w > nobs ? w : nobs;
}

static fd_status begin_for(const spearman_read_opts *o, spearman_mat **m, uint32_t n, uint64_t rows_hint)
{
    return o->kendall ? kendall_begin(m, n, rows_hint) : rank_begin(m, n, rows_hint);
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

static fd_status rank_row_name(void *ctx, uint64_t input_row, const char *name, size_t len)
{
    spearman_mat *m = *(spearman_mat **)ctx;
    if (input_row >= m->n_names) {
        uint64_t cap = m->n_names ? m->n_names : 1024;
        while (cap <= input_row) cap *= 2;
        char **nn = realloc(m->names, cap * sizeof *nn);
        if (!nn) return fd_fail(FD_ERR_NOMEM, "out of memory for row names");
        memset(nn + m->n_names, 0, (cap - m->n_names) * sizeof *nn);
        m->names = nn;
        m->n_names = cap;
    }
    if (!(m->names[input_row] = strndup(name, len))) return fd_fail(FD_ERR_NOMEM, "out of memory for row names");
    return FD_OK;
}

/* Rows as variables, ranked as they stream in. */
static fd_status read_rows(spearman_mat **m, const char *spec, const spearman_read_opts *o)
{
    const fd_matrix_sink sink = {.ctx = m,
                                 .row_bytes = o->kendall ? kendall_row_bytes : rank_row_bytes,
                                 .transform = o->kendall ? kendall_row : rank_row,
                                 .begin = o->kendall ? kendall_begin : rank_begin,
                                 .push = o->kendall ? kendall_push : rank_push,
                                 .drop = rank_drop,
                                 .finish = rank_finish,
                                 .nan_hint = " (--drop-nan-rows skips such rows)",
                                 .threads = o->threads,
                                 .place_begin = o->row_names ? NULL : rank_place_begin,
                                 .place = o->row_names ? NULL : o->kendall ? kendall_place : rank_place,
                                 .header = o->header,
                                 .name_column = o->row_names,
                                 .row_name = rank_row_name};
    FD_TRY(fd_matrix_read(spec, o->drop_nan, &sink));
    /* Only the rows read have names: the array's spare room goes. */
    spearman_mat *x = *m;
    if (x->names) {
        uint64_t rows = x->rows + x->dropped;
        for (uint64_t k = rows; k < x->n_names; k++) free(x->names[k]);
        x->n_names = rows;
    }
    return FD_OK;
}

/* --missing drop or pairwise: the whole matrix with NaN kept.  drop: the
 * observations with a NaN in any variable dropped (pandas' dropna()
 * before corr(), or scipy's nan_policy="omit" on complete cases), and
 * each variable ranked over the rest.  pairwise: every observation kept,
 * each variable ranked over the values it has (smat_push_missing), each
 * pair's columns chosen when it is computed.  Variables are rows, or with
 * --by columns the columns. */
static fd_status read_missing(spearman_mat **m, const char *spec, const spearman_read_opts *o)
{
    fd_matrix_all a;
    FD_TRY(fd_matrix_collect(spec, o->header, o->row_names, o->threads, 1, &a));
    fd_status st = FD_OK;
    const int cols = o->by_columns;
    const uint64_t nvar = cols ? a.n : a.rows, nobs = cols ? a.rows : a.n;
    uint8_t *gone = calloc(nobs + 1, 1);
    uint64_t *keep = malloc((nobs + 1) * sizeof *keep);
    double *x = malloc((2 * nobs + 1) * sizeof *x);
    int32_t *ranked = malloc((row_room(o, nobs) + 1) * sizeof *ranked);
    if (!gone || !keep || !x || !ranked) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    uint64_t kept = 0;
    for (uint64_t i = 0; st == FD_OK && o->missing_drop && i < a.rows; i++)
        for (uint32_t k = 0; k < a.n; k++)
            if (isnan(a.all[i * a.n + k])) gone[cols ? i : k] = 1;
    for (uint64_t q = 0; st == FD_OK && q < nobs; q++)
        if (!gone[q]) keep[kept++] = q;
    if (st == FD_OK && kept < 3)
        st = fd_fail(FD_ERR_INPUT, o->missing_drop ? "%s: %llu of %llu observations have no missing value; --missing drop needs 3"
                                                   : "%s: %llu observations (of %llu); Spearman needs 3", spec,
                     (unsigned long long)kept, (unsigned long long)nobs);
    if (st == FD_OK && kept > UINT32_MAX)
        st = fd_fail(FD_ERR_INPUT, "%s: %llu observations are too many", spec, (unsigned long long)kept);
    if (st == FD_OK) st = begin_for(o, m, (uint32_t)kept, nvar);
    for (uint64_t v = 0; st == FD_OK && v < nvar; v++) {
        for (uint64_t q = 0; q < kept; q++) x[q] = cols ? a.all[keep[q] * a.n + v] : a.all[v * a.n + keep[q]];
        st = o->missing_pairwise ? smat_push_missing(*m, x, v) : push_variable(*m, x, (uint32_t)kept, v, ranked, x + nobs);
    }
    if (st == FD_OK) {
        (*m)->dropped_obs = nobs - kept;
        st = rank_finish(m, &a.sha);
    }
    /* The variables' names: the header's with --by columns, the rows'
     * otherwise. */
    char ***names = cols ? &a.col_names : &a.row_names;
    if (st == FD_OK && *names) {
        (*m)->names = *names;
        (*m)->n_names = cols ? a.n : a.n_row_names;
        *names = NULL;
    }
    free(gone);
    free(keep);
    free(x);
    free(ranked);
    fd_matrix_all_free(&a);
    return st;
}

/* Columns as variables (--by columns, as pandas' DataFrame.corr): the
 * whole matrix is read, then each column ranked as a row.  Its header,
 * when it names every column, names the variables. */
static fd_status read_columns(spearman_mat **m, const char *spec, const spearman_read_opts *o)
{
    fd_matrix_all a;
    FD_TRY(fd_matrix_collect(spec, o->header, o->row_names, o->threads, 0, &a));
    fd_status st = FD_OK;
    double *col = malloc((2 * a.rows + 1) * sizeof *col);
    int32_t *ranked = malloc((row_room(o, a.rows) + 1) * sizeof *ranked);
    if (!col || !ranked) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st == FD_OK && a.rows > UINT32_MAX) st = fd_fail(FD_ERR_INPUT, "%s: %llu rows are too many observations", spec, (unsigned long long)a.rows);
    if (st == FD_OK) st = begin_for(o, m, (uint32_t)a.rows, a.n);
    for (uint32_t k = 0; st == FD_OK && k < a.n; k++) {
        for (uint64_t i = 0; i < a.rows; i++) col[i] = a.all[i * a.n + k];
        st = push_variable(*m, col, (uint32_t)a.rows, k, ranked, col + a.rows);
    }
    if (st == FD_OK) {
        st = rank_finish(m, &a.sha);
    }
    if (st == FD_OK && a.col_names) {
        (*m)->names = a.col_names;
        (*m)->n_names = a.n;
        a.col_names = NULL;
    }
    free(col);
    free(ranked);
    fd_matrix_all_free(&a);
    return st;
}

fd_status spearman_read(spearman_mat **out, const char *spec, const spearman_read_opts *o)
{
    spearman_mat *m = NULL;
    fd_status st = o->missing_drop || o->missing_pairwise ? read_missing(&m, spec, o)
                   : o->by_columns ? read_columns(&m, spec, o)
                                   : read_rows(&m, spec, o);
    if (st == FD_OK) st = smat_finish(m, fd_matrix_threads(o->threads));
    if (st == FD_OK && !(m->source = strdup(spec))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st != FD_OK) smat_destroy(&m);
    *out = m;
    return st;
}
