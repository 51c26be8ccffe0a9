/* SPDX-License-Identifier: BSD-3-Clause */
/* The binary matrix readers (see matrix_bin.h): NumPy .npy and HDF5
 * FILE.h5:/dataset, read in batches that worker threads convert and
 * transform.  Text and CSV are in matrix_text.c, the choice by name in
 * matrix_read.c. */
#include "matrix_bin.h"

#include "../common/inputfile.h"
#include "../common/par_rows.h"
#include "../common/sha256.h"
#include "h5util.h"
#include "npy.h"
#include "rawread.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---------------- rows to the sink ---------------- */

/* A binary reader's rows on their way to the sink: how many went in, and
 * whether the workers place them (fd_matrix_sink's place). */
typedef struct {
    const fd_matrix_sink *sink;
    uint64_t pushed;
    int placing;
} row_feed;

static fd_status feed_begin(row_feed *f, const fd_matrix_sink *sink, uint32_t n, uint64_t rows)
{
    f->sink = sink;
    f->pushed = 0;
    f->placing = 0;
    return sink->begin(sink->ctx, n, rows);
}

/* The .npy element types read, as numpy's descr. */
static const struct { const char *descr; int size; } npy_types[] = {
    {"<f8", 8}, {"<f4", 4}, {"<i8", 8}, {"<i4", 4}, {"<i2", 2}, {"|i1", 1}, {"<u8", 8}, {"<u4", 4}, {"<u2", 2}, {"|u1", 1}};

/* One row of npy_types[ti] values as doubles. */
static void npy_row(const unsigned char *raw, int ti, size_t cols, double *row)
{
    const size_t es = (size_t)npy_types[ti].size;
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
}

/* ---------------- the batch pipeline of the binary readers ---------------- */

/* A batch of rows on its way through read_batches: read by the source,
 * converted and transformed by the workers, then handed to the
 * sink in order by the main thread. */
typedef struct {
    unsigned char *raw; /* rows of npy_types[ti] values */
    void *out;          /* rows x row_bytes */
    uint32_t *bad;      /* per row: 0, or 1 + the first column that is NaN or infinite */
    uint64_t first;     /* the batch's first row */
    size_t rows;        /* rows read whole */
    int failed;         /* the source failed after these rows (said when the batch's turn comes) */
} row_batch;

/* Where the rows come from.  fill reads the next batch into b on the
 * main thread (HDF5 is not thread-safe here) and returns 0 when there is
 * none; it records a failure in b->failed rather than failing, so that the
 * error is raised in input order by fail.  (The input's hash is not a
 * stage: sha256_file_start hashes the file beside the pipeline.) */
typedef struct batch_src batch_src;
struct batch_src {
    int (*fill)(batch_src *s, row_batch *b);
    fd_status (*fail)(batch_src *s, const row_batch *b);
    uint64_t rows, next; /* rows of the input; the next to read */
    size_t B, rb;        /* rows a batch, bytes a row */
};

/* What the workers of one batch share; row[t] is thread t's scratch
 * (cols, then cols + 1 for the transform). */
typedef struct {
    row_batch *b;
    int ti;
    uint32_t cols;
    size_t obytes;
    const fd_matrix_sink *sink;
    double **row;
    int place; /* each good row to its place (fd_matrix_sink's place) */
    int keep_nan; /* FD_NAN_KEEP: only an infinity makes a row bad */
} batch_work;

/* Rows a worker takes at a time: a batch is some 35,000 rows of 30
 * values, a row under a microsecond. */
#define BATCH_CHUNK 512

/* Rows [r0, r1) of the batch: converted, checked, transformed (and
 * placed). */
static fd_status batch_transform(void *arg, uint64_t r0, uint64_t r1, int thread)
{
    const batch_work *w = arg;
    const size_t rb = (size_t)npy_types[w->ti].size * w->cols;
    double *row = w->row[thread];
    for (size_t r = r0; r < r1; r++) {
        npy_row(w->b->raw + r * rb, w->ti, w->cols, row);
        uint32_t bad = 0;
        for (uint32_t k = 0; k < w->cols && !bad; k++)
            if (w->keep_nan ? isinf(row[k]) : !isfinite(row[k])) bad = k + 1;
        w->b->bad[r] = bad;
        if (bad) continue;
        char *out = (char *)w->b->out + r * w->obytes;
        w->sink->transform(row, NULL, w->cols, out, row + w->cols);
        if (w->place) w->sink->place(w->sink->ctx, out, w->b->first + r);
    }
    return FD_OK;
}

