/* SPDX-License-Identifier: BSD-3-Clause */
/* Text and CSV matrices: read in chunks of whole lines, parsed and
 * transformed by threads, handed to the sink in input order (see
 * fd_matrix_read_text below). */
#include "matrix_text.h"

#include "../common/inputfile.h"
#include "../common/linereader.h"
#include "../common/par_rows.h"
#include "../common/sha256.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------- text and CSV ---------------- */

/* Parses one number starting at *p; integers (the usual count data) take
 * the fast path, anything else goes through strtod.  Returns 0 when the
 * token is not a number. */
static int parse_number(char **p, double *v)
{
    char *s = *p, *q = s;
    int neg = 0;
    if (*q == '-' || *q == '+') neg = *q++ == '-';
    if (*q >= '0' && *q <= '9') {
        uint64_t x = 0;
        int digits = 0;
        while (*q >= '0' && *q <= '9' && digits < 18) {
            x = x * 10 + (uint64_t)(*q++ - '0');
            digits++;
        }
        if (!(*q >= '0' && *q <= '9') && *q != '.' && *q != 'e' && *q != 'E') {
            *v = neg ? -(double)x : (double)x;
            *p = q;
            return 1;
        }
    }
    errno = 0;
    *v = strtod(s, &q);
    if (q == s) return 0;
    *p = q;
    return 1;
}

/* The common case, non-negative integers separated by blanks (or commas),
 * in one pass over the characters.  Returns the number of values, or -1
 * when the line has anything else (signs, decimals, quotes, words), which
 * then goes through the general parser. */
static int split_uint(const char *p, int csv, uint64_t *row, uint32_t cap)
{
    uint32_t k = 0;
    uint64_t v = 0;
    int in = 0, digits = 0;
    for (;; p++) {
        unsigned c = (unsigned char)*p;
        if (c - '0' < 10) {
            v = v * 10 + (c - '0');
            in = 1;
            if (++digits > 15) return -1;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == 0 || (csv && c == ',')) {
            if (in) {
                if (k >= cap) return -1;
                row[k++] = v;
                v = 0;
                in = digits = 0;
            } else if (csv && c == ',') {
                return -1; /* an empty cell */
            }
            if (c == 0) return (int)k;
        } else {
            return -1;
        }
    }
}


/* The length of the token at tok, for messages (at most 40). */
static int token_width(const char *tok)
{
    int w = 0;
    while (tok[w] && tok[w] != ',' && tok[w] != ' ' && tok[w] != '\t' && w < 40) w++;
    return w;
}

/* Splits a line into numbers; *bad_col is the 1-based column of a
 * non-number (0 when all parsed), *nonfinite the first NaN/inf column. */
static uint32_t split(int csv, double *row, char *line, uint32_t cap, uint32_t *bad_col, char **bad_tok,
                      uint32_t *nonfinite)
{
    uint32_t k = 0;
    char *p = line;
    *bad_col = *nonfinite = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || (csv && *p == '"')) p++;
        if (!*p) break;
        double v;
        char *start = p;
        if (!parse_number(&p, &v)) {
            *bad_col = k + 1;
            *bad_tok = start;
            return k;
        }
        /* A number must end at a separator: "12abc" is not 12. */
        if (*p && *p != ' ' && *p != '\t' && *p != '\r' && !(csv && (*p == ',' || *p == '"'))) {
            *bad_col = k + 1;
            *bad_tok = start;
            return k;
        }
        while (*p == ' ' || *p == '\t' || *p == '\r' || (csv && *p == '"')) p++;
        if (k < cap) row[k] = v;
        if (!isfinite(v) && !*nonfinite) *nonfinite = k + 1;
        k++;
        if (csv) {
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p) {
                *bad_col = k + 1;
                *bad_tok = p;
                return k;
            }
        }
    }
    return k;
}

