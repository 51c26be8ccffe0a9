/* SPDX-License-Identifier: BSD-3-Clause */
#include "h5util.h"

#include "../common/atomicfile.h"
#include "../common/env.h"
#include "../common/par_rows.h"
#include "../common/writeback.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void h5u_init(void)
{
    /* HDF5 closes what is still open at exit, and 1.10 crashed doing so
     * for a file whose flush had failed (a full disk, `ulimit -f`): main
     * closes the library itself, after a run that succeeded.  This call
     * does not start the library. */
    H5dont_atexit();
}

static atomic_int h5_in_use;

void h5u_start(void)
{
    atomic_store(&h5_in_use, 1);
    h5u_quiet();
}

void h5u_quiet(void)
{
    static _Thread_local int quiet;
    if (quiet || !atomic_load(&h5_in_use)) return;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    quiet = 1;
}

/* Data in chunks with HDF5's Fletcher-32 checksum (a filter every HDF5
 * and h5py reads without plugins): a damaged chunk reads as an error, not
 * as other numbers.  About 3% of a lattice run's time writing
 * T10I4D100K's 47 MB; bench/h5-write.sh times the write); FD_H5_CHECKSUM=off leaves
 * it out. */
static int checksummed(void) { return !fd_env_switched("FD_H5_CHECKSUM"); }

/* --compress: shuffle then deflate (zlib), the filters every HDF5 build,
 * h5py and h5dump have; the checksum is of the compressed chunk. */
static int deflate_level;
void h5u_set_deflate(int level) { deflate_level = level; }

fd_status h5u_chunked_dcpl(hid_t *dcpl, int rank, const hsize_t *chunk)
{
    fd_status st = FD_OK;
    H5_CHECK_GOTO(*dcpl = H5Pcreate(H5P_DATASET_CREATE), st, done);
    H5_CHECK_GOTO(H5Pset_chunk(*dcpl, rank, chunk), st, done);
    if (deflate_level > 0) {
        if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
            return fd_fail(FD_ERR_USAGE, "--compress: this HDF5 library has no deflate filter");
        H5_CHECK_GOTO(H5Pset_shuffle(*dcpl), st, done);
        H5_CHECK_GOTO(H5Pset_deflate(*dcpl, (unsigned)deflate_level), st, done);
    }
    if (checksummed()) H5_CHECK_GOTO(H5Pset_fletcher32(*dcpl), st, done);
done:
    return st;
}

/* Room in the dataset's chunk cache for the whole chunk being appended
 * to.  HDF5's default cache is 1 MiB a dataset: a larger chunk (2 MiB of
 * 64-bit offsets) is then written out, checksummed, read back and
 * verified at every append that touches it, which took 22% of a
 * checkpointed lattice run on T10I4D100K (a segment sees many small
 * appends); with the chunk cached it is written once, when full. */
static hid_t append_dapl(hid_t filetype, uint64_t chunk)
{
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (dapl < 0) return dapl;
    const size_t bytes = (size_t)chunk * H5Tget_size(filetype) + ((size_t)64 << 10);
    if (H5Pset_chunk_cache(dapl, 101, bytes > ((size_t)1 << 20) ? bytes : ((size_t)1 << 20), 1.0) < 0) {
        H5Pclose(dapl);
        return -1;
    }
    return dapl;
}

/* uint32 values stored as 16-bit unsigned (a lattice's ids where every id
 * fits) are narrowed by h5u_app_append itself: HDF5's own conversion,
 * element by element, was 3% of a one-thread mushroom run's instructions
 * (bench/results/h5-write-history.txt). */
static int narrowing(hid_t filetype, hid_t memtype)
{
    return H5Tequal(memtype, H5T_NATIVE_UINT32) > 0 && H5Tget_class(filetype) == H5T_INTEGER &&
           H5Tget_size(filetype) == 2 && H5Tget_sign(filetype) == H5T_SGN_NONE;
}