/* b's rows into the sink, in order; a row with a NaN or infinite value is
 * dropped or refused. */
static fd_status batch_push(row_feed *feed, batch_src *src, const row_batch *b, int drop_nan, const char *where,
                            size_t obytes)
{
    for (size_t r = 0; r < b->rows; r++) {
        const uint64_t row = b->first + r;
        if (feed->placing && !b->bad[r]) { /* placed by its worker */
            feed->pushed++;
            continue;
        }
        if (b->bad[r]) {
            if (drop_nan == FD_NAN_KEEP)
                return fd_fail(FD_ERR_INPUT, "%s: row %llu, column %u is infinite", where, (unsigned long long)row,
                               b->bad[r]);
            if (drop_nan != FD_NAN_DROP_ROW)
                return fd_fail(FD_ERR_INPUT, "%s: row %llu, column %u is NaN or infinite%s", where,
                               (unsigned long long)row, b->bad[r], feed->sink->nan_hint ? feed->sink->nan_hint : "");
            FD_TRY(feed->sink->drop(feed->sink->ctx));
            continue;
        }
        feed->pushed++;
        FD_TRY(feed->sink->push(feed->sink->ctx, (const char *)b->out + r * obytes, row));
    }
    return b->failed ? src->fail(src, b) : FD_OK;
}

/* Rows go in batches of about 4 MiB (src->B rows) through three stages:
 * while the team's threads convert, check and transform batch k + 1 (for
 * spearman, the ranking), the main thread hands batch k to the sink and
 * reads batch k + 2, then joins the team on what is left of k + 1.  The
 * sink sees the rows, and any error, in input order, as a row-at-a-time
 * reader would; a sink with places for its rows (spearman's) takes each
 * from the worker that transformed it instead, and the main thread only
 * checks batch k for errors, in order.  One team for the whole read,
 * where 8 threads used to be started for each batch, one after the
 * other on the main thread: a 9,879,896 x 30 .npy loaded in 0.62 s
 * against 0.91 s with the same 8 (bench/read-spearman.sh --load, 16
 * cores). */
static fd_status read_batches(row_feed *feed, batch_src *src, int ti, uint32_t cols, int drop_nan, const char *where)
{
    fd_status st = FD_OK;
    const fd_matrix_sink *sink = feed->sink;
    const size_t B = src->B, obytes = sink->row_bytes(cols);
    /* the team: the main thread, which mostly reads, and T - 1 others */
    const int T = fd_matrix_threads(sink->threads);
    row_batch bs[3];
    double **rows = calloc((size_t)T, sizeof *rows);
    par_team *team = NULL;
    memset(bs, 0, sizeof bs);
    if (!rows) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (int k = 0; k < 3; k++) {
        FD_ALLOC_GOTO(bs[k].raw, B * src->rb, st, done);
        FD_ALLOC_GOTO(bs[k].bad, B, st, done);
        if (!(bs[k].out = malloc(B * obytes + 1))) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    }
    for (int t = 0; t < T; t++) FD_ALLOC_GOTO(rows[t], 2 * (size_t)cols + 1, st, done);
    /* src->rows is exact here (the header's, checked against the file's
     * size; a short read is an error, not fewer rows). */
    const int place = sink->place && sink->place_begin && drop_nan != FD_NAN_DROP_ROW;
    if (place) FD_TRY_GOTO(sink->place_begin(sink->ctx, src->rows), st, done);
    feed->placing = place;
    batch_work w = {NULL, ti, cols, obytes, sink, rows, place, drop_nan == FD_NAN_KEEP};
    int nb = src->fill(src, &bs[0]); /* batches read */
    if (nb) { /* batch 0 by the main thread alone, to get going */
        w.b = &bs[0];
        (void)batch_transform(&w, 0, bs[0].rows, 0);
        nb += src->fill(src, &bs[1]);
    }
    for (int k = 0; k < nb; k++) {
        const int more = k + 1 < nb;
        if (more) {
            /* made at the second batch: an input of one batch (a few MiB)
             * starts no thread */
            if (!team) FD_TRY_GOTO(par_team_create(&team, T), st, done);
            w.b = &bs[(k + 1) % 3];
            par_team_start(team, 0, w.b->rows, BATCH_CHUNK, batch_transform, &w);
        }
        st = batch_push(feed, src, &bs[k % 3], drop_nan, where, obytes);
        if (st == FD_OK) nb += src->fill(src, &bs[(k + 2) % 3]);
        if (more) (void)par_team_finish(team); /* batch_transform does not fail */
        if (st != FD_OK) goto done;
    }
done:
    par_team_destroy(&team);
    for (int k = 0; k < 3; k++) {
        free(bs[k].raw);
        free(bs[k].out);
        free(bs[k].bad);
    }
    for (int t = 0; t < T; t++) free(rows[t]);
    free(rows);
    return st;
}

