/* SPDX-License-Identifier: BSD-3-Clause */
/* Parsers for the three context formats.  Each reads its file once through
 * fd_lines (streaming, SHA-256 on the way) into a CSR builder, and reports
 * the first problem as "FILE:LINE: what". */
#include "context.h"

#include "../common/inputfile.h"
#include "../common/linereader.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t *ptr;
    size_t nptr, capptr;
    uint32_t *idx;
    size_t nidx, capidx;
    char **names;          /* object names, when the format has them */
    size_t nnames, capnames;
} csr_build;

static void build_free(csr_build *b)
{
    for (size_t i = 0; i < b->nnames; i++) free(b->names[i]);
    free(b->names);
    free(b->ptr);
    free(b->idx);
    memset(b, 0, sizeof *b);
}

static fd_status build_push(csr_build *b, uint32_t v)
{
    if (b->nidx == b->capidx) FD_TRY(fd_grow((void **)&b->idx, &b->capidx, b->nidx + 1, sizeof *b->idx));
    b->idx[b->nidx++] = v;
    return FD_OK;
}

/* The leading 0 of row_ptr, so that zero objects is a valid CSR. */
static fd_status build_start(csr_build *b)
{
    if (b->nptr == 0) {
        FD_TRY(fd_grow((void **)&b->ptr, &b->capptr, 1, sizeof *b->ptr));
        b->ptr[b->nptr++] = 0;
    }
    return FD_OK;
}

static fd_status build_endrow(csr_build *b)
{
    FD_TRY(build_start(b));
    if (b->nptr - 1 >= UINT32_MAX - 1) return fd_fail(FD_ERR_INPUT, "more than 2^32-2 objects");
    FD_TRY(fd_grow((void **)&b->ptr, &b->capptr, b->nptr + 1, sizeof *b->ptr));
    b->ptr[b->nptr++] = b->nidx;
    return FD_OK;
}

static fd_status push_name(char ***names, size_t *n, size_t *cap, const char *s, size_t len)
{
    FD_TRY(fd_grow((void **)names, cap, *n + 1, sizeof **names));
    char *d = malloc(len + 1);
    if (!d) return fd_fail(FD_ERR_NOMEM, "out of memory for names");
    memcpy(d, s, len);
    d[len] = 0;
    (*names)[(*n)++] = d;
    return FD_OK;
}

static char *trim(char *s, size_t *n)
{
    while (*n && isspace((unsigned char)*s)) { s++; (*n)--; }
    while (*n && isspace((unsigned char)s[*n - 1])) (*n)--;
    s[*n] = 0;
    return s;
}

/* Strict non-negative decimal integer that fits in uint64. */
static int parse_u64(const char *s, size_t n, uint64_t *v)
{
    if (n == 0 || n > 19) return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return 1;
}

/* Refuses shapes whose bitsets (rows and columns, as the engine builds
 * them) could not fit in this machine's memory. */
static fd_status check_shape(const char *path, size_t line, uint64_t n_obj, uint64_t n_attr)
{
    if (n_obj >= UINT32_MAX || n_attr >= UINT32_MAX)
        return fd_fail(FD_ERR_INPUT, "%s:%zu: %llu objects x %llu attributes: at most 2^32-2 of each are supported",
                       path, line, (unsigned long long)n_obj, (unsigned long long)n_attr);
    double bytes = 2.0 * ((double)n_obj * (double)((n_attr + 63) / 64) * 8.0) +
                   2.0 * ((double)n_attr * (double)((n_obj + 63) / 64) * 8.0);
    double mem = (double)fd_phys_memory();
    if (bytes > mem)
        return fd_fail(FD_ERR_NOMEM, "%s:%zu: %llu objects x %llu attributes need %.1f GiB as bitsets; this machine has %.1f GiB",
                       path, line, (unsigned long long)n_obj, (unsigned long long)n_attr, bytes / 1073741824.0,
                       mem / 1073741824.0);
    return FD_OK;
}

