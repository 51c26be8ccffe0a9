/* Binary matrices (NumPy .npy, HDF5 FILE.h5:/dataset) and the choice of
 * reader by name; text and CSV are in matrix_text.c. */
#include "matrix_read.h"

#include "../common/sha256.h"
#include "h5util.h"
#include "npy.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

static fd_status read_npy(const char *path, int drop_nan, const fd_matrix_sink *sink)
{
    fd_status st = FD_OK;
    row_feed feed = {0};
    unsigned char *raw = NULL;
    double *row = NULL;
    sha256_ctx sha; /* hashed as read: the file is read once */
    sha256_init(&sha);
    FILE *f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    npy_header h;
    FD_TRY_GOTO(npy_read_header(f, path, &h, &sha), st, done);
    if (h.ndim != 2) {
        st = fd_fail(FD_ERR_INPUT, "%s: only 2-D arrays are read (this one has %u dimensions)", path, h.ndim);
        goto done;
    }
    if (h.fortran) {
        st = fd_fail(FD_ERR_INPUT, "%s: Fortran-ordered array; save it with np.ascontiguousarray", path);
        goto done;
    }
    static const struct { const char *descr; int size; } types[] = {
        {"<f8", 8}, {"<f4", 4}, {"<i8", 8}, {"<i4", 4}, {"<i2", 2}, {"|i1", 1}, {"<u8", 8}, {"<u4", 4}, {"<u2", 2}, {"|u1", 1}};
    int ti = -1;
    for (int i = 0; i < (int)(sizeof types / sizeof *types); i++)
        if (!strcmp(h.descr, types[i].descr)) ti = i;
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
    if (rows > npy_bytes_held(f) / ((uint64_t)types[ti].size * cols)) {
        st = fd_fail(FD_ERR_INPUT, "%s: truncated: the header promises %llu rows of %llu values, the file holds fewer", path,
                     rows, cols);
        goto done;
    }
    FD_TRY_GOTO(feed_begin(&feed, sink, (uint32_t)cols, rows), st, done);
    size_t es = (size_t)types[ti].size, rb = es * cols;
    FD_ALLOC_GOTO(raw, rb, st, done);
    FD_ALLOC_GOTO(row, cols, st, done);
    for (unsigned long long r = 0; r < rows; r++) {
        if (hashed_read(raw, rb, f, &sha) != rb) {
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
        FD_TRY_GOTO(push_checked(&feed, row, r, drop_nan, path), st, done);
    }
    if (feed.pushed == 0) { st = fd_fail(FD_ERR_INPUT, "%s: no data rows", path); goto done; }
    /* Bytes after the array (there should be none) are part of the file. */
    char tail[4096], hex[65];
    while (hashed_read(tail, sizeof tail, f, &sha) > 0) {}
    sha256_final_hex(&sha, hex);
    sink->finish(sink->ctx, hex);
done:
    if (f) fclose(f);
    free(raw);
    free(row);
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
