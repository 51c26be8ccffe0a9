/* Binary matrices (NumPy .npy, HDF5 FILE.h5:/dataset) and the choice of
 * reader by name; text and CSV are in matrix_text.c. */
#include "matrix_read.h"

#include "../common/sha256.h"
#include "h5util.h"
#include "npy.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---------------- NumPy .npy ---------------- */

static size_t hashed_read(void *buf, size_t n, FILE *f, sha256_ctx *sha)
{
    size_t got = fread(buf, 1, n, f);
    sha256_update(sha, buf, got);
    return got;
}

/* A binary reader's rows on their way to the sink: the transform's
 * output and scratch, and how many rows went in. */
typedef struct {
    const fd_matrix_sink *sink;
    uint32_t n;
    void *out;
    double *scratch;
    uint64_t pushed;
} row_feed;

static fd_status feed_begin(row_feed *f, const fd_matrix_sink *sink, uint32_t n, uint64_t rows)
{
    f->sink = sink;
    f->n = n;
    f->pushed = 0;
    f->out = malloc(sink->row_bytes(n) + 1);
    f->scratch = malloc(((size_t)n + 1) * sizeof *f->scratch);
    if (!f->out || !f->scratch) return fd_fail(FD_ERR_NOMEM, "out of memory");
    return sink->begin(sink->ctx, n, rows);
}

static void feed_free(row_feed *f)
{
    free(f->out);
    free(f->scratch);
    f->out = f->scratch = NULL;
}

