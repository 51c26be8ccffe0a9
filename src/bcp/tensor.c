/* Reading a dense tensor (see tensor.h). */
#include "tensor.h"

#include "../common/clock.h"
#include "../common/sha256.h"
#include "../io/h5util.h"

#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fd_status bcp_tensor_create(bcp_tensor **out, uint32_t order, const uint64_t *dims)
{
    *out = NULL;
    if (order < 1 || order > BCP_MAX_ORDER) return fd_fail(FD_ERR_INPUT, "%u modes (bcp takes up to %d)", order, BCP_MAX_ORDER);
    bcp_tensor *t = calloc(1, sizeof *t);
    if (!t) return fd_fail(FD_ERR_NOMEM, "out of memory");
    t->order = order;
    t->size = 1;
    for (uint32_t n = 0; n < order; n++) {
        t->dims[n] = dims[n];
        t->size *= dims[n];
    }
    t->x = calloc(t->size ? t->size : 1, sizeof *t->x);
    if (!t->x) {
        const unsigned long long size = t->size;
        free(t);
        return fd_fail(FD_ERR_NOMEM, "out of memory for a tensor of %llu elements", size);
    }
    *out = t;
    return FD_OK;
}

void bcp_tensor_destroy(bcp_tensor **pt)
{
    bcp_tensor *t = *pt;
    if (!t) return;
    free(t->x);
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
    for (uint32_t n = 0; n < order; n++)
        if (dims[n] == 0) return fd_fail(FD_ERR_INPUT, "%s: mode %u is empty", what, n + 1);
    return FD_OK;
}

/* Every value finite, or the index of the first that is not. */
static fd_status check_finite(const char *what, const bcp_tensor *t)
{
    for (uint64_t i = 0; i < t->size; i++) {
        if (isfinite(t->x[i])) continue;
        char idx[256];
        size_t len = 0;
        uint64_t v = i, sub[BCP_MAX_ORDER];
        for (uint32_t n = t->order; n-- > 0;) {
            sub[n] = v % t->dims[n];
            v /= t->dims[n];
        }
        for (uint32_t n = 0; n < t->order && len < sizeof idx; n++)
            len += (size_t)snprintf(idx + len, sizeof idx - len, "%s%llu", n ? ", " : "", (unsigned long long)sub[n]);
        return fd_fail(FD_ERR_INPUT, "%s: element (%s) is %g; bcp takes finite values only", what, idx, t->x[i]);
    }
    return FD_OK;
}

static fd_status read_npy(bcp_tensor **out, const char *path)
{
    fd_status st = FD_OK;
    bcp_tensor *t = NULL;
    char hdr[4096];
    float *f32 = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: not a NumPy .npy file", path);
        goto done;
    }
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) {
        if (fread(pre + 10, 1, 2, f) != 2) { st = fd_fail(FD_ERR_INPUT, "%s: truncated header", path); goto done; }
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (hlen >= sizeof hdr || fread(hdr, 1, hlen, f) != hlen) {
        st = fd_fail(FD_ERR_INPUT, "%s: bad or truncated .npy header", path);
        goto done;
    }
    hdr[hlen] = 0;
    const char *d = strstr(hdr, "'descr':"), *fo = strstr(hdr, "'fortran_order':"), *sh = strstr(hdr, "'shape':");
    char descr[16] = "";
    if (!d || !fo || !sh || sscanf(d, "'descr': '%15[^']'", descr) != 1 || !strchr(sh, '(')) {
        st = fd_fail(FD_ERR_INPUT, "%s: bad .npy header: %s", path, hdr);
        goto done;
    }
    if (strncmp(fo + strlen("'fortran_order':"), " False", 6) != 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: Fortran-ordered array; save it with np.ascontiguousarray", path);
        goto done;
    }
    const int dbl = !strcmp(descr, "<f8");
    if (!dbl && strcmp(descr, "<f4") != 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: dtype '%s'; bcp reads float32 or float64 (little-endian)", path, descr);
        goto done;
    }
    uint64_t dims[BCP_MAX_ORDER + 1];
    uint32_t order = 0;
    for (const char *p = strchr(sh, '(') + 1; *p && *p != ')';) {
        char *end;
        const unsigned long long v = strtoull(p, &end, 10);
        if (end == p) break;
        if (order == BCP_MAX_ORDER + 1) { order++; break; }
        dims[order++] = v;
        p = end;
        while (*p == ',' || *p == ' ') p++;
    }
    FD_TRY_GOTO(check_shape(path, order, dims), st, done);
    FD_TRY_GOTO(bcp_tensor_create(&t, order, dims), st, done);
    if (dbl) {
        if (fread(t->x, sizeof *t->x, t->size, f) != t->size) {
            st = fd_fail(FD_ERR_INPUT, "%s: truncated: fewer than %llu values", path, (unsigned long long)t->size);
            goto done;
        }
    } else {
        FD_ALLOC_GOTO(f32, t->size, st, done);
        if (fread(f32, sizeof *f32, t->size, f) != t->size) {
            st = fd_fail(FD_ERR_INPUT, "%s: truncated: fewer than %llu values", path, (unsigned long long)t->size);
            goto done;
        }
        for (uint64_t i = 0; i < t->size; i++) t->x[i] = f32[i];
    }
    FD_TRY_GOTO(check_finite(path, t), st, done);
    *out = t;
    t = NULL;
done:
    fclose(f);
    free(f32);
    bcp_tensor_destroy(&t);
    return st;
}