fd_status h5u_app_create(h5u_app *a, hid_t loc, const char *name, hid_t filetype, hid_t memtype, uint64_t chunk)
{
    fd_status st = FD_OK;
    hid_t space = -1, dcpl = -1, dapl = -1;
    hsize_t dims = 0, maxdims = H5S_UNLIMITED, ch = chunk ? chunk : 1;
    a->ds = -1;
    a->memtype = memtype;
    a->n = 0;
    a->buf = NULL;
    a->buf_cap = 0;
    H5_CHECK_GOTO(space = H5Screate_simple(1, &dims, &maxdims), st, done);
    a->narrow = narrowing(filetype, memtype);
    FD_TRY_GOTO(h5u_chunked_dcpl(&dcpl, 1, &ch), st, done);
    /* Every element up to the extent is written before it is read, so the
     * chunks need no fill (zeroing them was 2% of a mushroom run). */
    H5_CHECK_GOTO(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), st, done);
    H5_CHECK_GOTO(dapl = append_dapl(filetype, ch), st, done);
    H5_CHECK_GOTO(a->ds = H5Dcreate2(loc, name, filetype, space, H5P_DEFAULT, dcpl, dapl), st, done);
done:
    if (dapl >= 0) H5Pclose(dapl);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (space >= 0) H5Sclose(space);
    return st;
}

