#include "matrix_read.h"

#include "../common/linereader.h"
#include "../io/h5util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
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

typedef struct {
    const char *path;
    int csv, drop_nan;
    double *row;
    uint32_t n;          /* columns, 0 until the first data row */
    uint64_t input_row;
} text_state;

/* Splits a line into numbers; *bad_col is the 1-based column of a
 * non-number (0 when all parsed), *nonfinite the first NaN/inf column. */
static uint32_t split(text_state *t, char *line, uint32_t cap, uint32_t *bad_col, char **bad_tok,
                      uint32_t *nonfinite)
{
    uint32_t k = 0;
    char *p = line;
    *bad_col = *nonfinite = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || (t->csv && *p == '"')) p++;
        if (!*p) break;
        double v;
        char *start = p;
        if (!parse_number(&p, &v)) {
            *bad_col = k + 1;
            *bad_tok = start;
            return k;
        }
        /* A number must end at a separator: "12abc" is not 12. */
        if (*p && *p != ' ' && *p != '\t' && *p != '\r' && !(t->csv && (*p == ',' || *p == '"'))) {
            *bad_col = k + 1;
            *bad_tok = start;
            return k;
        }
        while (*p == ' ' || *p == '\t' || *p == '\r' || (t->csv && *p == '"')) p++;
        if (k < cap) t->row[k] = v;
        if (!isfinite(v) && !*nonfinite) *nonfinite = k + 1;
        k++;
        if (t->csv) {
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

/* Text is read in chunks of whole lines that worker threads parse and rank
 * in parallel; the main thread reads (hashing on the way), hands out a
 * batch of chunks, and appends the ranked rows in input order.  Line
 * numbers of errors are the chunk's first line plus the line within it,
 * so messages are the same as a serial reader's. */
#define CHUNK_BYTES (8u << 20)

typedef struct {
    char *buf;                 /* whole lines, NUL-terminated */
    size_t len;
    /* results */
    int32_t *a;                /* rows x n */
    uint8_t *dropped;          /* per row: NaN/inf, dropped */
    size_t rows, cap;
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
} chunk_job;

static void *parse_chunk(void *arg)
{
    chunk_job *j = arg;
    chunk *c = j->c;
    text_state t = {NULL, j->csv, j->drop_nan, NULL, j->n, 0};
    uint32_t cap = j->n + 1;
    t.row = malloc(cap * sizeof *t.row);
    uint64_t *ints = malloc(cap * sizeof *ints);
    int32_t abuf[128], *ab = j->n > 128 ? malloc(j->n * sizeof *ab) : abuf;
    c->rows = c->lines = 0;
    c->err = 0;
    if (!t.row || !ab || !ints) { c->err = 4; goto out; }
    int header = j->header;
    for (char *line = c->buf, *end = c->buf + c->len; line < end; c->lines++) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        if (nl) *nl = 0;
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *next = nl ? nl + 1 : end;
        if (len == 0 || strspn(line, " \t\r") == len) { line = next; continue; }
        uint32_t bad = 0, nonfinite = 0, k;
        char *tok = NULL;
        int fast = header ? -1 : split_uint(line, j->csv, ints, cap);
        if (fast >= 0) k = (uint32_t)fast;
        else k = split(&t, line, cap, &bad, &tok, &nonfinite);
        if (header) {
            header = 0;
            if (bad) { line = next; continue; }
        }
        if (bad || k != j->n || (nonfinite && !j->drop_nan)) {
            c->err = bad ? 1 : k != j->n ? 2 : 3;
            c->err_line = c->lines;
            c->err_col = bad ? bad : nonfinite;
            c->err_k = k;
            int w = 0;
            while (bad && tok[w] && tok[w] != ',' && tok[w] != ' ' && tok[w] != '\t' && w < 40) w++;
            snprintf(c->err_tok, sizeof c->err_tok, "%.*s", w, bad ? tok : "");
            break;
        }
        if (c->rows == c->cap) {
            size_t ncap = c->cap ? c->cap * 2 : 4096;
            int32_t *na = realloc(c->a, ncap * j->n * sizeof *na);
            uint8_t *nd = realloc(c->dropped, ncap);
            if (na) c->a = na;
            if (nd) c->dropped = nd;
            if (!na || !nd) { c->err = 4; break; }
            c->cap = ncap;
        }
        c->dropped[c->rows] = nonfinite != 0;
        if (fast >= 0) spearman_rank_uint(ints, j->n, c->a + c->rows * j->n, t.row);
        else if (!nonfinite) spearman_rank(t.row, j->n, c->a + c->rows * j->n);
        c->rows++;
        line = next;
    }
out:
    free(t.row);
    free(ints);
    if (ab != abuf) free(ab);
    return NULL;
}