static fd_status read_h5(bcp_tensor **out, const char *spec)
{
    fd_status st = FD_OK;
    bcp_tensor *t = NULL;
    hid_t f = -1, ds = -1, fs = -1, ty = -1;
    const char *colon = strstr(spec, ".h5:");
    char *path = strndup(spec, (size_t)(colon - spec) + 3);
    const char *dset = colon + 4;
    if (!path) return fd_fail(FD_ERR_NOMEM, "out of memory");
    /* No HDF5 error stack on stderr for a file or dataset that is not
     * there: the message below says it. */
    H5E_BEGIN_TRY { f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT); } H5E_END_TRY;
    if (f < 0) { st = fd_fail(FD_ERR_INPUT, "%s: cannot open as HDF5", path); goto done; }
    htri_t there;
    H5E_BEGIN_TRY { there = H5Lexists(f, dset, H5P_DEFAULT); } H5E_END_TRY;
    if (there <= 0 || (ds = H5Dopen2(f, dset, H5P_DEFAULT)) < 0) {
        st = fd_fail(FD_ERR_INPUT, "%s: no dataset '%s'", path, dset);
        goto done;
    }
    H5_CHECK_GOTO(ty = H5Dget_type(ds), st, done);
    if (H5Tget_class(ty) != H5T_FLOAT) {
        st = fd_fail(FD_ERR_INPUT, "%s: dataset '%s' is not floating point (bcp reads float32 or float64)", path, dset);
        goto done;
    }
    H5_CHECK_GOTO(fs = H5Dget_space(ds), st, done);
    const int nd = H5Sget_simple_extent_ndims(fs);
    hsize_t hd[BCP_MAX_ORDER];
    uint64_t dims[BCP_MAX_ORDER];
    if (nd > BCP_MAX_ORDER) { st = fd_fail(FD_ERR_INPUT, "%s: %d modes (at most %d)", spec, nd, BCP_MAX_ORDER); goto done; }
    H5_CHECK_GOTO(H5Sget_simple_extent_dims(fs, hd, NULL), st, done);
    for (int n = 0; n < nd; n++) dims[n] = hd[n];
    FD_TRY_GOTO(check_shape(spec, nd < 0 ? 0 : (uint32_t)nd, dims), st, done);
    FD_TRY_GOTO(bcp_tensor_create(&t, (uint32_t)nd, dims), st, done);
    H5_CHECK_GOTO(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->x), st, done);
    FD_TRY_GOTO(check_finite(spec, t), st, done);
    *out = t;
    t = NULL;
done:
    if (ty >= 0) H5Tclose(ty);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
    if (f >= 0) H5Fclose(f);
    free(path);
    bcp_tensor_destroy(&t);
    return st;
}

static fd_status sha_file(const char *path, char hex[65])
{
    FILE *f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    sha256_ctx c;
    sha256_init(&c);
    unsigned char buf[1 << 16];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&c, buf, got);
    fclose(f);
    sha256_final_hex(&c, hex);
    return FD_OK;
}

fd_status bcp_tensor_read(bcp_tensor **out, const char *spec)
{
    *out = NULL;
    const size_t len = strlen(spec);
    bcp_tensor *t = NULL;
    char *file = NULL;
    if (strstr(spec, ".h5:")) {
        FD_TRY(read_h5(&t, spec));
        file = strndup(spec, (size_t)(strstr(spec, ".h5:") - spec) + 3);
    } else if (len > 4 && !strcmp(spec + len - 4, ".npy")) {
        FD_TRY(read_npy(&t, spec));
        file = strdup(spec);
    } else {
        return fd_fail(FD_ERR_USAGE, "%s: bcp reads a .npy file or an HDF5 dataset named FILE.h5:/dataset", spec);
    }
    fd_status st = file && (t->source = strdup(spec)) ? sha_file(file, t->sha256) : fd_fail(FD_ERR_NOMEM, "out of memory");
    free(file);
    if (st != FD_OK) {
        bcp_tensor_destroy(&t);
        return st;
    }
    *out = t;
    return FD_OK;
}

static double gauss(fd_rng *rng)
{
    const double u = 1 - fd_rng_unif(rng), v = fd_rng_unif(rng);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
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
    for (uint64_t i = 0; i < rows * rank; i++) A[i] = gauss(&rng);
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
    for (uint64_t e = 0; e < t->size; e++) t->x[e] += sd * gauss(&rng);
    *out = t;
    *factors = A;
    return FD_OK;
}