fd_status h5u_app_open(h5u_app *a, hid_t loc, const char *name, hid_t memtype)
{
    fd_status st = FD_OK;
    hid_t space = -1, type = -1;
    hsize_t dims = 0;
    a->memtype = memtype;
    a->n = 0;
    a->buf = NULL;
    a->buf_cap = 0;
    H5_CHECK_GOTO(a->ds = H5Dopen2(loc, name, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(type = H5Dget_type(a->ds), st, done);
    a->narrow = narrowing(type, memtype);
    H5_CHECK_GOTO(space = H5Dget_space(a->ds), st, done);
    if (H5Sget_simple_extent_ndims(space) != 1) {
        st = fd_fail(FD_ERR_INPUT, "%s is not a 1-D dataset", name);
        goto done;
    }
    H5_CHECK_GOTO(H5Sget_simple_extent_dims(space, &dims, NULL), st, done);
    a->n = dims;
done:
    if (type >= 0) H5Tclose(type);
    if (space >= 0) H5Sclose(space);
    return st;
}

fd_status h5u_take_over(const char *from, const char *tmp, const char *const *dsets, const char *const *attrs,
                        hid_t *f)
{
    fd_status st = FD_OK;
    *f = -1;
    if (rename(from, tmp) != 0)
        return fd_fail(FD_ERR_IO, "%s: cannot take it over as %s: %s", from, tmp, strerror(errno));
    *f = H5Fopen(tmp, H5F_ACC_RDWR, H5P_DEFAULT);
    if (*f < 0) return fd_fail(FD_ERR_IO, "%s: cannot reopen the HDF5 file", tmp);
    for (size_t k = 0; dsets && dsets[k]; k++)
        if (H5Lexists(*f, dsets[k], H5P_DEFAULT) > 0) H5_CHECK_GOTO(H5Ldelete(*f, dsets[k], H5P_DEFAULT), st, done);
    for (size_t k = 0; attrs && attrs[k]; k++)
        if (H5Aexists(*f, attrs[k]) > 0) H5_CHECK_GOTO(H5Adelete(*f, attrs[k]), st, done);
done:
    return st;
}

fd_status h5u_app_append(h5u_app *a, const void *data, uint64_t n)
{
    fd_status st = FD_OK;
    hid_t fs = -1, ms = -1;
    if (n == 0) return FD_OK;
    hsize_t newsize = a->n + n, start = a->n, count = n;
    hid_t memtype = a->memtype;
    if (a->narrow) {
        const uint32_t *v = data;
        uint32_t over = 0;
        if (n > a->buf_cap) {
            uint16_t *b = realloc(a->buf, n * sizeof *b);
            if (!b) {
                st = fd_fail(FD_ERR_NOMEM, "out of memory");
                goto done;
            }
            a->buf = b;
            a->buf_cap = n;
        }
        uint16_t *narrow = a->buf;
        for (uint64_t i = 0; i < n; i++) {
            over |= v[i] >> 16;
            narrow[i] = (uint16_t)v[i];
        }
        if (over) {
            st = fd_fail(FD_ERR_INTERNAL, "a value past 65535 for a 16-bit dataset");
            goto done;
        }
        data = narrow;
        memtype = H5T_NATIVE_UINT16;
    }
    H5_CHECK_GOTO(H5Dset_extent(a->ds, &newsize), st, done);
    H5_CHECK_GOTO(fs = H5Dget_space(a->ds), st, done);
    H5_CHECK_GOTO(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL), st, done);
    H5_CHECK_GOTO(ms = H5Screate_simple(1, &count, NULL), st, done);
    H5_CHECK_GOTO(H5Dwrite(a->ds, memtype, ms, fs, H5P_DEFAULT, data), st, done);
    a->n += n;
done:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return st;
}

fd_status h5u_app_close(h5u_app *a)
{
    fd_status st = FD_OK;
    if (a->ds >= 0) H5_CHECK_GOTO(H5Dclose(a->ds), st, done);
done:
    a->ds = -1;
    free(a->buf);
    a->buf = NULL;
    a->buf_cap = 0;
    return st;
}

static fd_status attr_write(hid_t loc, const char *name, hid_t type, const void *v)
{
    fd_status st = FD_OK;
    hid_t space = -1, at = -1;
    H5_CHECK_GOTO(space = H5Screate(H5S_SCALAR), st, done);
    if (H5Aexists(loc, name) > 0) H5_CHECK_GOTO(H5Adelete(loc, name), st, done);
    H5_CHECK_GOTO(at = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(H5Awrite(at, type, v), st, done);
done:
    if (at >= 0) H5Aclose(at);
    if (space >= 0) H5Sclose(space);
    return st;
}

/* Strings are stored fixed-length (UTF-8, NUL-padded to the longest),
 * not variable-length: a variable-length string lives in the file's
 * global heap, which carries no checksum, and HDF5 1.10 copied past its
 * buffer reading one whose length a flipped byte had changed
 * (tests/byteflip.sh).  A fixed-length attribute lives in its object's
 * header, which the 1.10 format checksums. */
static hid_t fixed_str_type(size_t len)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    if (H5Tset_size(t, len ? len : 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0 ||
        H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

fd_status h5u_attr_str(hid_t loc, const char *name, const char *v)
{
    fd_status st = FD_OK;
    hid_t t = -1;
    H5_CHECK_GOTO(t = fixed_str_type(strlen(v)), st, done);
    st = attr_write(loc, name, t, v);
done:
    if (t >= 0) H5Tclose(t);
    return st;
}

fd_status h5u_attr_u64(hid_t loc, const char *name, uint64_t v) { return attr_write(loc, name, H5T_NATIVE_UINT64, &v); }
fd_status h5u_attr_f64(hid_t loc, const char *name, double v) { return attr_write(loc, name, H5T_NATIVE_DOUBLE, &v); }

static inline uint32_t fold16(uint32_t s) { return (s & 0xffff) + (s >> 16); }

/* HDF5's loop (H5checksum.c) adds one big-endian 16-bit word at a time,
 * sum1 += w, sum2 += sum1, and folds both every 360 words.  Over a block
 * of n words that is sum1 + Σw and sum2 + n·sum1 + Σ(n-i)·w_i, the same
 * values modulo 2^32 (so the same folds), without the chain from one
 * word to the next. */
uint32_t h5u_fletcher32(const void *data, size_t len)
{
    const uint8_t *d = data;
    size_t words = len / 2;
    uint32_t s1 = 0, s2 = 0;
    while (words) {
        const uint32_t n = words > 360 ? 360 : (uint32_t)words;
        uint32_t a = 0, b = 0;
        for (uint32_t i = 0; i < n; i++) {
            const uint32_t w = (uint32_t)d[2 * i] << 8 | d[2 * i + 1];
            a += w;
            b += (n - i) * w;
        }
        s2 = fold16(s2 + n * s1 + b);
        s1 = fold16(s1 + a);
        d += 2 * (size_t)n;
        words -= n;
    }
    if (len % 2) {
        s1 += (uint32_t)*d << 8;
        s2 += s1;
        s1 = fold16(s1);
        s2 = fold16(s2);
    }
    s1 = fold16(s1);
    s2 = fold16(s2);
    return s2 << 16 | s1;
}

static int write_threads = 1;
void h5u_set_threads(int threads) { write_threads = threads > 0 ? threads : 1; }

typedef struct {
    const uint8_t *src;
    size_t chunk_bytes;
    uint32_t *sum;
} chunk_sums;

static fd_status sum_chunks(void *arg, uint64_t c0, uint64_t c1, int thread)
{
    const chunk_sums *c = arg;
    (void)thread;
    for (uint64_t k = c0; k < c1; k++) c->sum[k] = h5u_fletcher32(c->src + k * c->chunk_bytes, c->chunk_bytes);
    return FD_OK;
}

/* The checksummed chunks of a whole 1-D dataset written as the filter
 * would write them (the data, zeros past the end in the last chunk, the
 * Fletcher-32 little-endian), by H5Dwrite_chunk: HDF5's filter sums one
 * chunk at a time on one thread, which was half of writing dpc.h5
 * (bench/results/h5-write-history.txt); here the full chunks' sums are
 * found on the job's threads first.  Only for data stored as it is in
 * memory (no conversion) and no compression. */
static fd_status write_chunks_direct(hid_t ds, size_t elem, const void *v, uint64_t n, uint64_t chunk)
{
    fd_status st = FD_OK;
    const size_t cb = (size_t)chunk * elem, total = (size_t)n * elem;
    const uint64_t nfull = n / chunk, nchunks = (n + chunk - 1) / chunk;
    chunk_sums cs = {v, cb, NULL};
    uint8_t *buf = NULL;
    FD_ALLOC_GOTO(cs.sum, nfull + 1, st, done);
    FD_ALLOC_GOTO(buf, cb + 4, st, done);
    FD_TRY_GOTO(par_rows_chunk(write_threads, 0, nfull, 1, sum_chunks, &cs, NULL), st, done);
    for (uint64_t k = 0; k < nchunks; k++) {
        const size_t off = (size_t)k * cb, bytes = total - off < cb ? total - off : cb;
        memcpy(buf, cs.src + off, bytes);
        uint32_t sum;
        if (k < nfull) {
            sum = cs.sum[k];
        } else {
            memset(buf + bytes, 0, cb - bytes);
            sum = h5u_fletcher32(buf, cb);
        }
        for (int b = 0; b < 4; b++) buf[cb + (size_t)b] = (uint8_t)(sum >> (8 * b));
        const hsize_t at = (hsize_t)k * chunk;
        H5_CHECK_GOTO(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, &at, cb + 4, buf), st, done);
    }
done:
    free(cs.sum);
    free(buf);
    return st;
}

/* Whether h5u_write_1d may write the chunks itself: checksummed, not
 * compressed, and stored exactly as held (FD_H5_DIRECT=off: never). */
static int direct_chunks(hid_t filetype, hid_t memtype)
{
    return checksummed() && deflate_level == 0 && H5Tequal(filetype, memtype) > 0 &&
           H5Tget_class(filetype) != H5T_STRING && !fd_env_switched("FD_H5_DIRECT");
}

fd_status h5u_write_1d(hid_t loc, const char *name, hid_t filetype, hid_t memtype, const void *v, uint64_t n)
{
    fd_status st = FD_OK;
    hid_t space = -1, ds = -1, dcpl = -1;
    hsize_t dims = n, chunk = n < ((hsize_t)1 << 18) ? n : ((hsize_t)1 << 18);
    H5_CHECK_GOTO(space = H5Screate_simple(1, &dims, NULL), st, done);
    /* Checksummed chunks (an empty dataset cannot be chunked). */
    if (n) FD_TRY_GOTO(h5u_chunked_dcpl(&dcpl, 1, &chunk), st, done);
    H5_CHECK_GOTO(ds = H5Dcreate2(loc, name, filetype, space, H5P_DEFAULT, n ? dcpl : H5P_DEFAULT, H5P_DEFAULT), st,
                  done);
    if (n && direct_chunks(filetype, memtype))
        FD_TRY_GOTO(write_chunks_direct(ds, H5Tget_size(filetype), v, n, chunk), st, done);
    else if (n)
        H5_CHECK_GOTO(H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), st, done);
done:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (ds >= 0) H5Dclose(ds);
    if (space >= 0) H5Sclose(space);
    return st;
}

fd_status h5u_write_strings(hid_t loc, const char *name, char *const *s, uint64_t n)
{
    fd_status st = FD_OK;
    hid_t t = -1;
    size_t width = 1;
    char *buf = NULL;
    for (uint64_t i = 0; i < n; i++)
        if (s[i] && strlen(s[i]) > width) width = strlen(s[i]);
    FD_ALLOC_GOTO(buf, n * width + 1, st, done);
    for (uint64_t i = 0; i < n; i++)
        if (s[i]) memcpy(buf + i * width, s[i], strlen(s[i]));
    H5_CHECK_GOTO(t = fixed_str_type(width), st, done);
    st = h5u_write_1d(loc, name, t, t, buf, n);
done:
    if (t >= 0) H5Tclose(t);
    free(buf);
    return st;
}

fd_status h5u_read_strings(hid_t loc, const char *path, const char *name, uint64_t n, char ***out)
{
    fd_status st = FD_OK;
    hid_t d = -1, t = -1, mt = -1;
    char *buf = NULL, **s = NULL;
    size_t width = 0;
    *out = NULL;
    FD_TRY(h5u_expect_len(loc, path, name, n, "the rows"));
    H5_CHECK_GOTO(d = H5Dopen2(loc, name, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(t = H5Dget_type(d), st, done);
    if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) != 0 || (width = H5Tget_size(t)) == 0 ||
        width > 65536) {
        st = fd_fail(FD_ERR_INPUT, "%s: /%s is not a dataset of fixed-length strings", path, name);
        goto done;
    }
    H5_CHECK_GOTO(mt = fixed_str_type(width), st, done);
    FD_ALLOC_GOTO(buf, n * width + 1, st, done);
    FD_ALLOC_GOTO(s, n ? n : 1, st, done);
    memset(s, 0, (n ? n : 1) * sizeof *s);
    if (n) H5_CHECK_GOTO(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), st, done);
    for (uint64_t i = 0; i < n; i++)
        if (!(s[i] = strndup(buf + i * width, width))) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    *out = s;
    s = NULL;
done:
    for (uint64_t i = 0; s && i < n; i++) free(s[i]);
    free(s);
    free(buf);
    if (mt >= 0) H5Tclose(mt);
    if (t >= 0) H5Tclose(t);
    if (d >= 0) H5Dclose(d);
    return st;
}

static fd_status open_attr(hid_t loc, const char *name, hid_t *at)
{
    if (H5Aexists(loc, name) <= 0) return fd_fail(FD_ERR_INPUT, "attribute '%s' is missing", name);
    *at = H5Aopen(loc, name, H5P_DEFAULT);
    if (*at < 0) return fd_fail(FD_ERR_INPUT, "attribute '%s' cannot be opened", name);
    return FD_OK;
}

/* Variable-length strings are what files of format_version 1 hold. */
static hid_t vlen_str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

fd_status h5u_read_attr_str(hid_t loc, const char *name, char *buf, size_t cap)
{
    fd_status st = FD_OK;
    hid_t at = -1, t = -1, ft = -1, sp = -1;
    char *v = NULL;
    FD_TRY(open_attr(loc, name, &at));
    H5_CHECK_GOTO(ft = H5Aget_type(at), st, done);
    H5_CHECK_GOTO(sp = H5Aget_space(at), st, done);
    if (H5Tget_class(ft) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) {
        st = fd_fail(FD_ERR_INPUT, "attribute '%s' is not a string", name);
        goto done;
    }
    /* Read in the file's character set: HDF5 converts between none. */
    const H5T_cset_t cset = H5Tget_cset(ft);
    if (H5Tis_variable_str(ft) > 0) {
        H5_CHECK_GOTO(t = vlen_str_type(), st, done);
        H5_CHECK_GOTO(H5Tset_cset(t, cset), st, done);
        H5_CHECK_GOTO(H5Aread(at, t, &v), st, done);
        snprintf(buf, cap, "%s", v ? v : "");
        H5free_memory(v);
        goto done;
    }
    const size_t size = H5Tget_size(ft);
    if (size == 0 || size > ((size_t)1 << 24)) {
        st = fd_fail(FD_ERR_INPUT, "attribute '%s' is a string of %zu bytes", name, size);
        goto done;
    }
    FD_ALLOC_GOTO(v, size + 1, st, done);
    H5_CHECK_GOTO(t = fixed_str_type(size), st, done);
    H5_CHECK_GOTO(H5Tset_cset(t, cset), st, done);
    H5_CHECK_GOTO(H5Aread(at, t, v), st, done);
    v[size] = 0;
    snprintf(buf, cap, "%s", v);
    free(v);
done:
    if (t >= 0) H5Tclose(t);
    if (ft >= 0) H5Tclose(ft);
    if (sp >= 0) H5Sclose(sp);
    H5Aclose(at);
    return st;
}

/* A number: one integer or floating-point value (an attribute edited
 * into a string or an array is refused, not converted or overrun). */
static fd_status read_attr_num(hid_t loc, const char *name, hid_t type, void *v)
{
    fd_status st = FD_OK;
    hid_t at = -1, ft = -1, sp = -1;
    FD_TRY(open_attr(loc, name, &at));
    H5_CHECK_GOTO(ft = H5Aget_type(at), st, done);
    H5_CHECK_GOTO(sp = H5Aget_space(at), st, done);
    const H5T_class_t cls = H5Tget_class(ft);
    if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || H5Sget_simple_extent_npoints(sp) != 1) {
        st = fd_fail(FD_ERR_INPUT, "attribute '%s' is not a single number", name);
        goto done;
    }
    H5_CHECK_GOTO(H5Aread(at, type, v), st, done);
done:
    if (sp >= 0) H5Sclose(sp);
    if (ft >= 0) H5Tclose(ft);
    H5Aclose(at);
    return st;
}