static fd_status finish_context(fca_context **out, csr_build *b, uint32_t n_attr, fd_lines *r)
{
    fd_status st = FD_OK;
    fca_context *c = NULL;
    uint32_t n_obj = b->nptr ? (uint32_t)(b->nptr - 1) : 0;
    FD_TRY(check_shape(r->path, r->lineno, n_obj, n_attr));
    FD_TRY_GOTO(fca_context_create(&c, n_obj, n_attr, 0), st, fail);
    free(c->row_ptr);
    free(c->row_idx);
    c->row_ptr = b->ptr;
    c->row_idx = b->idx;
    if (!c->row_ptr) FD_ALLOC_GOTO(c->row_ptr, 1, st, fail);
    if (!c->row_idx) FD_ALLOC_GOTO(c->row_idx, 1, st, fail);
    b->ptr = NULL;
    b->idx = NULL;
    if (b->nnames) {
        c->obj_names = b->names;
        b->names = NULL;
        b->nnames = 0;
    }
    FD_TRY_GOTO(fd_lines_finish(r, c->sha256), st, fail);
    c->source = strdup(r->path);
    if (!c->source) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto fail; }
    *out = c;
    return FD_OK;
fail:
    fca_context_destroy(&c);
    return st;
}

static fd_status set_index_names(fca_context *c)
{
    for (uint32_t a = 0; a < c->n_attr; a++) {
        char buf[16];
        snprintf(buf, sizeof buf, "%u", c->attr_label[a]);
        c->attr_names[a] = strdup(buf);
        if (!c->attr_names[a]) return fd_fail(FD_ERR_NOMEM, "out of memory for attribute names");
    }
    return FD_OK;
}

/* ---- FIMI: one object per line, attribute ids separated by blanks ---- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static fd_status read_fimi(fca_context **out, fd_lines *r)
{
    fd_status st = FD_OK;
    csr_build b = {0};
    uint32_t *map = NULL, *uniq = NULL;
    char *line;
    size_t n;
    int rc;
    uint32_t maxid = 0;
    while ((rc = fd_lines_next(r, &line, &n)) > 0) {
        size_t i = 0;
        while (i < n) {
            while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
            if (i >= n) break;
            size_t s = i;
            uint64_t v = 0;
            while (i < n && line[i] >= '0' && line[i] <= '9') {
                v = v * 10 + (uint64_t)(line[i] - '0');
                if (v > UINT32_MAX - 1) break;
                i++;
            }
            if (i == s || (i < n && line[i] != ' ' && line[i] != '\t')) {
                size_t e = s;
                while (e < n && line[e] != ' ' && line[e] != '\t') e++;
                st = fd_fail(FD_ERR_INPUT, "%s:%zu: '%.*s' is not an attribute id (a non-negative integer below 2^32-1)",
                             r->path, r->lineno, (int)(e - s > 40 ? 40 : e - s), line + s);
                goto done;
            }
            if (v > maxid) maxid = (uint32_t)v;
            FD_TRY_GOTO(build_push(&b, (uint32_t)v), st, done);
        }
        FD_TRY_GOTO(build_endrow(&b), st, done);
    }
    if (rc < 0) { st = FD_ERR_INPUT; goto done; }
    if (r->bytes == 0) { st = fd_fail(FD_ERR_INPUT, "%s:1: empty file", r->path); goto done; }
    FD_TRY_GOTO(build_start(&b), st, done);

    /* Dense ids in ascending order of the original ids. */
    uint32_t n_attr = 0;
    FD_ALLOC_GOTO(uniq, b.nidx, st, done);
    if (b.nidx) memcpy(uniq, b.idx, b.nidx * sizeof *uniq); /* b.idx is NULL when there are none */
    if ((uint64_t)maxid <= 4 * (uint64_t)b.nidx + (1u << 20)) {
        FD_ALLOC_GOTO(map, (size_t)maxid + 1, st, done);
        for (size_t k = 0; k < b.nidx; k++) map[b.idx[k]] = 1;
        for (uint64_t v = 0; v <= maxid; v++)
            if (map[v]) { uniq[n_attr] = (uint32_t)v; map[v] = n_attr++; }
        for (size_t k = 0; k < b.nidx; k++) b.idx[k] = map[b.idx[k]];
    } else {
        qsort(uniq, b.nidx, sizeof *uniq, cmp_u32);
        for (size_t k = 0; k < b.nidx; k++)
            if (k == 0 || uniq[k] != uniq[n_attr - 1]) uniq[n_attr++] = uniq[k];
        for (size_t k = 0; k < b.nidx; k++) {
            uint32_t *p = bsearch(&b.idx[k], uniq, n_attr, sizeof *uniq, cmp_u32);
            b.idx[k] = (uint32_t)(p - uniq);
        }
    }
    /* Rows ascending and without repeats. */
    size_t w = 0;
    for (size_t o = 0; o + 1 < b.nptr; o++) {
        size_t len = b.ptr[o + 1] - b.ptr[o];
        uint32_t *row = len ? b.idx + b.ptr[o] : NULL; /* b.idx is NULL when no row has items */
        int sorted = 1;
        for (size_t k = 1; k < len; k++)
            if (row[k] <= row[k - 1]) { sorted = 0; break; }
        if (!sorted) qsort(row, len, sizeof *row, cmp_u32);
        b.ptr[o] = w;
        for (size_t k = 0; k < len; k++)
            if (k == 0 || row[k] != row[k - 1]) b.idx[w++] = row[k];
    }
    if (b.nptr) b.ptr[b.nptr - 1] = w;
    b.nidx = w;
    FD_TRY_GOTO(finish_context(out, &b, n_attr, r), st, done);
    memcpy((*out)->attr_label, uniq, (size_t)n_attr * sizeof *uniq);
    st = set_index_names(*out);
    if (st != FD_OK) fca_context_destroy(out);