/* The number of values on the first non-blank line of buf (for n), and
 * whether it is a CSV header. */
static fd_status first_row_shape(const char *path, const char *buf, size_t len, int csv, uint32_t *n, int *header)
{
    const char *p = buf, *end = buf + len;
    size_t lineno = 1;
    *n = 0;
    *header = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = strndup(p, l);
        if (!line) return fd_fail(FD_ERR_NOMEM, "out of memory");
        if (l && strspn(line, " \t\r") != l) {
            uint32_t cap = 1, bad, nonfinite;
            for (size_t i = 0; i < l; i++) cap += line[i] == ',' || line[i] == ' ' || line[i] == '\t';
            text_state t = {path, csv, 0, malloc(cap * sizeof(double)), 0, 0};
            char *tok = NULL;
            if (!t.row) {
                free(line);
                return fd_fail(FD_ERR_NOMEM, "out of memory");
            }
            uint32_t k = split(&t, line, cap, &bad, &tok, &nonfinite);
            free(t.row);
            if (bad && csv && lineno == 1 && !*header) {
                *header = 1;
                free(line);
                if (!nl) return FD_OK;
                p = nl + 1;
                lineno++;
                continue;
            }
            if (bad) {
                int w = 0;
                while (tok[w] && tok[w] != ',' && tok[w] != ' ' && tok[w] != '\t' && w < 40) w++;
                fd_status st = fd_fail(FD_ERR_INPUT, "%s:%zu: column %u: '%.*s' is not a number", path, lineno, bad, w, tok);
                free(line);
                return st;
            }
            free(line);
            *n = k;
            return FD_OK;
        }
        free(line);
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
    int eof, first, header, csv, drop_nan;
    uint32_t n;
    spearman_mat *m;
} text_reader;

/* Reads up to T chunks of whole lines into cs[0..); sets *nc. */
static fd_status read_batch(text_reader *r, chunk *cs, chunk_job *jobs, int T, int *nc)
{
    *nc = 0;
    for (; *nc < T && !r->eof; (*nc)++) {
        chunk *c = &cs[*nc];
        free(c->buf);
        c->buf = malloc(r->ncarry + CHUNK_BYTES + 1);
        if (!c->buf) return fd_fail(FD_ERR_NOMEM, "out of memory");
        if (r->ncarry) memcpy(c->buf, r->carry, r->ncarry);
        size_t got = fread(c->buf + r->ncarry, 1, CHUNK_BYTES, r->f);
        if (ferror(r->f)) return fd_fail(FD_ERR_IO, "%s: read error", r->path);
        sha256_update(&r->sha, c->buf + r->ncarry, got);
        size_t len = r->ncarry + got, cut = len;
        r->eof = got < CHUNK_BYTES;
        if (!r->eof) {
            while (cut > 0 && c->buf[cut - 1] != '\n') cut--;
            if (cut == 0) cut = len; /* a line longer than a chunk: it continues in the next */
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
            FD_TRY(first_row_shape(r->path, c->buf, c->len, r->csv, &r->n, &r->header));
            if (r->n == 0)
                return fd_fail(FD_ERR_INPUT, r->eof ? "%s: no data rows" : "%s: no data row in its first 8 MB", r->path);
            FD_TRY(smat_create(&r->m, r->n));
            /* Size the matrix from the file size and the first chunk's
             * line length, so that it is not copied while it grows. */
            struct stat sb;
            size_t lines = 0;
            for (const char *q = c->buf; (q = memchr(q, '\n', (size_t)(c->buf + c->len - q))) != NULL; q++) lines++;
            if (lines > 0 && fstat(fileno(r->f), &sb) == 0 && sb.st_size > 0)
                FD_TRY(smat_reserve(r->m, (uint64_t)((double)sb.st_size / ((double)c->len / (double)lines) * 1.02) + 8));
        }
        jobs[*nc] = (chunk_job){c, r->n, r->csv, r->drop_nan, r->first && r->header};
        r->first = 0;
    }
    return FD_OK;
}

