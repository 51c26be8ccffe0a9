/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a dense tensor (see tensor.h). */
#include "tensor.h"

#include "../common/clock.h"
#include "../common/par_rows.h"
#include "../common/inputfile.h"
#include "../common/sha256.h"
#include "../io/rawread.h"
#include "../io/h5util.h"
#include "../io/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

fd_status bcp_tensor_create(bcp_tensor **out, uint32_t order, const uint64_t *dims)
{
    *out = NULL;
    if (order < 1 || order > BCP_MAX_ORDER) return fd_fail(FD_ERR_INPUT, "%u modes (bcp takes up to %d)", order, BCP_MAX_ORDER);
    bcp_tensor *t = calloc(1, sizeof *t);
    if (!t) return fd_fail(FD_ERR_NOMEM, "out of memory");
    t->order = order;
    t->size = 1;
    for (uint32_t n = 0; n < order; n++) {
        t->dims[n] = t->full[n] = dims[n];
        t->size *= dims[n];
    }
    t->full_size = t->size;
    t->x = calloc(t->size ? t->size : 1, sizeof *t->x);
    if (!t->x) {
        const unsigned long long size = t->size;
        free(t);
        return fd_fail(FD_ERR_NOMEM, "out of memory for a tensor of %llu elements", size);
    }
    *out = t;
    return FD_OK;
}

uint64_t bcp_span(const bcp_tensor *t, uint32_t a, uint32_t b)
{
    uint64_t p = 1;
    for (uint32_t n = a; n < b; n++) p *= t->dims[n];
    return p;
}

uint32_t bcp_tree_split(const bcp_tensor *t)
{
    uint32_t best = 1;
    double gap = INFINITY;
    for (uint32_t h = 1; h < t->order; h++) {
        double l = 0, r = 0;
        for (uint32_t n = 0; n < t->order; n++) *(n < h ? &l : &r) += log((double)t->full[n]);
        if (fabs(l - r) < gap) {
            gap = fabs(l - r);
            best = h;
        }
    }
    return best;
}

int bcp_sweep_contract_side(const bcp_tensor *t, uint32_t n)
{
    return n == 0 ? 0 : n == bcp_tree_split(t) ? 1 : -1;
}

void bcp_grid_block(uint64_t k, uint32_t order, const uint64_t *dims, const uint64_t *grid, uint64_t *lo, uint64_t *cnt)
{
    uint64_t v = k;
    for (uint32_t n = order; n-- > 0;) {
        const uint64_t c = v % grid[n];
        v /= grid[n];
        lo[n] = dims[n] * c / grid[n];
        cnt[n] = dims[n] * (c + 1) / grid[n] - lo[n];
    }
}

fd_status bcp_tensor_hash(bcp_tensor *t)
{
    return sha256_file_wait(&t->hashing, t->sha256);
}

void bcp_tensor_destroy(bcp_tensor **pt)
{
    bcp_tensor *t = *pt;
    if (!t) return;
    sha256_file_wait(&t->hashing, NULL); /* stopped, if still running */
    free(t->x);
    free(t->observed);
    free(t->source);
    free(t);
    *pt = NULL;
}

/* The shape's checks, shared by both formats. */
static fd_status check_shape(const char *what, uint32_t order, const uint64_t *dims)
{
    if (order < 3)
        return fd_fail(FD_ERR_INPUT, "%s: %u modes; bcp factorises tensors of 3 modes or more", what, order);
    if (order > BCP_MAX_ORDER) return fd_fail(FD_ERR_INPUT, "%s: %u modes (at most %d)", what, order, BCP_MAX_ORDER);
    uint64_t size = 1;
    for (uint32_t n = 0; n < order; n++) {
        if (dims[n] == 0) return fd_fail(FD_ERR_INPUT, "%s: mode %u is empty", what, n + 1);
        if (dims[n] > (UINT64_MAX / sizeof(double)) / size)
            return fd_fail(FD_ERR_INPUT, "%s: a shape of more than 2^61 elements", what);
        size *= dims[n];
    }
    return FD_OK;
}