/* Text is read in chunks of whole lines that worker threads parse and
 * transform in parallel; the main thread reads (hashing on the way), hands
 * out a batch of chunks, and gives the rows to the sink in input order.  Line
 * numbers of errors are the chunk's first line plus the line within it,
 * so messages are the same as a serial reader's. */
#define CHUNK_BYTES (8u << 20)

typedef struct {
    char *buf;                 /* whole lines, NUL-terminated */
    size_t len;
    /* results */
    unsigned char *a;          /* rows x the sink's row bytes */
    uint8_t *dropped;          /* per row: NaN/inf, dropped */
    size_t rows, cap;
    char *names;               /* name_column: the rows' names, each NUL-terminated */
    size_t *name_at;           /* per row: its name's offset in names */
    size_t names_len, names_cap;
    size_t lines;              /* lines in the chunk */
    int err;                   /* 0, or 1 not a number, 2 ragged, 3 non-finite */
    size_t err_line;           /* 0-based within the chunk */
    uint32_t err_col, err_k;
    char err_tok[48];
} chunk;

typedef struct {
    chunk *c;
    uint32_t n;
    int csv, drop_nan, header;  /* header: the chunk's first non-blank line is a header */
    int name_column;            /* the first field of each line is a name */
    const fd_matrix_sink *sink;
} chunk_job;

/* The first field of line (name_column): its text, unquoted and trimmed,
 * as [*name, *name + *len); returns where the values start, past its
 * delimiter. */
static char *skip_name(char *line, int csv, const char **name, size_t *len)
{
    char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    char *start = p;
    if (csv && *p == '"') {
        char *q = strchr(p + 1, '"');
        if (q) {
            *name = p + 1;
            *len = (size_t)(q - p - 1);
            p = q + 1;
            while (*p == ' ' || *p == '\t' || *p == '\r') p++;
            return *p == ',' ? p + 1 : p;
        }
    }
    while (*p && !(csv ? *p == ',' : (*p == ' ' || *p == '\t'))) p++;
    char *end = p;
    while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
    *name = start;
    *len = (size_t)(end - start);
    return csv && *p == ',' ? p + 1 : p;
}

/* Keeps row k's name in the chunk (name_column). */
static int chunk_name(chunk *c, size_t k, const char *name, size_t len)
{
    if (c->names_len + len + 1 > c->names_cap) {
        size_t ncap = (c->names_len + len + 1) * 2;
        char *nn = realloc(c->names, ncap);
        if (!nn) return 0;
        c->names = nn;
        c->names_cap = ncap;
    }
    if (k >= c->cap) return 0;
    memcpy(c->names + c->names_len, name, len);
    c->names[c->names_len + len] = 0;
    c->name_at[k] = c->names_len;
    c->names_len += len + 1;
    return 1;
}

