/* SPDX-License-Identifier: BSD-3-Clause */
/* The matrix readers' sink that keeps every value (matrix_collect.h). */
#include "matrix_collect.h"

#include "matrix_read.h"

#include "../common/bigmem.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    fd_matrix_all *m;
    uint64_t cap, names_cap;
} collector;

static size_t row_bytes(uint32_t n) { return (size_t)n * sizeof(double); }

static void copy_row(const double *x, const uint64_t *ints, uint32_t n, void *out, double *scratch)
{
    double *o = out;
    (void)scratch;
    for (uint32_t k = 0; k < n; k++) o[k] = ints ? (double)ints[k] : x[k];
}

static fd_status begin(void *ctx, uint32_t n, uint64_t hint)
{
    collector *c = ctx;
    c->m->n = n;
    c->cap = hint > 16 ? hint : 16;
    if (!(c->m->all = malloc(c->cap * n * sizeof *c->m->all)))
        return fd_fail(FD_ERR_NOMEM, "out of memory for %llu rows", (unsigned long long)c->cap);
    return FD_OK;
}

static fd_status push(void *ctx, const void *row, uint64_t input_row)
{
    collector *c = ctx;
    fd_matrix_all *m = c->m;
    (void)input_row;
    if (m->rows == c->cap) {
        double *p = realloc(m->all, c->cap * 2 * m->n * sizeof *p);
        if (!p) return fd_fail(FD_ERR_NOMEM, "out of memory for %llu rows", (unsigned long long)c->cap * 2);
        m->all = p;
        c->cap *= 2;
    }
    memcpy(m->all + m->rows * m->n, row, m->n * sizeof *m->all);
    m->rows++;
    return FD_OK;
}

/* The binary readers' rows by their slots, from the workers: the page
 * faults of first touching the rows, and their copying, are spread over
 * the threads instead of falling on the calling thread's pushes (they were
 * the largest part of reading 10^7 points). */
static fd_status place_begin(void *ctx, uint64_t rows)
{
    collector *c = ctx;
    fd_matrix_all *m = c->m;
    if (rows > c->cap) {
        double *p = realloc(m->all, rows * m->n * sizeof *p);
        if (!p) return fd_fail(FD_ERR_NOMEM, "out of memory for %llu rows", (unsigned long long)rows);
        fd_big_hint(p, rows * m->n * sizeof *p);
        m->all = p;
        c->cap = rows;
    }
    m->rows = rows;
    return FD_OK;
}

static void place(void *ctx, const void *row, uint64_t slot)
{
    fd_matrix_all *m = ((collector *)ctx)->m;
    memcpy(m->all + slot * m->n, row, m->n * sizeof *m->all);
}

static double *values_at(void *ctx, uint64_t rows)
{
    return place_begin(ctx, rows) == FD_OK ? ((collector *)ctx)->m->all : NULL;
}

/* NaN is refused (drop_nan is never set), so no row drops. */
static fd_status drop(void *ctx)
{
    (void)ctx;
    return fd_fail(FD_ERR_INTERNAL, "matrix_collect: a dropped row");
}

/* The hash is taken as it is, maybe still running: a reader of 10^7
 * points would otherwise wait for it at the read's end (one stream, slower
 * than the threaded read). */
static fd_status finish(void *ctx, sha256_future *sha)
{
    ((collector *)ctx)->m->sha = *sha;
    sha->job = NULL;
    return FD_OK;
}

static fd_status row_name(void *ctx, uint64_t input_row, const char *name, size_t len)
{
    collector *c = ctx;
    fd_matrix_all *m = c->m;
    if (input_row >= c->names_cap) {
        uint64_t ncap = c->names_cap ? 2 * c->names_cap : 1024;
        char **nn = realloc(m->row_names, ncap * sizeof *nn);
        if (!nn) return fd_fail(FD_ERR_NOMEM, "out of memory for row names");
        m->row_names = nn;
        c->names_cap = ncap;
    }
    if (!(m->row_names[input_row] = strndup(name, len))) return fd_fail(FD_ERR_NOMEM, "out of memory for row names");
    m->n_row_names = input_row + 1;
    return FD_OK;
}

static fd_status column_names(void *ctx, const char *const *names, uint32_t n)
{
    fd_matrix_all *m = ((collector *)ctx)->m;
    if (!(m->col_names = calloc(n, sizeof *m->col_names))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < n; k++)
        if (!(m->col_names[k] = strdup(names[k]))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    return FD_OK;
}

fd_status fd_matrix_collect(const char *spec, int header, int name_column, int threads, int keep_nan,
                            fd_matrix_all *out)
{
    memset(out, 0, sizeof *out);
    collector c = {out, 0, 0};
    const fd_matrix_sink sink = {.ctx = &c,
                                 .row_bytes = row_bytes,
                                 .transform = copy_row,
                                 .begin = begin,
                                 .push = push,
                                 .place_begin = place_begin,
                                 .place = place,
                                 .values_at = values_at,
                                 .drop = drop,
                                 .finish = finish,
                                 .threads = threads,
                                 .header = header,
                                 .name_column = name_column,
                                 .row_name = row_name,
                                 .column_names = column_names};
    fd_status st = fd_matrix_read(spec, keep_nan ? FD_NAN_KEEP : FD_NAN_REFUSE, &sink);
    if (st != FD_OK) fd_matrix_all_free(out);
    return st;
}

void fd_names_free(char **names, uint64_t n)
{
    for (uint64_t k = 0; names && k < n; k++) free(names[k]);
    free(names);
}

void fd_matrix_all_free(fd_matrix_all *m)
{
    free(m->all);
    sha256_future_drop(&m->sha);
    fd_names_free(m->row_names, m->n_row_names);
    fd_names_free(m->col_names, m->col_names ? m->n : 0);
    memset(m, 0, sizeof *m);
}