/* What a read takes: a tensor's values, NaN as missing too, or a mask's
 * (integer types too). */
enum { READ_VALUES = 0, READ_NAN = 1, READ_MASK = 2 };

/* Elements a task of a threaded pass reads and checks: 1 MiB of doubles,
 * so that the check finds them in cache right after the read, enough to
 * amortise a pread. */
#define READ_CHUNK ((uint64_t)1 << 17)

/* How a read goes: what it takes, its threads, and per chunk of
 * READ_CHUNK the first element it refuses (UINT64_MAX: none), filled by
 * the threaded read as it goes (checked) or by a pass after it. */
typedef struct {
    int how, threads, checked;
    uint64_t *first;
} read_how;

/* What each read refuses (rawread.h): READ_VALUES a value that is not
 * finite, READ_NAN an infinity, READ_MASK a NaN (neither 0 nor another
 * number). */
static int refuse_of(int how) { return how == READ_VALUES ? FD_REFUSE_NONFINITE : how == READ_NAN ? FD_REFUSE_INF : FD_REFUSE_NAN; }
static uint64_t first_bad(const double *x, uint64_t a, uint64_t b, int how)
{
    return fd_first_refused(x, a, b, refuse_of(how));
}

/* The element i (not finite) named by its index in every mode. */
static fd_status not_finite(const char *what, const bcp_tensor *t, uint64_t i)
{
    char idx[256];
    size_t len = 0;
    uint64_t v = i, sub[BCP_MAX_ORDER];
    for (uint32_t n = t->order; n-- > 0;) {
        sub[n] = v % t->dims[n] + t->lo[n];
        v /= t->dims[n];
    }
    for (uint32_t n = 0; n < t->order && len < sizeof idx; n++)
        len += (size_t)snprintf(idx + len, sizeof idx - len, "%s%llu", n ? ", " : "", (unsigned long long)sub[n]);
    return fd_fail(FD_ERR_INPUT, "%s: element (%s) is %g; bcp takes finite values only", what, idx, t->x[i]);
}

/* A .npy's header: its shape and element type, checked against what bcp
 * reads and against the file's size; f left at the data. */
/* The element types read: the tensor's, and a mask's besides. */
enum { ELEM_F8 = 8, ELEM_F4 = 4, ELEM_U1 = 1 };

static fd_status npy_header_check(FILE *f, const char *path, int mask, uint32_t *order, uint64_t *dims, int *elem)
{
    npy_header h;
    FD_TRY(npy_read_header(f, path, &h));
    if (h.fortran) return fd_fail(FD_ERR_INPUT, "%s: Fortran-ordered array; save it with np.ascontiguousarray", path);
    *elem = !strcmp(h.descr, "<f8") ? ELEM_F8 : !strcmp(h.descr, "<f4") ? ELEM_F4
          : mask && (!strcmp(h.descr, "|u1") || !strcmp(h.descr, "|b1")) ? ELEM_U1 : 0;
    if (!*elem)
        return fd_fail(FD_ERR_INPUT, "%s: dtype '%s'; bcp reads float32 or float64 (little-endian)%s", path, h.descr,
                       mask ? ", and a mask also as uint8 or bool" : "");
    if (h.ndim > BCP_MAX_ORDER) return fd_fail(FD_ERR_INPUT, "%s: more than %d modes", path, BCP_MAX_ORDER);
    *order = h.ndim;
    for (uint32_t n = 0; n < h.ndim; n++) dims[n] = h.shape[n];
    FD_TRY(check_shape(path, *order, dims));
    /* The data the header promises must be in the file, before anyone
     * allocates room for it (a fuzzed header asked for 2^63 elements). */
    uint64_t size = h.elem;
    for (uint32_t n = 0; n < *order; n++) size *= dims[n];
    const uint64_t held = npy_bytes_held(f);
    if (held < size)
        return fd_fail(FD_ERR_INPUT, "%s: truncated: the header promises %llu bytes of values, the file holds %llu", path,
                       (unsigned long long)size, (unsigned long long)held);
    return FD_OK;
}

/* ---------------- a contiguous block on T threads ---------------- */