fd_status h5u_read_attr_u64(hid_t loc, const char *name, uint64_t *v) { return read_attr_num(loc, name, H5T_NATIVE_UINT64, v); }
fd_status h5u_read_attr_f64(hid_t loc, const char *name, double *v) { return read_attr_num(loc, name, H5T_NATIVE_DOUBLE, v); }

fd_status h5u_len(hid_t loc, const char *name, uint64_t *n)
{
    fd_status st = FD_OK;
    hid_t ds = -1, sp = -1;
    hsize_t dims[1];
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return fd_fail(FD_ERR_INPUT, "dataset '%s' is missing", name);
    H5_CHECK_GOTO(ds = H5Dopen2(loc, name, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(sp = H5Dget_space(ds), st, done);
    if (H5Sget_simple_extent_ndims(sp) != 1) {
        st = fd_fail(FD_ERR_INPUT, "dataset '%s' is not one-dimensional", name);
        goto done;
    }
    H5_CHECK_GOTO(H5Sget_simple_extent_dims(sp, dims, NULL), st, done);
    *n = dims[0];
done:
    if (sp >= 0) H5Sclose(sp);
    if (ds >= 0) H5Dclose(ds);
    return st;
}

fd_status h5u_read_range(hid_t loc, const char *name, hid_t memtype, uint64_t start, uint64_t n, void *out)
{
    fd_status st = FD_OK;
    hid_t ds = -1, fs = -1, ms = -1;
    hsize_t s = start, c = n, dims[1];
    if (n == 0) return FD_OK;
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return fd_fail(FD_ERR_INPUT, "dataset '%s' is missing", name);
    H5_CHECK_GOTO(ds = H5Dopen2(loc, name, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(fs = H5Dget_space(ds), st, done);
    /* Checked here, so that a caller's sizes from a file's attributes
     * never read past what the dataset holds. */
    if (H5Sget_simple_extent_ndims(fs) != 1 || H5Sget_simple_extent_dims(fs, dims, NULL) < 0 || start > dims[0] ||
        n > dims[0] - start) {
        st = fd_fail(FD_ERR_INPUT, "dataset '%s' is not one-dimensional or has fewer than the %llu entries read",
                     name, (unsigned long long)(start + n));
        goto done;
    }
    H5_CHECK_GOTO(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &s, NULL, &c, NULL), st, done);
    H5_CHECK_GOTO(ms = H5Screate_simple(1, &c, NULL), st, done);
    H5_CHECK_GOTO(H5Dread(ds, memtype, ms, fs, H5P_DEFAULT, out), st, done);
done:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
    return st;
}

fd_status h5u_app_add(h5u_app *a, uint64_t delta)
{
    fd_status st = FD_OK;
    hid_t fs = -1, ms = -1;
    uint64_t *buf = NULL;
    const uint64_t slice = (uint64_t)1 << 16;
    if (delta == 0 || a->n == 0) return FD_OK;
    FD_ALLOC_GOTO(buf, a->n < slice ? a->n : slice, st, done);
    H5_CHECK_GOTO(fs = H5Dget_space(a->ds), st, done);
    for (uint64_t s = 0; s < a->n; s += slice) {
        hsize_t start = s, count = a->n - s < slice ? a->n - s : slice;
        H5_CHECK_GOTO(H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &count, NULL), st, done);
        if (ms >= 0) H5Sclose(ms);
        H5_CHECK_GOTO(ms = H5Screate_simple(1, &count, NULL), st, done);
        H5_CHECK_GOTO(H5Dread(a->ds, H5T_NATIVE_UINT64, ms, fs, H5P_DEFAULT, buf), st, done);
        for (hsize_t i = 0; i < count; i++) buf[i] += delta;
        H5_CHECK_GOTO(H5Dwrite(a->ds, H5T_NATIVE_UINT64, ms, fs, H5P_DEFAULT, buf), st, done);
    }
done:
    free(buf);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return st;
}

fd_status h5u_concat(hid_t loc, const char *name, hid_t filetype, const h5u_piece *pc, size_t n)
{
    fd_status st = FD_OK;
    hid_t vspace = -1, sspace = -1, dcpl = -1, ds = -1;
    hsize_t total = 0;
    for (size_t i = 0; i < n; i++) total += pc[i].count;
    H5_CHECK_GOTO(vspace = H5Screate_simple(1, &total, NULL), st, done);
    H5_CHECK_GOTO(dcpl = H5Pcreate(H5P_DATASET_CREATE), st, done);
    /* A virtual dataset without any mapping is not portable across HDF5
     * versions; an empty result is an ordinary empty dataset. */
    hsize_t at = 0;
    for (size_t i = 0; total > 0 && i < n; i++) {
        if (pc[i].count == 0) continue;
        hsize_t slen = pc[i].src_len, sstart = pc[i].start, cnt = pc[i].count;
        H5_CHECK_GOTO(H5Sselect_hyperslab(vspace, H5S_SELECT_SET, &at, NULL, &cnt, NULL), st, done);
        H5_CHECK_GOTO(sspace = H5Screate_simple(1, &slen, NULL), st, done);
        H5_CHECK_GOTO(H5Sselect_hyperslab(sspace, H5S_SELECT_SET, &sstart, NULL, &cnt, NULL), st, done);
        H5_CHECK_GOTO(H5Pset_virtual(dcpl, vspace, pc[i].file, pc[i].dset, sspace), st, done);
        H5Sclose(sspace);
        sspace = -1;
        at += cnt;
    }
    H5_CHECK_GOTO(H5Sselect_all(vspace), st, done);
    H5_CHECK_GOTO(ds = H5Dcreate2(loc, name, filetype, vspace, H5P_DEFAULT, dcpl, H5P_DEFAULT), st, done);
done:
    if (ds >= 0) H5Dclose(ds);
    if (sspace >= 0) H5Sclose(sspace);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (vspace >= 0) H5Sclose(vspace);
    return st;
}

fd_status h5u_commit(hid_t f, const char *tmp, const char *path)
{
    /* complete = 1 last, so that a file cut short never claims it. */
    fd_status st = h5u_attr_u64(f, "complete", 1);
    errno = 0; /* what the last flush's write leaves there is the reason */
    if (H5Fclose(f) < 0 && st == FD_OK) {
        const int e = errno;
        st = fd_fail(FD_ERR_IO, "%s: closing the HDF5 file failed: %s", tmp, e ? strerror(e) : "disk full?");
    }
    if (st == FD_OK && rename(tmp, path) != 0)
        st = fd_fail(FD_ERR_IO, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
    return st;
}

static fd_status out_names(h5u_out *o, const char *path)
{
    o->file = -1;
    o->writeback = NULL;
    o->path = strdup(path);
    o->tmp = fd_tmp_name(path);
    if (o->path && o->tmp) return FD_OK;
    free(o->path);
    free(o->tmp);
    o->path = o->tmp = NULL;
    return fd_fail(FD_ERR_NOMEM, "out of memory");
}

fd_status h5u_out_create(h5u_out *o, const char *path) { return h5u_out_create_for(o, path, path); }

fd_status h5u_out_create_for(h5u_out *o, const char *path, const char *replaces)
{
    FD_TRY(out_names(o, path));
    errno = 0; /* the open's reason, when it is the system's */
    /* The 1.10 format: checksums on the superblock, object headers and
     * chunk indexes, so that a damaged file reads as an error, not as
     * whatever the damage says (HDF5 1.10 and later read it). */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110) < 0) {
        H5Pclose(fapl);
        fapl = -1;
    }
    /* A temporary of ours that a killed process of the same number left
     * goes; a new file is made, never one opened through a link. */
    unlink(o->tmp);
    o->file = H5Fcreate(o->tmp, H5F_ACC_EXCL, H5P_DEFAULT, fapl >= 0 ? fapl : H5P_DEFAULT);
    const int e = errno;
    if (fapl >= 0) H5Pclose(fapl);
    if (o->file >= 0 && replaces) o->writeback = fd_writeback_start(o->tmp, replaces);
    return o->file >= 0 ? FD_OK
                        : fd_fail(FD_ERR_IO, "%s: cannot create the HDF5 file%s%s", o->tmp, e ? ": " : "",
                                  e ? strerror(e) : "");
}

fd_status h5u_out_adopt(h5u_out *o, const char *path, const char *from, const char *const *dsets,
                        const char *const *attrs)
{
    FD_TRY(out_names(o, path));
    const fd_status st = h5u_take_over(from, o->tmp, dsets, attrs, &o->file);
    if (st != FD_OK && access(o->tmp, F_OK) != 0) {
        free(o->tmp);
        o->tmp = NULL; /* not renamed: nothing of ours to remove */
    }
    return st;
}

fd_status h5u_out_commit(h5u_out *o)
{
    const hid_t f = o->file;
    o->file = -1;
    fd_writeback_stop(o->writeback);
    o->writeback = NULL;
    FD_TRY(h5u_commit(f, o->tmp, o->path));
    free(o->tmp);
    o->tmp = NULL; /* renamed: the abort that follows leaves it */
    return FD_OK;
}

void h5u_out_abort(h5u_out *o)
{
    fd_writeback_stop(o->writeback);
    o->writeback = NULL;
    if (o->file >= 0) H5Fclose(o->file);
    if (o->tmp) unlink(o->tmp);
    free(o->tmp);
    free(o->path);
    o->file = -1;
    o->path = o->tmp = NULL;
}

fd_status h5u_shape(hid_t loc, const char *name, int maxdims, int *ndims, uint64_t *dims)
{
    fd_status st = FD_OK;
    hid_t ds = -1, sp = -1;
    hsize_t d[H5S_MAX_RANK];
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0) return fd_fail(FD_ERR_INPUT, "dataset '%s' is missing", name);
    H5_CHECK_GOTO(ds = H5Dopen2(loc, name, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(sp = H5Dget_space(ds), st, done);
    const int nd = H5Sget_simple_extent_ndims(sp);
    if (nd < 0 || nd > maxdims) {
        st = fd_fail(FD_ERR_INPUT, "dataset '%s' has %d dimensions, at most %d expected", name, nd, maxdims);
        goto done;
    }
    H5_CHECK_GOTO(H5Sget_simple_extent_dims(sp, d, NULL), st, done);
    *ndims = nd;
    for (int k = 0; k < nd; k++) dims[k] = d[k];
done:
    if (sp >= 0) H5Sclose(sp);
    if (ds >= 0) H5Dclose(ds);
    return st;
}

fd_status h5u_expect_len(hid_t loc, const char *path, const char *name, uint64_t want, const char *why)
{
    uint64_t n = 0;
    fd_status st = h5u_len(loc, name, &n);
    if (st != FD_OK) {
        fd_errclear();
        return fd_fail(FD_ERR_INPUT, "%s: dataset '%s' is missing or not one-dimensional", path, name);
    }
    if (n != want)
        return fd_fail(FD_ERR_INPUT, "%s: dataset '%s' has %llu entries where %s says %llu", path, name,
                       (unsigned long long)n, why, (unsigned long long)want);
    return FD_OK;
}

fd_status h5u_expect_complete(hid_t f, const char *path, const char *format, uint64_t max_version)
{
    char fmt[64] = "";
    uint64_t complete = 0, version = 1;
    if (h5u_read_attr_str(f, "format", fmt, sizeof fmt) != FD_OK || strcmp(fmt, format) != 0) {
        fd_errclear();
        return fd_fail(FD_ERR_INPUT, "%s: not a '%s' file", path, format);
    }
    if (h5u_read_attr_u64(f, "complete", &complete) != FD_OK || complete != 1) {
        fd_errclear();
        return fd_fail(FD_ERR_INPUT, "%s: not complete (written by a run that did not finish, or damaged)", path);
    }
    if (H5Aexists(f, "format_version") > 0 && (h5u_read_attr_u64(f, "format_version", &version) != FD_OK ||
                                               version > max_version)) {
        fd_errclear();
        return fd_fail(FD_ERR_INPUT, "%s: format_version %llu, newer than this fcbo-dist reads (%llu)", path,
                       (unsigned long long)version, (unsigned long long)max_version);
    }
    return FD_OK;
}

fd_status h5u_read_u64_attr(hid_t f, const char *path, const char *name, uint64_t *v)
{
    if (h5u_read_attr_u64(f, name, v) == FD_OK) return FD_OK;
    fd_errclear();
    return fd_fail(FD_ERR_INPUT, "%s: attribute '%s' is missing or not a number", path, name);
}