done:
    free(map);
    free(uniq);
    build_free(&b);
    return st;
}

/* ---- Burmeister .cxt ---- */

static fd_status read_cxt(fca_context **out, fd_lines *r)
{
    fd_status st = FD_OK;
    csr_build b = {0};
    char **anames = NULL;
    size_t nanames = 0, capanames = 0;
    char *line;
    size_t n;
    int rc;
    uint64_t counts[2];
    int ncounts = 0;

    rc = fd_lines_next(r, &line, &n);
    if (rc <= 0) { st = rc < 0 ? FD_ERR_INPUT : fd_fail(FD_ERR_INPUT, "%s:1: empty file", r->path); goto done; }
    line = trim(line, &n);
    if (strcmp(line, "B") != 0) {
        st = fd_fail(FD_ERR_INPUT, "%s:1: not a Burmeister context: the first line must be 'B'", r->path);
        goto done;
    }
    /* Line 2 is the context's name (often empty) and lines 3 and 4 the
     * counts; some writers leave the name line out, which shows as two
     * numbers right after the 'B'. */
    for (int i = 0; i < 3 && ncounts < 2; i++) {
        rc = fd_lines_next(r, &line, &n);
        if (rc <= 0) {
            st = rc < 0 ? FD_ERR_INPUT
                        : fd_fail(FD_ERR_INPUT, "%s:%zu: file ends before the object and attribute counts", r->path, r->lineno);
            goto done;
        }
        line = trim(line, &n);
        if (parse_u64(line, n, &counts[ncounts])) { ncounts++; continue; }
        if (i == 0) continue; /* the name */
        st = fd_fail(FD_ERR_INPUT, "%s:%zu: '%.40s' is not a count of %s", r->path, r->lineno, line,
                     ncounts == 0 ? "objects" : "attributes");
        goto done;
    }
    FD_TRY_GOTO(check_shape(r->path, r->lineno, counts[0], counts[1]), st, done);
    uint32_t n_obj = (uint32_t)counts[0], n_attr = (uint32_t)counts[1];
    uint64_t want_names = (uint64_t)n_obj + n_attr;
    uint64_t got_names = 0, got_rows = 0;
    int started = 0;
    while ((rc = fd_lines_next(r, &line, &n)) > 0) {
        if (got_names < want_names) {
            size_t tn = n;
            char *t = trim(line, &tn);
            if (!started && tn == 0) continue; /* blank lines before the names */
            started = 1;
            if (got_names < n_obj) FD_TRY_GOTO(push_name(&b.names, &b.nnames, &b.capnames, t, tn), st, done);
            else FD_TRY_GOTO(push_name(&anames, &nanames, &capanames, t, tn), st, done);
            got_names++;
            continue;
        }
        while (n && isspace((unsigned char)line[n - 1])) n--;
        if (got_rows == n_obj) {
            if (n == 0) continue;
            st = fd_fail(FD_ERR_INPUT, "%s:%zu: more rows than the %u objects declared", r->path, r->lineno, n_obj);
            goto done;
        }
        if (n != n_attr) {
            st = fd_fail(FD_ERR_INPUT, "%s:%zu: row of object %llu has %zu marks, expected %u", r->path, r->lineno,
                         (unsigned long long)got_rows + 1, n, n_attr);
            goto done;
        }
        for (uint32_t a = 0; a < n_attr; a++) {
            char ch = line[a];
            if (ch == 'X' || ch == 'x') FD_TRY_GOTO(build_push(&b, a), st, done);
            else if (ch != '.') {
                st = fd_fail(FD_ERR_INPUT, "%s:%zu: column %u: mark '%c' is neither 'X' nor '.'", r->path, r->lineno,
                             a + 1, isprint((unsigned char)ch) ? ch : '?');
                goto done;
            }
        }
        FD_TRY_GOTO(build_endrow(&b), st, done);
        got_rows++;
    }
    if (rc < 0) { st = FD_ERR_INPUT; goto done; }
    if (got_names < want_names) {
        st = fd_fail(FD_ERR_INPUT, "%s:%zu: file ends after %llu of %llu object and attribute names", r->path,
                     r->lineno, (unsigned long long)got_names, (unsigned long long)want_names);
        goto done;
    }
    if (got_rows < n_obj) {
        st = fd_fail(FD_ERR_INPUT, "%s:%zu: file ends after %llu of %u object rows", r->path, r->lineno,
                     (unsigned long long)got_rows, n_obj);
        goto done;
    }
    FD_TRY_GOTO(build_start(&b), st, done);
    FD_TRY_GOTO(finish_context(out, &b, n_attr, r), st, done);
    for (uint32_t a = 0; a < n_attr; a++) {
        (*out)->attr_names[a] = anames[a];
        anames[a] = NULL;
    }
done:
    for (size_t i = 0; i < nanames; i++) free(anames[i]);
    free(anames);
    build_free(&b);
    return st;
}