typedef struct {
    int fd;
    const char *path;
    uint64_t data;        /* the file offset of element 0 */
    int elem;             /* ELEM_*: bytes an element, little-endian */
    uint64_t e0, n;       /* the elements [e0, e0 + n) of the file into x */
    double *x;
    read_how *rd;
} raw_read;

/* Whether the block is one run of the file: split along the first mode
 * at most. */
static int block_contiguous(const bcp_tensor *t)
{
    for (uint32_t n = 1; n < t->order; n++)
        if (t->dims[n] != t->full[n]) return 0;
    return 1;
}

static fd_status raw_chunks(void *arg, uint64_t c0, uint64_t c1, int thread)
{
    const raw_read *r = arg;
    const size_t es = (size_t)r->elem;
    void *narrow = NULL;
    (void)thread;
    if (es != 8 && !(narrow = malloc(READ_CHUNK * es))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    fd_status st = FD_OK;
    for (uint64_t c = c0; c < c1 && st == FD_OK; c++) {
        const uint64_t first = c * READ_CHUNK, cnt = r->n - first < READ_CHUNK ? r->n - first : READ_CHUNK;
        char *buf = narrow ? narrow : (char *)(r->x + first);
        const size_t bytes = (size_t)cnt * es;
        const off_t off = (off_t)(r->data + (r->e0 + first) * es);
        const ssize_t got = fd_pread_full(r->fd, buf, bytes, off);
        if (got < 0)
            st = fd_fail(FD_ERR_INPUT, "%s: cannot read: %s", r->path, strerror(errno));
        else if ((size_t)got < bytes)
            st = fd_fail(FD_ERR_INPUT, "%s: truncated: it ends before element %llu", r->path,
                         (unsigned long long)(r->e0 + first + (uint64_t)got / es));
        double *out = r->x + first;
        if (st == FD_OK && r->elem == ELEM_F4)
            for (uint64_t k = 0; k < cnt; k++) out[k] = ((const float *)narrow)[k];
        else if (st == FD_OK && r->elem == ELEM_U1)
            for (uint64_t k = 0; k < cnt; k++) out[k] = ((const uint8_t *)narrow)[k];
        if (st == FD_OK) r->rd->first[c] = first_bad(r->x, first, first + cnt, r->rd->how);
    }
    free(narrow);
    return st;
}

/* The block's elements, one contiguous run of the file at `data` (a .npy
 * past its header, a contiguous HDF5 dataset's raw data), by pread on
 * rd->threads threads, each chunk checked as soon as it is in
 * (bench/results/ab.csv, "tensor-pread"). */
static fd_status read_raw(bcp_tensor *t, const char *path, uint64_t data, int elem, read_how *rd)
{
    raw_read r = {-1, path, data, elem, 0, t->size, t->x, rd};
    for (uint32_t n = 0; n < t->order; n++) r.e0 = r.e0 * t->full[n] + t->lo[n];
    r.fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r.fd < 0) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    const fd_status st =
        par_rows_chunk(rd->threads, 0, (t->size + READ_CHUNK - 1) / READ_CHUNK, 1, raw_chunks, &r, NULL);
    close(r.fd);
    rd->checked = st == FD_OK;
    return st;
}

/* The block, as runs along the last mode (one seek and read each); a
 * block that is one run of the file on threads (read_raw). */