/* Appends a parsed chunk's rows in order, or reports its first error. */
static fd_status append_chunk(text_reader *r, const chunk *c, uint64_t *line_base, uint64_t *input_row)
{
    fd_status st = FD_OK;
    for (size_t k = 0; k < c->rows && st == FD_OK; k++, (*input_row)++)
        st = c->dropped[k] ? smat_drop(r->m, *input_row) : smat_push_ranked(r->m, c->a + k * r->n, *input_row);
    FD_TRY(st);
    unsigned long long line = *line_base + c->err_line + 1;
    if (c->err == 1)
        return fd_fail(FD_ERR_INPUT, "%s:%llu: column %u: '%s' is not a number", r->path, line, c->err_col, c->err_tok);
    if (c->err == 2)
        return fd_fail(FD_ERR_INPUT, "%s:%llu: %u values, but the first row has %u", r->path, line, c->err_k, r->n);
    if (c->err == 3)
        return fd_fail(FD_ERR_INPUT, "%s:%llu: column %u is NaN or infinite (--drop-nan-rows skips such rows)", r->path,
                       line, c->err_col);
    if (c->err == 4) return fd_fail(FD_ERR_NOMEM, "%s: out of memory parsing", r->path);
    *line_base += c->lines;
    return FD_OK;
}

/* Three sets of chunks in rotation: while the workers parse set k+1, the
 * main thread appends set k (in input order) and reads and hashes set
 * k+2, so reading, parsing and appending all overlap. */
static fd_status read_text(spearman_mat **out, const char *path, int csv, int drop_nan)
{
    fd_status st = FD_OK, rst = FD_OK;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int T = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu, nc[3] = {0, 0, 0}, started = 0;
    chunk *cs = calloc(3 * (size_t)T, sizeof *cs);
    chunk_job *jobs = calloc(3 * (size_t)T, sizeof *jobs);
    pthread_t *th = calloc((size_t)T, sizeof *th);
    uint64_t line_base = 0, input_row = 0;
    text_reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.first = 1;
    r.csv = csv;
    r.drop_nan = drop_nan;
    if (!(r.f = fopen(path, "rb"))) {
        st = fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        goto done;
    }
    if (!cs || !jobs || !th) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    sha256_init(&r.sha);
    FD_TRY_GOTO(read_batch(&r, cs, jobs, T, &nc[0]), st, done);
    /* Set 0 is parsed by the main thread alone, to get going. */
    for (int k = 0; k < nc[0]; k++) parse_chunk(&jobs[k]);
    if (!r.eof) FD_TRY_GOTO(read_batch(&r, cs + T, jobs + T, T, &nc[1]), st, done);
    for (int set = 0; nc[set % 3] > 0; set++) {
        int cur = set % 3, next = (set + 1) % 3, after = (set + 2) % 3;
        started = 0;
        for (; started < nc[next]; started++)
            if (pthread_create(&th[started], NULL, parse_chunk, &jobs[next * T + started]) != 0) break;
        for (int k = 0; k < nc[cur] && st == FD_OK; k++) st = append_chunk(&r, &cs[cur * T + k], &line_base, &input_row);
        nc[cur] = 0;
        if (st == FD_OK && !r.eof) rst = read_batch(&r, cs + after * T, jobs + after * T, T, &nc[after]);
        for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
        for (int k = started; k < nc[next]; k++) parse_chunk(&jobs[next * T + k]); /* threads that did not start */
        started = 0;
        if (st == FD_OK) st = rst;
        if (st != FD_OK) goto done;
    }
    if (!r.m || r.m->rows == 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: no data rows", path);
        goto done;
    }
    sha256_final_hex(&r.sha, r.m->sha256);
    *out = r.m;
    r.m = NULL;
done:
    if (r.f) fclose(r.f);
    for (int k = 0; cs && k < 3 * T; k++) {
        free(cs[k].buf);
        free(cs[k].a);
        free(cs[k].dropped);
    }
    free(cs);
    free(jobs);
    free(th);
    free(r.carry);
    smat_destroy(&r.m);
    return st;
}

/* ---------------- NumPy .npy ---------------- */

static fd_status sha_file(const char *path, char hex[65])
{
    sha256_ctx c;
    char buf[1 << 16];
    size_t n;
    FILE *f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    sha256_init(&c);
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&c, buf, n);
    int err = ferror(f);
    fclose(f);
    if (err) return fd_fail(FD_ERR_IO, "%s: read error", path);
    sha256_final_hex(&c, hex);
    return FD_OK;
}