/* Batch sizes: about 4 MiB of input a batch, at least a row. */
static size_t batch_rows(uint64_t rows, size_t rb)
{
    size_t B = ((size_t)4 << 20) / rb;
    if (B < 1) B = 1;
    return B > rows ? (size_t)rows : B;
}

/* ---------------- NumPy .npy: the source ---------------- */

typedef struct {
    batch_src base;
    FILE *f;
    const char *path;
} npy_src;

static int npy_fill(batch_src *s, row_batch *b)
{
    npy_src *n = (npy_src *)s;
    if (s->next >= s->rows) return 0;
    const size_t want = s->rows - s->next < s->B ? (size_t)(s->rows - s->next) : s->B;
    const size_t got = fread(b->raw, 1, want * s->rb, n->f);
    b->first = s->next;
    b->rows = got / s->rb;
    b->failed = b->rows < want;
    s->next = b->failed ? s->rows : s->next + want; /* nothing after a short read */
    return 1;
}

/* The binary readers' hash, still running, to the sink: it joins it
 * when it needs it (or now), and whatever it leaves is stopped. */
static fd_status hand_hash(const fd_matrix_sink *sink, sha256_job **hash)
{
    sha256_future fut = {*hash, FD_OK, ""};
    *hash = NULL;
    fd_status st = sink->finish(sink->ctx, &fut);
    sha256_future_drop(&fut);
    return st;
}

static fd_status npy_fail(batch_src *s, const row_batch *b)
{
    return fd_fail(FD_ERR_INPUT, "%s: truncated: row %llu of %llu is missing", ((npy_src *)s)->path,
                   (unsigned long long)(b->first + b->rows), (unsigned long long)s->rows);
}

/* ---------------- NumPy .npy of float64: straight into the sink ---------------- */

/* Values a task reads and checks: 1 MiB, in cache for the check right
 * after the read, enough to amortise a pread. */
#define DIRECT_CHUNK ((uint64_t)1 << 17)

typedef struct {
    int fd;
    uint64_t data, n; /* the values' file offset, and their count */
    double *x;
    int how;          /* FD_REFUSE_* */
    uint64_t *first;  /* per chunk: its first refused value, or UINT64_MAX */
    uint64_t *end;    /* per chunk: where the file ended in it, or UINT64_MAX */
    int *err;         /* per chunk: errno of a failed read, or 0 */
} direct_read;

static fd_status direct_chunks(void *arg, uint64_t c0, uint64_t c1, int thread)
{
    const direct_read *r = arg;
    (void)thread;
    for (uint64_t c = c0; c < c1; c++) {
        const uint64_t a = c * DIRECT_CHUNK, cnt = r->n - a < DIRECT_CHUNK ? r->n - a : DIRECT_CHUNK;
        const ssize_t got = fd_pread_full(r->fd, r->x + a, (size_t)cnt * 8, (off_t)(r->data + a * 8));
        r->first[c] = r->end[c] = UINT64_MAX;
        r->err[c] = got < 0 ? errno : 0;
        if (got >= 0 && (uint64_t)got < cnt * 8) r->end[c] = a + (uint64_t)got / 8;
        if (got >= 0) r->first[c] = fd_first_refused(r->x, a, a + (uint64_t)got / 8, r->how);
    }
    return FD_OK;
}

/* The values of a float64 .npy (f at its data), rows x cols, into the
 * sink's place for them by pread on threads, each chunk checked as it
 * comes in; the first failure in file order is said as the row-by-row
 * pipeline says it.  10^7 2-D points went through that pipeline at
 * 0.47 GB/s (each row converted, copied and placed by a call). */