static fd_status read_npy(bcp_tensor *t, const char *path, int mask, read_how *rd)
{
    fd_status st = FD_OK;
    uint32_t order;
    uint64_t dims[BCP_MAX_ORDER];
    int elem;
    void *narrow = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    FD_TRY_GOTO(npy_header_check(f, path, mask, &order, dims, &elem), st, done);
    const int dbl = elem == ELEM_F8;
    const long data = ftell(f);
    if (data < 0) { st = fd_fail(FD_ERR_INPUT, "%s: cannot tell the data's offset: %s", path, strerror(errno)); goto done; }
    if (block_contiguous(t)) {
        st = read_raw(t, path, (uint64_t)data, elem, rd);
        goto done;
    }
    long at = data; /* where the file is */
    const size_t es = (size_t)elem, run = t->dims[order - 1];
    if (!dbl && !(narrow = malloc(run * es + 1))) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    const uint64_t runs = t->size / run;
    for (uint64_t q = 0; q < runs; q++) {
        /* Run q of the block: its index in modes 0..N-2 (C order), then
         * the element it starts at in the file. */
        uint64_t v = q, sub[BCP_MAX_ORDER], e = 0;
        for (uint32_t n = order - 1; n-- > 0;) {
            sub[n] = v % t->dims[n] + t->lo[n];
            v /= t->dims[n];
        }
        for (uint32_t n = 0; n + 1 < order; n++) e = e * t->full[n] + sub[n];
        e = e * t->full[order - 1] + t->lo[order - 1];
        double *out = t->x + q * run;
        /* Seek only where the run does not follow the last one: a whole
         * tensor, or a block split along the first mode only, is then one
         * sequential read through stdio's buffer. */
        const long want = data + (long)(e * es);
        if ((want != at && fseek(f, want, SEEK_SET) != 0) || fread(dbl ? (void *)out : narrow, es, run, f) != run) {
            st = fd_fail(FD_ERR_INPUT, "%s: truncated: fewer than %llu values", path, (unsigned long long)t->full_size);
            goto done;
        }
        at = want + (long)(run * es);
        if (elem == ELEM_F4)
            for (size_t k = 0; k < run; k++) out[k] = ((const float *)narrow)[k];
        else if (elem == ELEM_U1)
            for (size_t k = 0; k < run; k++) out[k] = ((const uint8_t *)narrow)[k];
    }
done:
    fclose(f);
    free(narrow);
    return st;
}

/* FILE.h5:/dataset opened: file, dataset, its shape. */
static fd_status h5_open(const char *spec, int mask, hid_t *f, hid_t *ds, uint32_t *order, uint64_t *dims)
{
    fd_status st = FD_OK;
    hid_t fs = -1, ty = -1;
    const char *colon = strstr(spec, ".h5:");
    char *path = strndup(spec, (size_t)(colon - spec) + 3);
    const char *dset = colon + 4;
    *f = *ds = -1;
    if (!path) return fd_fail(FD_ERR_NOMEM, "out of memory");
    FD_TRY_GOTO(fd_input_check(path), st, done);
    /* No HDF5 error stack on stderr for a file or dataset that is not
     * there: the message below says it. */
    H5E_BEGIN_TRY { *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT); } H5E_END_TRY;
    if (*f < 0) { st = fd_fail(FD_ERR_INPUT, "%s: cannot open as HDF5", path); goto done; }
    htri_t there;
    H5E_BEGIN_TRY { there = H5Lexists(*f, dset, H5P_DEFAULT); } H5E_END_TRY;
    if (there <= 0 || (*ds = H5Dopen2(*f, dset, H5P_DEFAULT)) < 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: no dataset '%s'", path, dset);
        goto done;
    }
    H5_CHECK_GOTO(ty = H5Dget_type(*ds), st, done);
    const H5T_class_t cls = H5Tget_class(ty);
    if (cls != H5T_FLOAT && !(mask && cls == H5T_INTEGER)) {
        st = fd_fail(FD_ERR_INPUT, "%s: dataset '%s' is not %s", path, dset,
                     mask ? "numeric (a mask: integers or floats, 0 where missing)"
                          : "floating point (bcp reads float32 or float64)");
        goto done;
    }
    H5_CHECK_GOTO(fs = H5Dget_space(*ds), st, done);
    const int nd = H5Sget_simple_extent_ndims(fs);
    hsize_t hd[BCP_MAX_ORDER];
    if (nd > BCP_MAX_ORDER) { st = fd_fail(FD_ERR_INPUT, "%s: %d modes (at most %d)", spec, nd, BCP_MAX_ORDER); goto done; }
    H5_CHECK_GOTO(H5Sget_simple_extent_dims(fs, hd, NULL), st, done);
    for (int n = 0; n < nd; n++) dims[n] = hd[n];
    *order = nd < 0 ? 0 : (uint32_t)nd;
    st = check_shape(spec, *order, dims);