static void parse_chunk(chunk_job *j)
{
    chunk *c = j->c;
    uint32_t cap = j->n + 1;
    double *row = malloc(2 * (size_t)cap * sizeof *row); /* the row, then the transform's scratch */
    uint64_t *ints = malloc(cap * sizeof *ints);
    c->rows = c->lines = 0;
    c->names_len = 0;
    c->err = 0;
    if (!row || !ints) { c->err = 4; goto out; }
    int header = j->header;
    for (char *line = c->buf, *end = c->buf + c->len; line < end; c->lines++) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        if (nl) *nl = 0;
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *next = nl ? nl + 1 : end;
        if (len == 0 || strspn(line, " \t\r") == len) { line = next; continue; }
        if (header) { /* first_row_shape said so */
            header = 0;
            line = next;
            continue;
        }
        const char *name = NULL;
        size_t name_len = 0;
        if (j->name_column) line = skip_name(line, j->csv, &name, &name_len);
        uint32_t bad = 0, nonfinite = 0, k;
        char *tok = NULL;
        int fast = split_uint(line, j->csv, ints, cap);
        if (fast >= 0) k = (uint32_t)fast;
        else k = split(j->csv, row, line, cap, &bad, &tok, &nonfinite);
        if (j->drop_nan == FD_NAN_KEEP && nonfinite && !bad && k == j->n) {
            /* NaN is a value here; only an infinity stops the row. */
            nonfinite = 0;
            for (uint32_t q = 0; q < k && !nonfinite; q++)
                if (isinf(row[q])) nonfinite = q + 1;
        }
        if (bad || k != j->n || (nonfinite && j->drop_nan != FD_NAN_DROP_ROW)) {
            c->err = bad ? 1 : k != j->n ? 2 : 3;
            c->err_line = c->lines;
            c->err_col = bad ? bad : nonfinite;
            c->err_k = k;
            snprintf(c->err_tok, sizeof c->err_tok, "%.*s", bad ? token_width(tok) : 0, bad ? tok : "");
            break;
        }
        const size_t rb = j->sink->row_bytes(j->n);
        if (c->rows == c->cap) {
            size_t ncap = c->cap ? c->cap * 2 : 4096;
            unsigned char *na = realloc(c->a, ncap * rb);
            uint8_t *nd = realloc(c->dropped, ncap);
            size_t *nat = j->name_column ? realloc(c->name_at, ncap * sizeof *nat) : c->name_at;
            if (na) c->a = na;
            if (nd) c->dropped = nd;
            if (nat) c->name_at = nat;
            if (!na || !nd || (j->name_column && !nat)) { c->err = 4; break; }
            c->cap = ncap;
        }
        if (j->name_column && !chunk_name(c, c->rows, name, name_len)) { c->err = 4; break; }
        c->dropped[c->rows] = nonfinite != 0;
        if (fast >= 0) j->sink->transform(NULL, ints, j->n, c->a + c->rows * rb, row);
        else if (!nonfinite) j->sink->transform(row, NULL, j->n, c->a + c->rows * rb, row + j->n);
        c->rows++;
        line = next;
    }
out:
    free(row);
    free(ints);
}

/* For a token that is not a number: a hint when it looks like several
 * values joined by another delimiter. */
static const char *delim_hint(const char *tok, int len)
{
    for (int k = 0; k < len; k++)
        if (tok[k] == ';' || tok[k] == '|' || (tok[k] == ',' && k > 0))
            return " (values are separated by commas in .csv files and by blanks in other text)";
    return "";
}

/* The fields of a line: how many, how many are numbers, how many empty
 * (CSV: nothing between two commas). */
static void field_kinds(const char *line, int csv, uint32_t *fields, uint32_t *numbers, uint32_t *empty)
{
    const char *p = line;
    *fields = *numbers = *empty = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (!*p) return;
        const char *start = p;
        while (*p && !(csv ? *p == ',' : (*p == ' ' || *p == '\t' || *p == '\r'))) p++;
        const char *end = p;
        while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) end--;
        if (end > start && *start == '"' && end[-1] == '"' && end - start >= 2) {
            start++;
            end--;
        }
        (*fields)++;
        if (end == start) {
            (*empty)++;
        } else {
            char tok[64];
            const size_t len = (size_t)(end - start) < sizeof tok - 1 ? (size_t)(end - start) : sizeof tok - 1;
            memcpy(tok, start, len);
            tok[len] = 0;
            char *q = tok;
            double v;
            if (parse_number(&q, &v) && *q == 0) (*numbers)++;
        }
        if (csv && *p == ',') {
            p++;
            while (*p == ' ' || *p == '\t' || *p == '\r') p++;
            if (!*p) { /* a trailing comma: an empty last field */
                (*fields)++;
                (*empty)++;
                return;
            }
        }
    }
}

/* The number of values on the first data line of buf (for n), and whether
 * the first non-blank line is a header: always (FD_HEADER_YES), never
 * (FD_HEADER_NO), or (auto) when none of its fields is a number or empty,
 * so that a first row with one NA, an empty cell or a typo is an error
 * that names it, not a header that silently takes the row. */