/* Adds a row given as doubles, dropping or refusing non-finite values. */
static fd_status push_checked(spearman_mat *m, const double *x, uint64_t r, int drop_nan, const char *where)
{
    for (uint32_t k = 0; k < m->n; k++)
        if (!isfinite(x[k])) {
            if (!drop_nan)
                return fd_fail(FD_ERR_INPUT, "%s: row %llu, column %u is NaN or infinite (--drop-nan-rows skips such rows)",
                               where, (unsigned long long)r, k + 1);
            return smat_drop(m, r);
        }
    return smat_push(m, x, r);
}

static fd_status read_npy(spearman_mat **out, const char *path, int drop_nan)
{
    fd_status st = FD_OK;
    spearman_mat *m = NULL;
    unsigned char *raw = NULL;
    double *row = NULL;
    char hdr[4096];
    FILE *f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    unsigned char pre[10];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: not a NumPy .npy file", path);
        goto done;
    }
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) {
        unsigned char b[2];
        if (fread(b, 1, 2, f) != 2) { st = fd_fail(FD_ERR_INPUT, "%s: truncated header", path); goto done; }
        hlen |= (size_t)b[0] << 16 | (size_t)b[1] << 24;
    }
    if (hlen >= sizeof hdr || fread(hdr, 1, hlen, f) != hlen) {
        st = fd_fail(FD_ERR_INPUT, "%s: bad or truncated .npy header", path);
        goto done;
    }
    hdr[hlen] = 0;
    char *d = strstr(hdr, "'descr':"), *fo = strstr(hdr, "'fortran_order':"), *sh = strstr(hdr, "'shape':");
    char descr[16] = "";
    unsigned long long rows = 0, cols = 0;
    if (!d || !fo || !sh || sscanf(d, "'descr': '%15[^']'", descr) != 1 ||
        sscanf(sh, "'shape': (%llu, %llu)", &rows, &cols) != 2) {
        st = fd_fail(FD_ERR_INPUT, "%s: only 2-D arrays are read (header: %s)", path, hdr);
        goto done;
    }
    if (strstr(fo, "True")) {
        st = fd_fail(FD_ERR_INPUT, "%s: Fortran-ordered array; save it with np.ascontiguousarray", path);
        goto done;
    }
    static const struct { const char *descr; int size; } types[] = {
        {"<f8", 8}, {"<f4", 4}, {"<i8", 8}, {"<i4", 4}, {"<i2", 2}, {"|i1", 1}, {"<u8", 8}, {"<u4", 4}, {"<u2", 2}, {"|u1", 1}};
    int ti = -1;
    for (int i = 0; i < (int)(sizeof types / sizeof *types); i++)
        if (!strcmp(descr, types[i].descr)) ti = i;
    if (ti < 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: dtype '%s' is not supported (little-endian ints, uints, float32, float64)", path, descr);
        goto done;
    }
    if (rows == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no data rows", path); goto done; }
    if (cols > 32767) { st = fd_fail(FD_ERR_INPUT, "%s: %llu columns is too many", path, cols); goto done; }
    FD_TRY_GOTO(smat_create(&m, (uint32_t)cols), st, done);
    size_t es = (size_t)types[ti].size, rb = es * cols;
    FD_ALLOC_GOTO(raw, rb, st, done);
    FD_ALLOC_GOTO(row, cols, st, done);
    for (unsigned long long r = 0; r < rows; r++) {
        if (fread(raw, 1, rb, f) != rb) {
            st = fd_fail(FD_ERR_INPUT, "%s: truncated: row %llu of %llu is missing", path, r, rows);
            goto done;
        }
        for (size_t k = 0; k < cols; k++) {
            const unsigned char *p = raw + k * es;
            switch (ti) {
            case 0: { double v; memcpy(&v, p, 8); row[k] = v; break; }
            case 1: { float v; memcpy(&v, p, 4); row[k] = v; break; }
            case 2: { int64_t v; memcpy(&v, p, 8); row[k] = (double)v; break; }
            case 3: { int32_t v; memcpy(&v, p, 4); row[k] = v; break; }
            case 4: { int16_t v; memcpy(&v, p, 2); row[k] = v; break; }
            case 5: row[k] = (int8_t)p[0]; break;
            case 6: { uint64_t v; memcpy(&v, p, 8); row[k] = (double)v; break; }
            case 7: { uint32_t v; memcpy(&v, p, 4); row[k] = v; break; }
            case 8: { uint16_t v; memcpy(&v, p, 2); row[k] = v; break; }
            default: row[k] = p[0]; break;
            }
        }
        FD_TRY_GOTO(push_checked(m, row, r, drop_nan, path), st, done);
    }
    fclose(f);
    f = NULL;
    FD_TRY_GOTO(sha_file(path, m->sha256), st, done);
    *out = m;
    m = NULL;
done:
    if (f) fclose(f);
    free(raw);
    free(row);
    smat_destroy(&m);
    return st;
}