done:
    if (ty >= 0) H5Tclose(ty);
    if (fs >= 0) H5Sclose(fs);
    free(path);
    return st;
}

/* The raw data's file offset and element type of a dataset that read_raw
 * can read: contiguous (so unfiltered), stored in the file itself,
 * little-endian IEEE float64 or float32; 0 for any other. */
static int h5_raw_elem(hid_t ds, uint64_t *data)
{
    int elem = 0;
    hid_t dcpl = -1, ty = -1;
    H5E_BEGIN_TRY {
        dcpl = H5Dget_create_plist(ds);
        ty = H5Dget_type(ds);
        const haddr_t at = H5Dget_offset(ds);
        if (dcpl >= 0 && ty >= 0 && H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0 &&
            at != HADDR_UNDEF) {
            elem = H5Tequal(ty, H5T_IEEE_F64LE) > 0 ? ELEM_F8 : H5Tequal(ty, H5T_IEEE_F32LE) > 0 ? ELEM_F4 : 0;
            *data = (uint64_t)at;
        }
        if (ty >= 0) H5Tclose(ty);
        if (dcpl >= 0) H5Pclose(dcpl);
    } H5E_END_TRY;
    return elem;
}

static fd_status read_h5(bcp_tensor *t, const char *spec, int mask, read_how *rd)
{
    fd_status st = FD_OK;
    hid_t f = -1, ds = -1, fs = -1, ms = -1;
    uint32_t order;
    uint64_t dims[BCP_MAX_ORDER], data = 0;
    FD_TRY_GOTO(h5_open(spec, mask, &f, &ds, &order, dims), st, done);
    const int elem = block_contiguous(t) ? h5_raw_elem(ds, &data) : 0;
    if (elem) {
        char *path = strndup(spec, (size_t)(strstr(spec, ".h5:") - spec) + 3);
        if (!path) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
        st = read_raw(t, path, data, elem, rd);
        free(path);
        goto done;
    }
    hsize_t start[BCP_MAX_ORDER], cnt[BCP_MAX_ORDER];
    for (uint32_t n = 0; n < order; n++) {
        start[n] = t->lo[n];
        cnt[n] = t->dims[n];
    }
    H5_CHECK_GOTO(fs = H5Dget_space(ds), st, done);
    H5_CHECK_GOTO(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL), st, done);
    H5_CHECK_GOTO(ms = H5Screate_simple((int)order, cnt, NULL), st, done);
    H5_CHECK_GOTO(H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, t->x), st, done);
done:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
    if (f >= 0) H5Fclose(f);
    return st;
}

static fd_status tensor_shape(const char *spec, int mask, uint32_t *order, uint64_t *dims)
{
    const size_t len = strlen(spec);
    if (strstr(spec, ".h5:")) {
        hid_t f, ds;
        const fd_status st = h5_open(spec, mask, &f, &ds, order, dims);
        if (ds >= 0) H5Dclose(ds);
        if (f >= 0) H5Fclose(f);
        return st;
    }
    if (len > 4 && !strcmp(spec + len - 4, ".npy")) {
        int elem;
        FD_TRY(fd_input_check(spec));
        FILE *f = fopen(spec, "rb");
        if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", spec, strerror(errno));
        const fd_status st = npy_header_check(f, spec, mask, order, dims, &elem);
        fclose(f);
        return st;
    }
    return fd_fail(FD_ERR_USAGE, "%s: bcp reads a .npy file or an HDF5 dataset named FILE.h5:/dataset", spec);
}

fd_status bcp_tensor_shape(const char *spec, uint32_t *order, uint64_t *dims)
{
    return tensor_shape(spec, 0, order, dims);
}

typedef struct {
    const bcp_tensor *t;
    read_how *rd;
} value_check;

static fd_status check_chunks(void *arg, uint64_t c0, uint64_t c1, int thread)
{
    const value_check *v = arg;
    (void)thread;
    for (uint64_t c = c0; c < c1; c++) {
        const uint64_t a = c * READ_CHUNK, b = a + READ_CHUNK < v->t->size ? a + READ_CHUNK : v->t->size;
        v->rd->first[c] = first_bad(v->t->x, a, b, v->rd->how);
    }
    return FD_OK;
}