/* The fields of a header line (after the name column's), unquoted and
 * trimmed, as strdup'ed strings. */
static fd_status header_fields(char *line, int csv, char ***out, uint32_t *count)
{
    char **f = NULL;
    uint32_t k = 0, cap = 0;
    for (char *p = line; *p;) {
        const char *name;
        size_t len;
        char *next = skip_name(p, csv, &name, &len);
        if (len == 0 && next == p) break;
        if (k == cap) {
            char **nf = realloc(f, (cap = cap ? 2 * cap : 16) * sizeof *nf);
            if (!nf) goto nomem;
            f = nf;
        }
        if (!(f[k] = strndup(name, len))) goto nomem;
        k++;
        if (next == p) break;
        p = next;
        if (!csv) while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    }
    *out = f;
    *count = k;
    return FD_OK;
nomem:
    for (uint32_t q = 0; q < k; q++) free(f[q]);
    free(f);
    return fd_fail(FD_ERR_NOMEM, "out of memory");
}

static fd_status first_row_shape(const char *path, const char *buf, size_t len, int csv, int mode, int name_column,
                                 uint32_t *n, int *header, char ***hdr, uint32_t *nhdr)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 1;
    *n = 0;
    *header = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *whole = strndup(p, l);
        if (!whole) return fd_fail(FD_ERR_NOMEM, "out of memory");
        char *line = whole;
        if (l && strspn(line, " \t\r") != l) {
            const char *name;
            size_t name_len;
            if (name_column) line = skip_name(line, csv, &name, &name_len);
            uint32_t fields, numbers, empty;
            field_kinds(line, csv, &fields, &numbers, &empty);
            if (!*header && mode != FD_HEADER_NO &&
                (mode == FD_HEADER_YES || (numbers == 0 && empty == 0))) {
                *header = 1;
                fd_status hst = hdr ? header_fields(line, csv, hdr, nhdr) : FD_OK;
                free(whole);
                FD_TRY(hst);
                if (!nl) return FD_OK;
                p = nl + 1;
                lineno++;
                continue;
            }
            uint32_t cap = fields + 1, bad, nonfinite;
            double *row = malloc(cap * sizeof *row);
            char *tok = NULL;
            if (!row) {
                free(whole);
                return fd_fail(FD_ERR_NOMEM, "out of memory");
            }
            uint32_t k = split(csv, row, line, cap, &bad, &tok, &nonfinite);
            free(row);
            if (bad || (csv && empty)) {
                const char *why = lineno == 1 && mode == FD_HEADER_AUTO
                                      ? " (a first line is a header only when none of its fields is a number or empty; "
                                        "--header yes skips it)"
                                      : "";
                const fd_status st =
                    bad && token_width(tok) == 0
                        ? fd_fail(FD_ERR_INPUT, "%s:%zu: column %u is empty%s", path, lineno, bad, why)
                    : bad ? fd_fail(FD_ERR_INPUT, "%s:%zu: column %u: '%.*s' is not a number%s%s", path, lineno, bad,
                                    token_width(tok), tok, delim_hint(tok, token_width(tok)), why)
                          : fd_fail(FD_ERR_INPUT, "%s:%zu: an empty field", path, lineno);
                free(whole);
                return st;
            }
            free(whole);
            *n = k;
            return FD_OK;
        }
        free(whole);
        if (!nl) break;
        p = nl + 1;
        lineno++;
    }
    return FD_OK;
}

typedef struct {
    const char *path;
    FILE *f;
    sha256_ctx sha;
    char *carry;               /* the partial line after the last chunk */
    size_t ncarry;
    int eof, first, header, header_mode, csv, drop_nan;
    uint32_t n;
    const fd_matrix_sink *sink;
    uint64_t pushed;
    uint64_t offset;           /* bytes read so far */
    uint64_t fsize;            /* the file's size when it was opened (UINT64_MAX: unknown) */
} text_reader;