/* ---- 0/1 CSV and TSV, optional header row and name column ---- */

/* Splits line in place at delim; returns the number of cells (cells[] gets
 * at most max of them, trimmed, surrounding double quotes removed). */
static size_t split_cells(char *line, size_t n, char delim, char **cells, size_t *lens, size_t max)
{
    size_t k = 0, s = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || line[i] == delim) {
            size_t len = i - s;
            char *c = line + s;
            while (len && isspace((unsigned char)*c)) { c++; len--; }
            while (len && isspace((unsigned char)c[len - 1])) len--;
            if (len >= 2 && c[0] == '"' && c[len - 1] == '"') { c++; len -= 2; }
            if (k < max) { cells[k] = c; lens[k] = len; }
            k++;
            s = i + 1;
        }
    }
    return k;
}

static int is01(const char *c, size_t len) { return len == 1 && (c[0] == '0' || c[0] == '1'); }

static fd_status read_csv(fca_context **out, fd_lines *r, char delim)
{
    fd_status st = FD_OK;
    csr_build b = {0};
    char **cells = NULL, **anames = NULL;
    size_t *lens = NULL, ncells = 0, capcells = 0, nanames = 0, capanames = 0;
    char *line;
    size_t n;
    int rc, first = 1, have_header = 0, have_names = -1;
    size_t width = 0; /* cells per row */
    while ((rc = fd_lines_next(r, &line, &n)) > 0) {
        size_t tn = n;
        trim(line, &tn);
        if (tn == 0) continue;
        size_t k = split_cells(line, n, delim, cells, lens, capcells);
        if (k > capcells) {
            size_t cap2 = capcells;
            FD_TRY_GOTO(fd_grow((void **)&cells, &capcells, k, sizeof *cells), st, done);
            FD_TRY_GOTO(fd_grow((void **)&lens, &cap2, k, sizeof *lens), st, done);
            k = split_cells(line, n, delim, cells, lens, capcells);
        }
        if (first) {
            /* The first row holds names when none of its cells (after the
             * first, which may title a name column) is 0 or 1; a row of
             * marks with one typo is not taken for names. */
            size_t marks = 0, odd = 0;
            for (size_t i = k > 1 ? 1 : 0; i < k; i++) {
                if (is01(cells[i], lens[i])) marks++;
                else if (!odd) odd = i + 1;
            }
            width = k;
            have_header = marks == 0;
            if (marks && odd) {
                st = fd_fail(FD_ERR_INPUT,
                             "%s:%zu: cell %zu is '%.*s', not 0 or 1 (a first row is a header only when none of its "
                             "cells after the first is 0 or 1)",
                             r->path, r->lineno, odd, (int)(lens[odd - 1] > 40 ? 40 : lens[odd - 1]), cells[odd - 1]);
                goto done;
            }
            first = 0;
            if (have_header) {
                for (size_t i = 0; i < k; i++)
                    FD_TRY_GOTO(push_name(&anames, &nanames, &capanames, cells[i], lens[i]), st, done);
                continue;
            }
        }
        if (k != width) {
            st = fd_fail(FD_ERR_INPUT, "%s:%zu: %zu cells, expected %zu as in the first row", r->path, r->lineno, k, width);
            goto done;
        }
        if (have_names < 0) have_names = !is01(cells[0], lens[0]);
        ncells = k;
        size_t c0 = have_names ? 1 : 0;
        if (have_names) FD_TRY_GOTO(push_name(&b.names, &b.nnames, &b.capnames, cells[0], lens[0]), st, done);
        for (size_t i = c0; i < ncells; i++) {
            if (lens[i] == 1 && cells[i][0] == '1') FD_TRY_GOTO(build_push(&b, (uint32_t)(i - c0)), st, done);
            else if (!(lens[i] == 1 && cells[i][0] == '0')) {
                st = fd_fail(FD_ERR_INPUT, "%s:%zu: cell %zu is '%.*s', not 0 or 1", r->path, r->lineno, i + 1,
                             (int)(lens[i] > 40 ? 40 : lens[i]), cells[i]);
                goto done;
            }
        }
        FD_TRY_GOTO(build_endrow(&b), st, done);
    }
    if (rc < 0) { st = FD_ERR_INPUT; goto done; }
    if (first) { st = fd_fail(FD_ERR_INPUT, "%s:1: empty file", r->path); goto done; }
    if (have_names < 0) have_names = 0;
    if (width <= (size_t)have_names) {
        st = fd_fail(FD_ERR_INPUT, "%s: no attribute columns (cells are separated by %s in a .%s file)", r->path,
                     delim == ',' ? "commas" : "tabs", delim == ',' ? "csv" : "tsv");
        goto done;
    }
    uint32_t n_attr = (uint32_t)(width - (size_t)have_names);
    FD_TRY_GOTO(build_start(&b), st, done);
    FD_TRY_GOTO(finish_context(out, &b, n_attr, r), st, done);
    for (uint32_t a = 0; a < n_attr; a++) {
        if (have_header) {
            (*out)->attr_names[a] = anames[a + (size_t)have_names];
            anames[a + (size_t)have_names] = NULL;
        } else {
            char buf[16];
            snprintf(buf, sizeof buf, "%u", a);
            (*out)->attr_names[a] = strdup(buf);
            if (!(*out)->attr_names[a]) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); fca_context_destroy(out); goto done; }
        }
    }
done:
    for (size_t i = 0; i < nanames; i++) free(anames[i]);
    free(anames);
    free(cells);
    free(lens);
    build_free(&b);
    return st;
}

fd_status fca_context_read(fca_context **out, const char *path, ctx_format fmt)
{
    *out = NULL;
    FD_TRY(fd_input_check(path)); /* what it is before what its name says */
    if (fmt == CTX_FMT_AUTO) fmt = ctx_format_from_path(path);
    if (fmt == CTX_FMT_AUTO)
        return fd_fail(FD_ERR_USAGE, "%s: cannot tell the format from the extension; use --format cxt|dat|csv|tsv", path);
    fd_lines r;
    FD_TRY(fd_lines_open(&r, path));
    fd_status st;
    switch (fmt) {
    case CTX_FMT_CXT: st = read_cxt(out, &r); break;
    case CTX_FMT_FIMI: st = read_fimi(out, &r); break;
    case CTX_FMT_CSV: st = read_csv(out, &r, ','); break;
    default: st = read_csv(out, &r, '\t'); break;
    }
    fd_lines_close(&r);
    if (st == FD_OK) (*out)->format = fmt;
    return st;
}