static fd_status npy_direct(const char *path, FILE *f, uint64_t rows, uint32_t cols, int drop_nan,
                            const fd_matrix_sink *sink, double *x)
{
    const uint64_t n = rows * cols, chunks = (n + DIRECT_CHUNK - 1) / DIRECT_CHUNK;
    const long data = ftell(f);
    if (data < 0) return fd_fail(FD_ERR_INPUT, "%s: cannot tell its data's offset: %s", path, strerror(errno));
    direct_read r = {-1, (uint64_t)data, n, x, drop_nan == FD_NAN_KEEP ? FD_REFUSE_INF : FD_REFUSE_NONFINITE,
                     malloc(chunks * sizeof *r.first), malloc(chunks * sizeof *r.end), malloc(chunks * sizeof *r.err)};
    fd_status st = FD_OK;
    if (!r.first || !r.end || !r.err) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((r.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
        goto done;
    }
    st = par_rows_chunk(fd_matrix_threads(sink->threads), 0, chunks, 1, direct_chunks, &r, NULL);
    for (uint64_t c = 0; c < chunks && st == FD_OK; c++) {
        if (r.first[c] != UINT64_MAX) {
            const uint64_t row = r.first[c] / cols;
            const unsigned col = (unsigned)(r.first[c] % cols) + 1;
            st = drop_nan == FD_NAN_KEEP
                     ? fd_fail(FD_ERR_INPUT, "%s: row %llu, column %u is infinite", path, (unsigned long long)row, col)
                     : fd_fail(FD_ERR_INPUT, "%s: row %llu, column %u is NaN or infinite%s", path,
                               (unsigned long long)row, col, sink->nan_hint ? sink->nan_hint : "");
        } else if (r.err[c]) {
            st = fd_fail(FD_ERR_INPUT, "%s: cannot read: %s", path, strerror(r.err[c]));
        } else if (r.end[c] != UINT64_MAX) {
            st = fd_fail(FD_ERR_INPUT, "%s: truncated: row %llu of %llu is missing", path,
                         (unsigned long long)(r.end[c] / cols), (unsigned long long)rows);
        }
    }
done:
    if (r.fd >= 0) close(r.fd);
    free(r.first);
    free(r.end);
    free(r.err);
    return st;
}

fd_status fd_matrix_read_npy(const char *path, int drop_nan, const fd_matrix_sink *sink)
{
    fd_status st = FD_OK;
    row_feed feed = {0};
    sha256_job *hash = NULL;
    npy_src src = {.base = {npy_fill, npy_fail, 0, 0, 0, 0}, .path = path};
    FD_TRY(fd_input_check(path));
    FILE *f = src.f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    npy_header h;
    FD_TRY_GOTO(npy_read_header(f, path, &h), st, done);
    /* A 1-D array is one column (labels, 1-D points): the same bytes. */
    if (h.ndim != 1 && h.ndim != 2) {
        st = fd_fail(FD_ERR_INPUT, "%s: only 1-D and 2-D arrays are read (this one has %u dimensions)", path, h.ndim);
        goto done;
    }
    if (h.fortran) {
        st = fd_fail(FD_ERR_INPUT, "%s: Fortran-ordered array; save it with np.ascontiguousarray", path);
        goto done;
    }
    int ti = -1;
    for (int i = 0; i < (int)(sizeof npy_types / sizeof *npy_types); i++)
        if (!strcmp(h.descr, npy_types[i].descr)) ti = i;
    if (ti < 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: dtype '%s' is not supported (little-endian ints, uints, float32, float64)", path,
                     h.descr);
        goto done;
    }
    const unsigned long long rows = h.shape[0], cols = h.ndim == 2 ? h.shape[1] : 1;
    if (rows == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no data rows", path); goto done; }
    if (cols == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no columns", path); goto done; }
    if (cols > 32767) { st = fd_fail(FD_ERR_INPUT, "%s: %llu columns is too many", path, cols); goto done; }
    /* The rows the header promises must be in the file before the sink
     * sizes its storage by them. */
    if (rows > npy_bytes_held(f) / ((uint64_t)npy_types[ti].size * cols)) {
        st = fd_fail(FD_ERR_INPUT, "%s: truncated: the header promises %llu rows of %llu values, the file holds fewer", path,
                     rows, cols);
        goto done;
    }
    FD_TRY_GOTO(feed_begin(&feed, sink, (uint32_t)cols, rows), st, done);
    FD_TRY_GOTO(sha256_file_start(&hash, path), st, done); /* the whole file, header and any bytes after the array */
    if (ti == 0 && sink->values_at && drop_nan != FD_NAN_DROP_ROW) {
        double *x = sink->values_at(sink->ctx, rows);
        if (!x) { st = FD_ERR_NOMEM; goto done; }
        FD_TRY_GOTO(npy_direct(path, f, rows, (uint32_t)cols, drop_nan, sink, x), st, done);
        feed.pushed = rows;
    } else {
        src.base.rows = rows;
        src.base.rb = (size_t)npy_types[ti].size * cols;
        src.base.B = batch_rows(rows, src.base.rb);
        FD_TRY_GOTO(read_batches(&feed, &src.base, ti, (uint32_t)cols, drop_nan, path), st, done);
    }
    if (feed.pushed == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no data rows", path); goto done; }
    st = hand_hash(sink, &hash);
done:
    sha256_file_wait(&hash, NULL); /* stops it, on the way out of a failure */
    if (f) fclose(f);
    return st;
}

/* ---------------- HDF5: FILE.h5:/dataset ---------------- */

/* The dataset read as doubles (npy_types[0]), a hyperslab of rows a
 * batch; a 1-D dataset is one column, as a 1-D .npy is (labels saved from
 * h5py or NumPy). */
typedef struct {
    batch_src base;
    hid_t ds, fs;
    uint64_t cols;
    const char *path, *dset;
    int ndims; /* the dataset's: 1 or 2 */
} h5_src;

static int h5_fill(batch_src *s, row_batch *b)
{
    h5_src *h = (h5_src *)s;
    if (s->next >= s->rows) return 0;
    hsize_t start[2] = {s->next, 0}, cnt[2] = {s->rows - s->next < s->B ? s->rows - s->next : s->B, h->cols};
    hid_t ms = -1;
    b->first = s->next;
    b->rows = 0;
    b->failed = H5Sselect_hyperslab(h->fs, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
                (ms = H5Screate_simple(h->ndims, cnt, NULL)) < 0 ||
                H5Dread(h->ds, H5T_NATIVE_DOUBLE, ms, h->fs, H5P_DEFAULT, b->raw) < 0;
    if (ms >= 0) H5Sclose(ms);
    if (!b->failed) b->rows = (size_t)cnt[0];
    s->next = b->failed ? s->rows : s->next + cnt[0];
    return 1;
}

static fd_status h5_fail(batch_src *s, const row_batch *b)
{
    const h5_src *h = (const h5_src *)s;
    return fd_fail(FD_ERR_INPUT, "%s:%s: rows from %llu cannot be read as numbers", h->path, h->dset,
                   (unsigned long long)b->first);
}

fd_status fd_matrix_read_h5(const char *spec, int drop_nan, const fd_matrix_sink *sink)
{
    fd_status st = FD_OK;
    row_feed feed = {0};
    sha256_job *hash = NULL;
    hid_t f = -1, ds = -1, fs = -1;
    const char *colon = strstr(spec, ".h5:");
    size_t plen = (size_t)(colon - spec) + 3;
    char *path = strndup(spec, plen);
    const char *dset = colon + 4;
    if (!path) return fd_fail(FD_ERR_NOMEM, "out of memory");
    FD_TRY_GOTO(fd_input_check(path), st, done);
    f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) { st = fd_fail(FD_ERR_INPUT, "%s: cannot open as HDF5", path); goto done; }
    if (H5Lexists(f, dset, H5P_DEFAULT) <= 0 || (ds = H5Dopen2(f, dset, H5P_DEFAULT)) < 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: no dataset '%s'", path, dset);
        goto done;
    }
    hsize_t dims[2] = {0, 1};
    H5_CHECK_GOTO(fs = H5Dget_space(ds), st, done);
    const int nd = H5Sget_simple_extent_ndims(fs);
    if (nd != 1 && nd != 2) {
        st = fd_fail(FD_ERR_INPUT, "%s:%s: only 1-D and 2-D datasets are read (this one has %d dimensions)", path,
                     dset, nd);
        goto done;
    }
    H5_CHECK_GOTO(H5Sget_simple_extent_dims(fs, dims, NULL), st, done);
    if (dims[0] == 0) { st = fd_fail(FD_ERR_INPUT, "%s:%s: no rows", path, dset); goto done; }
    if (dims[1] == 0) { st = fd_fail(FD_ERR_INPUT, "%s:%s: no columns", path, dset); goto done; }
    if (dims[1] > 32767) { st = fd_fail(FD_ERR_INPUT, "%s:%s: too many columns", path, dset); goto done; }
    FD_TRY_GOTO(feed_begin(&feed, sink, (uint32_t)dims[1], dims[0]), st, done);
    FD_TRY_GOTO(sha256_file_start(&hash, path), st, done);
    const size_t rb = sizeof(double) * dims[1];
    h5_src src = {{h5_fill, h5_fail, dims[0], 0, batch_rows(dims[0], rb), rb}, ds, fs, dims[1], path, dset, nd};
    FD_TRY_GOTO(read_batches(&feed, &src.base, 0, (uint32_t)dims[1], drop_nan, spec), st, done);
    if (feed.pushed == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no data rows", spec); goto done; }
    st = hand_hash(sink, &hash);
done:
    sha256_file_wait(&hash, NULL);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
    if (f >= 0) H5Fclose(f);
    free(path);
    return st;
}