/* Reads up to T chunks of whole lines into cs[0..); sets *nc. */
static fd_status read_batch(text_reader *r, chunk *cs, chunk_job *jobs, int T, int *nc)
{
    *nc = 0;
    for (; *nc < T && !r->eof; (*nc)++) {
        chunk *c = &cs[*nc];
        free(c->buf);
        /* No more room than the rest of the file needs (plus a byte, so
         * that a short read says it ended): small files, small buffers. */
        size_t want = CHUNK_BYTES;
        if (r->fsize >= r->offset && r->fsize - r->offset < want) want = (size_t)(r->fsize - r->offset) + 1;
        c->buf = malloc(r->ncarry + want + 1);
        if (!c->buf) return fd_fail(FD_ERR_NOMEM, "out of memory");
        if (r->ncarry) memcpy(c->buf, r->carry, r->ncarry);
        size_t got = fread(c->buf + r->ncarry, 1, want, r->f);
        if (ferror(r->f)) return fd_fail(FD_ERR_IO, "%s: read error", r->path);
        sha256_update(&r->sha, c->buf + r->ncarry, got);
        /* The parsers work on NUL-terminated lines: a NUL inside one would
         * end it early (a fuzzed file read past a line that way). */
        const char *nul = memchr(c->buf + r->ncarry, 0, got);
        if (nul)
            return fd_fail(FD_ERR_INPUT, "%s: byte %llu is NUL: not a text file (binary input wants .npy or .h5)",
                           r->path, (unsigned long long)(r->offset + (uint64_t)(nul - (c->buf + r->ncarry)) + 1));
        /* A UTF-8 byte order mark (spreadsheets write one) is not part of
         * the first value. */
        if (r->offset == 0 && got >= 3 && !memcmp(c->buf, "\xef\xbb\xbf", 3)) {
            memmove(c->buf, c->buf + 3, got - 3);
            got -= 3;
            r->offset = 3;
        }
        r->offset += got;
        size_t len = r->ncarry + got, cut = len;
        r->eof = got < want;
        if (r->eof) { /* the last line is bounded too (one line of 70 MB without an end was read whole) */
            size_t start = len;
            while (start > 0 && c->buf[start - 1] != '\n') start--;
            if (len - start > FD_LINE_MAX)
                return fd_fail(FD_ERR_INPUT, "%s: a line longer than %u MiB near byte %llu: not a matrix of text "
                               "lines",
                               r->path, FD_LINE_MAX >> 20, (unsigned long long)r->offset);
        }
        if (!r->eof) {
            while (cut > 0 && c->buf[cut - 1] != '\n') cut--;
            if (cut == 0) {
                /* No line end in the chunk: the line is carried whole into
                 * a larger read of the same chunk; bounded, so that a file
                 * without line ends cannot take all memory (32767 values of
                 * 32 characters fit). */
                if (len > FD_LINE_MAX)
                    return fd_fail(FD_ERR_INPUT, "%s: a line longer than %u MiB near byte %llu: not a matrix of text "
                                   "lines",
                                   r->path, FD_LINE_MAX >> 20, (unsigned long long)r->offset);
                char *all = realloc(r->carry, len);
                if (!all) return fd_fail(FD_ERR_NOMEM, "out of memory");
                memcpy(all, c->buf, len);
                r->carry = all;
                r->ncarry = len;
                (*nc)--; /* this chunk again, with the line's start */
                continue;
            }
        }
        free(r->carry);
        r->carry = NULL;
        r->ncarry = len - cut;
        if (r->ncarry) {
            if (!(r->carry = malloc(r->ncarry))) return fd_fail(FD_ERR_NOMEM, "out of memory");
            memcpy(r->carry, c->buf + cut, r->ncarry);
        }
        c->buf[cut] = 0;
        c->len = cut;
        if (r->first) {
            /* The header's names stay ours until the sink has them, whatever
             * fails on the way (tests/fuzz found a leak here). */
            char **hdr = NULL;
            uint32_t nhdr = 0;
            fd_status st = first_row_shape(r->path, c->buf, c->len, r->csv, r->header_mode, r->sink->name_column,
                                           &r->n, &r->header, r->sink->column_names ? &hdr : NULL, &nhdr);
            if (st == FD_OK && r->n == 0)
                st = fd_fail(FD_ERR_INPUT, r->eof ? "%s: no data rows" : "%s: no data row in its first 8 MB", r->path);
            if (st == FD_OK) {
                /* Estimate the rows from the file size and the first
                 * chunk's line length, so that the sink can size its
                 * storage once. */
                struct stat sb;
                size_t lines = 0;
                uint64_t hint = 0;
                for (const char *q = c->buf; (q = memchr(q, '\n', (size_t)(c->buf + c->len - q))) != NULL; q++)
                    lines++;
                if (lines > 0 && fstat(fileno(r->f), &sb) == 0 && sb.st_size > 0)
                    hint = (uint64_t)((double)sb.st_size / ((double)c->len / (double)lines) * 1.02) + 8;
                st = r->sink->begin(r->sink->ctx, r->n, hint);
            }
            /* Names only when the header names every value: a header of
             * another width names something else. */
            if (st == FD_OK && hdr && nhdr == r->n)
                st = r->sink->column_names(r->sink->ctx, (const char *const *)hdr, nhdr);
            for (uint32_t q = 0; q < nhdr; q++) free(hdr[q]);
            free(hdr);
            FD_TRY(st);
        }
        jobs[*nc] = (chunk_job){c, r->n, r->csv, r->drop_nan, r->first && r->header, r->sink->name_column, r->sink};
        r->first = 0;
    }
    return FD_OK;
}