/* Adds a row given as doubles, dropping or refusing non-finite values. */
static fd_status push_checked(row_feed *f, const double *x, uint64_t r, int drop_nan, const char *where)
{
    for (uint32_t k = 0; k < f->n; k++)
        if (!isfinite(x[k])) {
            if (!drop_nan)
                return fd_fail(FD_ERR_INPUT, "%s: row %llu, column %u is NaN or infinite%s", where, (unsigned long long)r,
                               k + 1, f->sink->nan_hint ? f->sink->nan_hint : "");
            return f->sink->drop(f->sink->ctx);
        }
    f->sink->transform(x, NULL, f->n, f->out, f->scratch);
    f->pushed++;
    return f->sink->push(f->sink->ctx, f->out, r);
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

/* A batch of rows on its way through the pipeline of read_npy: read and
 * hashed by the main thread, converted and transformed by the workers,
 * then handed to the sink in order by the main thread. */
typedef struct {
    unsigned char *raw;
    void *out;          /* rows x row_bytes */
    uint32_t *bad;      /* per row: 0, or 1 + the first column that is NaN or infinite */
    uint64_t first;     /* the batch's first row */
    size_t bytes;       /* bytes read */
    size_t rows;        /* rows read whole */
    int truncated;      /* the file ended inside the batch */
} npy_batch;

typedef struct {
    npy_batch *b;
    size_t r0, r1;
    int ti;
    uint32_t cols;
    size_t obytes;
    const fd_matrix_sink *sink;
    double *row;        /* cols, then cols + 1 of the transform's scratch */
} npy_slice;

static void *npy_transform(void *arg)
{
    npy_slice *w = arg;
    const size_t rb = (size_t)npy_types[w->ti].size * w->cols;
    for (size_t r = w->r0; r < w->r1; r++) {
        npy_row(w->b->raw + r * rb, w->ti, w->cols, w->row);
        uint32_t bad = 0;
        for (uint32_t k = 0; k < w->cols && !bad; k++)
            if (!isfinite(w->row[k])) bad = k + 1;
        w->b->bad[r] = bad;
        if (!bad) w->sink->transform(w->row, NULL, w->cols, (char *)w->b->out + r * w->obytes, w->row + w->cols);
    }
    return NULL;
}

/* Where read_npy's reading stands: the rows of the file, and the next row
 * to read, in batches of B rows of rb bytes; the hash of what was read. */
typedef struct {
    FILE *f;
    sha256_ctx sha;
    uint64_t rows, next;
    size_t B, rb;
    const npy_batch *tohash; /* for npy_hash */
} npy_reader;

/* The next batch into b, not hashed yet; 0 when the array is read or the
 * file ended. */
static int npy_fill(npy_reader *rd, npy_batch *b)
{
    if (rd->next >= rd->rows) return 0;
    const size_t want = rd->rows - rd->next < rd->B ? (size_t)(rd->rows - rd->next) : rd->B;
    const size_t got = fread(b->raw, 1, want * rd->rb, rd->f);
    b->first = rd->next;
    b->bytes = got;
    b->rows = got / rd->rb;
    b->truncated = b->rows < want;
    rd->next = b->truncated ? rd->rows : rd->next + want; /* nothing after a short read */
    return 1;
}

/* rd->tohash into the hash: batches go in in the order they were read. */
static void *npy_hash(void *arg)
{
    npy_reader *rd = arg;
    sha256_update(&rd->sha, rd->tohash->raw, rd->tohash->bytes);
    return NULL;
}

/* b's rows into the sink, in order, as push_checked would. */
static fd_status npy_push(row_feed *feed, const npy_batch *b, uint64_t rows, int drop_nan, const char *path,
                          size_t obytes)
{
    for (size_t r = 0; r < b->rows; r++) {
        const uint64_t row = b->first + r;
        if (b->bad[r]) {
            if (!drop_nan)
                return fd_fail(FD_ERR_INPUT, "%s: row %llu, column %u is NaN or infinite%s", path,
                               (unsigned long long)row, b->bad[r], feed->sink->nan_hint ? feed->sink->nan_hint : "");
            FD_TRY(feed->sink->drop(feed->sink->ctx));
            continue;
        }
        feed->pushed++;
        FD_TRY(feed->sink->push(feed->sink->ctx, (const char *)b->out + r * obytes, row));
    }
    if (b->truncated)
        return fd_fail(FD_ERR_INPUT, "%s: truncated: row %llu of %llu is missing", path,
                       (unsigned long long)(b->first + b->rows), (unsigned long long)rows);
    return FD_OK;
}

/* Rows go in batches of about 4 MiB through three stages: while the
 * workers convert, check and transform batch k + 1 (for spearman, the
 * ranking) and one more thread hashes it, the main thread hands batch k to
 * the sink and reads batch k + 2.  The sink sees the rows, and any error,
 * in input order, as a row-at-a-time reader would. */
static fd_status read_npy(const char *path, int drop_nan, const fd_matrix_sink *sink)
{
    fd_status st = FD_OK;
    row_feed feed = {0};
    npy_batch bs[3];
    memset(bs, 0, sizeof bs);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const int T = ncpu < 1 ? 1 : ncpu > 8 ? 8 : (int)ncpu;
    npy_slice sl[8];
    memset(sl, 0, sizeof sl);
    pthread_t th[8];
    npy_reader rd = {0}; /* hashed as read: the file is read once */
    sha256_init(&rd.sha);
    FILE *f = rd.f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    npy_header h;
    FD_TRY_GOTO(npy_read_header(f, path, &h, &rd.sha), st, done);
    if (h.ndim != 2) {
        st = fd_fail(FD_ERR_INPUT, "%s: only 2-D arrays are read (this one has %u dimensions)", path, h.ndim);
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
    const unsigned long long rows = h.shape[0], cols = h.shape[1];
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
    const size_t rb = (size_t)npy_types[ti].size * cols, obytes = sink->row_bytes((uint32_t)cols);
    size_t B = ((size_t)4 << 20) / rb;
    if (B < 1) B = 1;
    if (B > rows) B = rows;
    for (int k = 0; k < 3; k++) {
        FD_ALLOC_GOTO(bs[k].raw, B * rb, st, done);
        FD_ALLOC_GOTO(bs[k].bad, B, st, done);
        if (!(bs[k].out = malloc(B * obytes + 1))) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    }
    for (int t = 0; t < T; t++) FD_ALLOC_GOTO(sl[t].row, 2 * cols + 1, st, done);
    rd.rows = rows;
    rd.B = B;
    rd.rb = rb;
    int nb = npy_fill(&rd, &bs[0]); /* batches read */
    rd.tohash = &bs[0];
    npy_hash(&rd);
    { /* batch 0 by the main thread alone, to get going */
        npy_slice w = {&bs[0], 0, bs[0].rows, ti, (uint32_t)cols, obytes, sink, sl[0].row};
        npy_transform(&w);
    }
    nb += npy_fill(&rd, &bs[1]);
    for (int k = 0; k < nb; k++) {
        /* Workers on batch k + 1 while this thread pushes batch k and reads k + 2. */
        int started = 0, hashing = 0;
        pthread_t hasher;
        npy_batch *nx = k + 1 < nb ? &bs[(k + 1) % 3] : NULL;
        if (nx) {
            const size_t per = (nx->rows + (size_t)T - 1) / (size_t)T;
            for (int t = 0; t < T; t++) {
                const size_t r0 = (size_t)t * per < nx->rows ? (size_t)t * per : nx->rows;
                const size_t r1 = r0 + per < nx->rows ? r0 + per : nx->rows;
                sl[t] = (npy_slice){nx, r0, r1, ti, (uint32_t)cols, obytes, sink, sl[t].row};
            }
            for (; started < T; started++)
                if (pthread_create(&th[started], NULL, npy_transform, &sl[started]) != 0) break;
            rd.tohash = nx;
            hashing = pthread_create(&hasher, NULL, npy_hash, &rd) == 0;
        }
        st = npy_push(&feed, &bs[k % 3], rows, drop_nan, path, obytes);
        if (st == FD_OK) nb += npy_fill(&rd, &bs[(k + 2) % 3]);
        for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
        for (int t = started; nx && t < T; t++) npy_transform(&sl[t]); /* threads that did not start */
        if (hashing) pthread_join(hasher, NULL);
        else if (nx) npy_hash(&rd);
        if (st != FD_OK) goto done;
    }
    if (feed.pushed == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no data rows", path); goto done; }
    /* Bytes after the array (there should be none) are part of the file. */
    char tail[4096], hex[65];
    while (hashed_read(tail, sizeof tail, f, &rd.sha) > 0) {}
    sha256_final_hex(&rd.sha, hex);
    sink->finish(sink->ctx, hex);
done:
    if (f) fclose(f);
    for (int k = 0; k < 3; k++) {
        free(bs[k].raw);
        free(bs[k].out);
        free(bs[k].bad);
    }
    for (int t = 0; t < 8; t++) free(sl[t].row);
    feed_free(&feed);
    return st;
}

/* ---------------- HDF5: FILE.h5:/dataset ---------------- */

static fd_status read_h5(const char *spec, int drop_nan, const fd_matrix_sink *sink)
{
    fd_status st = FD_OK;
    row_feed feed = {0};
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
    FD_TRY_GOTO(feed_begin(&feed, sink, (uint32_t)dims[1], dims[0]), st, done);
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
        for (hsize_t i = 0; i < cnt[0]; i++)
            FD_TRY_GOTO(push_checked(&feed, buf + i * dims[1], r + i, drop_nan, spec), st, done);
    }
    if (feed.pushed == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no data rows", spec); goto done; }
    char hex[65];
    FD_TRY_GOTO(sha256_file(path, hex), st, done);
    sink->finish(sink->ctx, hex);
done:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
    if (f >= 0) H5Fclose(f);
    free(path);
    free(buf);
    feed_free(&feed);
    return st;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcasecmp(s + a - b, suf);
}

fd_status fd_matrix_read(const char *spec, int drop_nan, const fd_matrix_sink *sink)
{
    if (strstr(spec, ".h5:") || strstr(spec, ".hdf5:")) {
        if (!strstr(spec, ".h5:")) return fd_fail(FD_ERR_USAGE, "%s: name HDF5 inputs FILE.h5:/dataset", spec);
        return read_h5(spec, drop_nan, sink);
    }
    if (ends_with(spec, ".npy")) return read_npy(spec, drop_nan, sink);
    return fd_matrix_read_text(spec, ends_with(spec, ".csv"), drop_nan, sink);
}