/* Every value finite (READ_VALUES), or not infinite (READ_NAN: NaN is a
 * missing entry), or a mask's not NaN (READ_MASK).  A pass on threads
 * unless the read checked as it went; the element named is the first in
 * C order whatever the threads. */
static fd_status check_values(const char *what, const bcp_tensor *t, read_how *rd)
{
    const uint64_t chunks = (t->size + READ_CHUNK - 1) / READ_CHUNK;
    if (!rd->checked) {
        value_check v = {t, rd};
        FD_TRY(par_rows_chunk(rd->threads, 0, chunks, 1, check_chunks, &v, NULL));
    }
    uint64_t i = UINT64_MAX;
    for (uint64_t c = 0; c < chunks && i == UINT64_MAX; c++) i = rd->first[c];
    if (i == UINT64_MAX) return FD_OK;
    if (rd->how == READ_VALUES) return not_finite(what, t, i);
    if (rd->how == READ_MASK)
        return fd_fail(FD_ERR_INPUT, "%s: element %llu (in C order) of the mask is NaN; a mask holds 0 (missing) or "
                                     "another number (observed)",
                       what, (unsigned long long)i);
    return fd_fail(FD_ERR_INPUT, "%s: element %llu (in C order) is %g; a missing entry is NaN", what,
                   (unsigned long long)i, t->x[i]);
}

static fd_status tensor_read(bcp_tensor **out, const char *spec, const uint64_t *lo, const uint64_t *cnt, int hash,
                             int how, int threads)
{
    fd_status st = FD_OK;
    bcp_tensor *t = NULL;
    uint32_t order;
    uint64_t full[BCP_MAX_ORDER], dims[BCP_MAX_ORDER];
    char *file = NULL;
    sha256_job *hashing = NULL;
    const int mask = how == READ_MASK;
    *out = NULL;
    FD_TRY(tensor_shape(spec, mask, &order, full));
    for (uint32_t n = 0; n < order; n++) {
        dims[n] = cnt ? cnt[n] : full[n];
        if ((lo ? lo[n] : 0) + dims[n] > full[n] || dims[n] == 0)
            return fd_fail(FD_ERR_INTERNAL, "%s: block outside mode %u", spec, n + 1);
    }
    FD_TRY(bcp_tensor_create(&t, order, dims));
    read_how rd = {how, threads, 0, malloc(((t->size + READ_CHUNK - 1) / READ_CHUNK) * sizeof *rd.first)};
    if (!rd.first) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    t->full_size = 1;
    for (uint32_t n = 0; n < order; n++) {
        t->lo[n] = lo ? lo[n] : 0;
        t->full[n] = full[n];
        t->full_size *= full[n];
    }
    const int h5 = strstr(spec, ".h5:") != NULL;
    file = h5 ? strndup(spec, (size_t)(strstr(spec, ".h5:") - spec) + 3) : strdup(spec);
    if (!file || !(t->source = strdup(spec))) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    if (hash) FD_TRY_GOTO(sha256_file_start(&hashing, file), st, done); /* beside the read, as the matrix readers */
    FD_TRY_GOTO(h5 ? read_h5(t, spec, mask, &rd) : read_npy(t, spec, mask, &rd), st, done);
    FD_TRY_GOTO(check_values(spec, t, &rd), st, done);
    /* The hash goes on beside the fit: bcp_tensor_hash waits for it. */
    t->hashing = hashing;
    hashing = NULL;
    *out = t;
    t = NULL;
done:
    sha256_file_wait(&hashing, NULL);
    free(rd.first);
    free(file);
    bcp_tensor_destroy(&t);
    return st;
}

fd_status bcp_tensor_read(bcp_tensor **out, const char *spec, const uint64_t *lo, const uint64_t *cnt, int hash,
                          int threads)
{
    return tensor_read(out, spec, lo, cnt, hash, READ_VALUES, threads);
}