/* Appends a parsed chunk's rows in order, or reports its first error. */
static fd_status append_chunk(text_reader *r, const chunk *c, uint64_t *line_base, uint64_t *input_row)
{
    fd_status st = FD_OK;
    const size_t rb = r->sink->row_bytes(r->n);
    for (size_t k = 0; k < c->rows && st == FD_OK; k++, (*input_row)++) {
        if (r->sink->name_column) {
            const char *name = c->names + c->name_at[k];
            st = r->sink->row_name(r->sink->ctx, *input_row, name, strlen(name));
            if (st != FD_OK) break;
        }
        st = c->dropped[k] ? r->sink->drop(r->sink->ctx) : r->sink->push(r->sink->ctx, c->a + k * rb, *input_row);
        r->pushed += !c->dropped[k];
    }
    FD_TRY(st);
    unsigned long long line = *line_base + c->err_line + 1;
    if (c->err == 1 && !*c->err_tok) return fd_fail(FD_ERR_INPUT, "%s:%llu: column %u is empty", r->path, line, c->err_col);
    if (c->err == 1)
        return fd_fail(FD_ERR_INPUT, "%s:%llu: column %u: '%s' is not a number%s", r->path, line, c->err_col, c->err_tok,
                       delim_hint(c->err_tok, (int)strlen(c->err_tok)));
    if (c->err == 2)
        return fd_fail(FD_ERR_INPUT, "%s:%llu: %u values, but the first row has %u", r->path, line, c->err_k, r->n);
    if (c->err == 3 && r->drop_nan == FD_NAN_KEEP)
        return fd_fail(FD_ERR_INPUT, "%s:%llu: column %u is infinite", r->path, line, c->err_col);
    if (c->err == 3)
        return fd_fail(FD_ERR_INPUT, "%s:%llu: column %u is NaN or infinite%s", r->path, line, c->err_col,
                       r->sink->nan_hint ? r->sink->nan_hint : "");
    if (c->err == 4) return fd_fail(FD_ERR_NOMEM, "%s: out of memory parsing", r->path);
    *line_base += c->lines;
    return FD_OK;
}