/* ---------------- HDF5: FILE.h5:/dataset ---------------- */

static fd_status read_h5(spearman_mat **out, const char *spec, int drop_nan)
{
    fd_status st = FD_OK;
    spearman_mat *m = NULL;
    double *buf = NULL;
    hid_t f = -1, ds = -1, fs = -1, ms = -1;
    const char *colon = strstr(spec, ".h5:");
    size_t plen = (size_t)(colon - spec) + 3;
    char *path = strndup(spec, plen);
    const char *dset = colon + 4;
    if (!path) return fd_fail(FD_ERR_NOMEM, "out of memory");
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) { st = fd_fail(FD_ERR_INPUT, "%s: cannot open as HDF5", path); goto done; }
    if (H5Lexists(f, dset, H5P_DEFAULT) <= 0 || (ds = H5Dopen2(f, dset, H5P_DEFAULT)) < 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: no dataset '%s'", path, dset);
        goto done;
    }
    hsize_t dims[2];
    H5_CHECK_GOTO(fs = H5Dget_space(ds), st, done);
    if (H5Sget_simple_extent_ndims(fs) != 2) {
        st = fd_fail(FD_ERR_INPUT, "%s:%s: not a 2-D dataset", path, dset);
        goto done;
    }
    H5_CHECK_GOTO(H5Sget_simple_extent_dims(fs, dims, NULL), st, done);
    if (dims[0] == 0) { st = fd_fail(FD_ERR_INPUT, "%s:%s: no rows", path, dset); goto done; }
    if (dims[1] > 32767) { st = fd_fail(FD_ERR_INPUT, "%s:%s: too many columns", path, dset); goto done; }
    FD_TRY_GOTO(smat_create(&m, (uint32_t)dims[1]), st, done);
    /* In slabs of rows, so memory stays bounded. */
    hsize_t slab = (hsize_t)1 << 16, cnt[2] = {0, dims[1]}, start[2] = {0, 0};
    if (slab > dims[0]) slab = dims[0];
    FD_ALLOC_GOTO(buf, slab * dims[1], st, done);
    for (hsize_t r = 0; r < dims[0]; r += slab) {
        cnt[0] = dims[0] - r < slab ? dims[0] - r : slab;
        start[0] = r;
        H5_CHECK_GOTO(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL), st, done);
        if (ms >= 0) H5Sclose(ms);
        H5_CHECK_GOTO(ms = H5Screate_simple(2, cnt, NULL), st, done);
        if (H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, buf) < 0) {
            st = fd_fail(FD_ERR_INPUT, "%s:%s: cannot be read as numbers", path, dset);
            goto done;
        }
        for (hsize_t i = 0; i < cnt[0]; i++) FD_TRY_GOTO(push_checked(m, buf + i * dims[1], r + i, drop_nan, spec), st, done);
    }
    FD_TRY_GOTO(sha_file(path, m->sha256), st, done);
    *out = m;
    m = NULL;
done:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
    if (f >= 0) H5Fclose(f);
    free(path);
    free(buf);
    smat_destroy(&m);
    return st;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcasecmp(s + a - b, suf);
}

fd_status spearman_read(spearman_mat **out, const char *spec, int drop_nan)
{
    fd_status st;
    *out = NULL;
    if (strstr(spec, ".h5:") || strstr(spec, ".hdf5:")) {
        if (!strstr(spec, ".h5:")) return fd_fail(FD_ERR_USAGE, "%s: name HDF5 inputs FILE.h5:/dataset", spec);
        st = read_h5(out, spec, drop_nan);
    } else if (ends_with(spec, ".npy")) {
        st = read_npy(out, spec, drop_nan);
    } else {
        st = read_text(out, spec, ends_with(spec, ".csv"), drop_nan);
    }
    if (st == FD_OK) st = smat_finish(*out);
    if (st == FD_OK && !((*out)->source = strdup(spec))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st != FD_OK) smat_destroy(out);
    return st;
}