fd_status bcp_tensor_read_missing(bcp_tensor **out, const char *spec, const char *mask_spec, const uint64_t *lo,
                                  const uint64_t *cnt, int hash, int threads)
{
    bcp_tensor *t = NULL, *mk = NULL;
    FD_TRY(tensor_read(&t, spec, lo, cnt, hash, READ_NAN, threads));
    fd_status st = FD_OK;
    if (mask_spec) {
        /* the shapes compared before a block of the mask is cut */
        uint32_t order;
        uint64_t full[BCP_MAX_ORDER];
        FD_TRY_GOTO(tensor_shape(mask_spec, 1, &order, full), st, done);
        int same = order == t->order;
        for (uint32_t n = 0; same && n < t->order; n++) same = full[n] == t->full[n];
        if (!same) {
            st = fd_fail(FD_ERR_INPUT, "%s: the mask's shape is not the tensor's (%s)", mask_spec, spec);
            goto done;
        }
        FD_TRY_GOTO(tensor_read(&mk, mask_spec, lo, cnt, 0, READ_MASK, threads), st, done);
    }
    uint64_t seen = 0;
    for (uint64_t i = 0; i < t->size; i++) seen += !isnan(t->x[i]) && !(mk && mk->x[i] == 0);
    if (seen == 0 && lo) {
        char at[256];
        size_t len = 0;
        for (uint32_t n = 0; n < t->order && len < sizeof at; n++)
            len += (size_t)snprintf(at + len, sizeof at - len, "%s%llu:%llu", n ? ", " : "", (unsigned long long)lo[n],
                                    (unsigned long long)(lo[n] + t->dims[n]));
        st = fd_fail(FD_ERR_INPUT, "%s: every entry of the block [%s] is missing", spec, at);
        goto done;
    }
    if (seen == 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: every entry is missing", spec);
        goto done;
    }
    if (seen < t->size) {
        FD_ALLOC_GOTO(t->observed, t->size, st, done);
        for (uint64_t i = 0; i < t->size; i++) {
            t->observed[i] = !isnan(t->x[i]) && !(mk && mk->x[i] == 0);
            if (!t->observed[i]) t->x[i] = 0;
        }
    }
    t->n_observed = seen;
    *out = t;
    t = NULL;
done:
    bcp_tensor_destroy(&mk);
    bcp_tensor_destroy(&t);
    return st;
}

fd_status bcp_tensor_synth(bcp_tensor **out, double **factors, uint32_t order, const uint64_t *dims, uint32_t rank,
                           double snr_db, uint64_t seed)
{
    bcp_tensor *t = NULL;
    *out = NULL;
    *factors = NULL;
    FD_TRY(bcp_tensor_create(&t, order, dims));
    uint64_t rows = 0, off[BCP_MAX_ORDER];
    for (uint32_t n = 0; n < order; n++) {
        off[n] = rows;
        rows += dims[n];
    }
    double *A = malloc(rows * rank * sizeof *A);
    if (!A) {
        bcp_tensor_destroy(&t);
        return fd_fail(FD_ERR_NOMEM, "out of memory");
    }
    fd_rng rng = {seed};
    for (uint64_t i = 0; i < rows * rank; i++) A[i] = fd_rng_normal(&rng);
    /* X = sum over r of the outer products, element by element. */
    double signal = 0;
    for (uint64_t e = 0; e < t->size; e++) {
        uint64_t v = e, sub[BCP_MAX_ORDER];
        for (uint32_t n = order; n-- > 0;) {
            sub[n] = v % dims[n];
            v /= dims[n];
        }
        double x = 0;
        for (uint32_t r = 0; r < rank; r++) {
            double p = 1;
            for (uint32_t n = 0; n < order; n++) p *= A[(off[n] + sub[n]) * rank + r];
            x += p;
        }
        t->x[e] = x;
        signal += x * x;
    }
    const double sd = sqrt(signal / (double)t->size / pow(10, snr_db / 10));
    for (uint64_t e = 0; e < t->size; e++) t->x[e] += sd * fd_rng_normal(&rng);
    *out = t;
    *factors = A;
    return FD_OK;
}