/* Chunks [k0, k1) of a set (ctx: the set's first job). */
static fd_status parse_chunks(void *ctx, uint64_t k0, uint64_t k1, int thread)
{
    (void)thread;
    chunk_job *jobs = ctx;
    for (uint64_t k = k0; k < k1; k++) parse_chunk(&jobs[k]);
    return FD_OK;
}

/* Three sets of chunks in rotation: while the team's threads parse set
 * k+1, the main thread appends set k (in input order) and reads and
 * hashes set k+2, then joins the team on what is left of k+1, so reading,
 * parsing and appending all overlap.  The team (par_team, as the binary
 * readers') is T parsing threads and the main thread. */
fd_status fd_matrix_read_text(const char *path, int csv, int drop_nan, const fd_matrix_sink *sink)
{
    fd_status st = FD_OK, rst = FD_OK;
    int T = fd_matrix_threads(sink->threads), nc[3] = {0, 0, 0};
    if (T > FD_TEXT_MAX_THREADS) T = FD_TEXT_MAX_THREADS;
    chunk *cs = calloc(3 * (size_t)T, sizeof *cs);
    chunk_job *jobs = calloc(3 * (size_t)T, sizeof *jobs);
    par_team *team = NULL;
    uint64_t line_base = 0, input_row = 0;
    text_reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.first = 1;
    r.csv = csv;
    r.header_mode = sink->header;
    r.drop_nan = drop_nan;
    r.sink = sink;
    FD_TRY_GOTO(fd_input_check(path), st, done);
    if (!(r.f = fopen(path, "rb"))) {
        st = fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        goto done;
    }
    if (!cs || !jobs) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    struct stat fsb;
    r.fsize = fstat(fileno(r.f), &fsb) == 0 && S_ISREG(fsb.st_mode) ? (uint64_t)fsb.st_size : UINT64_MAX;
    FD_TRY_GOTO(sha256_init(&r.sha), st, done);
    FD_TRY_GOTO(read_batch(&r, cs, jobs, T, &nc[0]), st, done);
    /* Set 0 by the main thread alone, to get going (parse_chunks does not
     * fail: a chunk records its error for append_chunk, in input order). */
    (void)parse_chunks(jobs, 0, (uint64_t)nc[0], 0);
    if (!r.eof) FD_TRY_GOTO(read_batch(&r, cs + T, jobs + T, T, &nc[1]), st, done);
    for (int set = 0; nc[set % 3] > 0; set++) {
        int cur = set % 3, next = (set + 1) % 3, after = (set + 2) % 3;
        /* the team made at the second set: a file of one set starts no thread */
        if (nc[next] && !team) FD_TRY_GOTO(par_team_create(&team, T + 1), st, done);
        if (nc[next]) par_team_start(team, 0, (uint64_t)nc[next], 1, parse_chunks, jobs + next * T);
        for (int k = 0; k < nc[cur] && st == FD_OK; k++) st = append_chunk(&r, &cs[cur * T + k], &line_base, &input_row);
        nc[cur] = 0;
        if (st == FD_OK && !r.eof) rst = read_batch(&r, cs + after * T, jobs + after * T, T, &nc[after]);
        if (nc[next]) (void)par_team_finish(team);
        if (st == FD_OK) st = rst;
        if (st != FD_OK) goto done;
    }
    if (r.pushed == 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: no data rows", path);
        goto done;
    }
    sha256_future fut = {NULL, FD_OK, ""};
    FD_TRY_GOTO(sha256_final_hex(&r.sha, fut.hex), st, done);
    st = sink->finish(sink->ctx, &fut);
done:
    sha256_drop(&r.sha);
    if (r.f) fclose(r.f);
    for (int k = 0; cs && k < 3 * T; k++) {
        free(cs[k].buf);
        free(cs[k].a);
        free(cs[k].dropped);
        free(cs[k].names);
        free(cs[k].name_at);
    }
    free(cs);
    free(jobs);
    par_team_destroy(&team);
    free(r.carry);
    return st;
}

