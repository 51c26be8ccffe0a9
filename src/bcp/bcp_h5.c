/* SPDX-License-Identifier: BSD-3-Clause */
/* The bcp result file (see bcp_h5.h). */
#include "bcp_h5.h"

#include "bcp_masked.h" /* bcp_model_at */

#include "../job/h5part.h"
#include "../io/h5util.h"
#include "version.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A row-major rows x cols array as a 2-D dataset. */
static fd_status write_2d(hid_t loc, const char *name, hid_t filetype, hid_t memtype, const void *v, uint64_t rows,
                          uint64_t cols)
{
    fd_status st = FD_OK;
    hsize_t dims[2] = {rows, cols}, chunk[2] = {rows < 4096 ? rows : 4096, cols};
    hid_t sp = -1, ds = -1, dcpl = -1;
    H5_CHECK_GOTO(sp = H5Screate_simple(2, dims, NULL), st, done);
    FD_TRY_GOTO(h5u_chunked_dcpl(&dcpl, 2, chunk), st, done);
    H5_CHECK_GOTO(ds = H5Dcreate2(loc, name, filetype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v), st, done);
done:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (ds >= 0) H5Dclose(ds);
    if (sp >= 0) H5Sclose(sp);
    return st;
}

/* --completed: the model's tensor, sum_r prod_n A(n)[i_n, r] at every
 * entry, as an N-way dataset of the model's dims (written a slab of the
 * first mode at a time). */
static fd_status write_completed(hid_t f, const bcp_model *m)
{
    fd_status st = FD_OK;
    hsize_t dims[BCP_MAX_ORDER], chunk[BCP_MAX_ORDER], start[BCP_MAX_ORDER] = {0}, cnt[BCP_MAX_ORDER];
    uint64_t slab = 1;
    for (uint32_t n = 0; n < m->order; n++) {
        dims[n] = cnt[n] = m->dims[n];
        chunk[n] = n == 0 ? 1 : m->dims[n];
        if (n > 0) slab *= m->dims[n];
    }
    cnt[0] = 1;
    hid_t sp = -1, ds = -1, dcpl = -1, ms = -1;
    double *v = malloc(slab * sizeof *v);
    if (!v) return fd_fail(FD_ERR_NOMEM, "out of memory for /completed");
    H5_CHECK_GOTO(sp = H5Screate_simple((int)m->order, dims, NULL), st, done);
    FD_TRY_GOTO(h5u_chunked_dcpl(&dcpl, (int)m->order, chunk), st, done);
    H5_CHECK_GOTO(ds = H5Dcreate2(f, "completed", H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(ms = H5Screate_simple((int)m->order, cnt, NULL), st, done);
    for (uint64_t i = 0; i < m->dims[0]; i++) {
        for (uint64_t e = 0; e < slab; e++) v[e] = bcp_model_at(m, i * slab + e);
        start[0] = i;
        H5_CHECK_GOTO(H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, cnt, NULL), st, done);
        H5_CHECK_GOTO(H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, sp, H5P_DEFAULT, v), st, done);
    }
done:
    if (ms >= 0) H5Sclose(ms);
    if (dcpl >= 0) H5Pclose(dcpl);
    if (ds >= 0) H5Dclose(ds);
    if (sp >= 0) H5Sclose(sp);
    free(v);
    return st;
}

/* --predict-at: the entries' indices (K x order) and the model there. */
static fd_status write_predictions(hid_t f, const bcp_model *m, const bcp_entries *at)
{
    fd_status st = FD_OK;
    hid_t g = -1;
    double *v = malloc((at->n ? at->n : 1) * sizeof *v);
    if (!v) return fd_fail(FD_ERR_NOMEM, "out of memory for /predictions");
    bcp_entries_predict(m, at, v);
    H5_CHECK_GOTO(g = H5Gcreate2(f, "predictions", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    FD_TRY_GOTO(write_2d(g, "indices", H5T_STD_U64LE, H5T_NATIVE_UINT64, at->idx, at->n, at->order), st, done);
    FD_TRY_GOTO(h5u_write_1d(g, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, at->n), st, done);
done:
    if (g >= 0) H5Gclose(g);
    free(v);
    return st;
}

fd_status bcp_h5_write(const char *path, const bcp_job_opts *o, const bcp_tensor *t, const bcp_model *m, int ranks,
                       double t_load, double t_fit, uint32_t fuse_iters, uint64_t fuse_observed,
                       const bcp_starts *starts, const bcp_entries *at)
{
    fd_status st = FD_OK;
    h5u_out out = H5U_OUT_NONE;
    hid_t g = -1;
    FD_TRY_GOTO(h5u_out_create(&out, path), st, done);
    const hid_t f = out.file;
    const uint32_t R = m->R, last = m->iters - 1;
    FD_TRY_GOTO(h5u_attr_str(f, "format", "fcbo-dist bcp"), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "format_version", FD_FORMAT_VERSION), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "version", FD_VERSION), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "command", o->command ? o->command : ""), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "input", t->source), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "input_sha256", t->sha256), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "order", t->order), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "rank_initial", o->fit.rank), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "rank", R), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "iterations", m->iters), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "converged", (uint64_t)m->converged), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "tol", o->fit.tol), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "max_iter", o->fit.max_iter), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "init", o->fit.init == BCP_INIT_SVD ? "svd" : "random"), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "seed", o->fit.seed), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "nonneg", (uint64_t)o->fit.nonneg), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "tau", m->tau), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "fit", m->fit[last]), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "lower_bound", m->lb[last]), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "ranks", (uint64_t)ranks), st, done);
    /* Missing entries: how many, and what said so; the fit is over the
     * observed ones. */
    uint64_t size = 1, observed = t->observed ? t->n_observed : t->size;
    for (uint32_t n = 0; n < m->order; n++) size *= m->dims[n];
    if (o->fuse_n) observed = o->missing ? fuse_observed : 0; /* the sub-tensors' (t is the first) */
    FD_TRY_GOTO(h5u_attr_u64(f, "observed_entries", observed), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "missing_entries", o->fuse_n && !o->missing ? 0 : size - observed), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "missing", !o->missing ? "refuse" : o->mask ? o->mask : "nan"), st, done);
    if (o->fuse_n) {
        char grid[160];
        size_t len = 0;
        for (uint32_t n = 0; n < o->fuse_n && len < sizeof grid; n++)
            len += (size_t)snprintf(grid + len, sizeof grid - len, "%s%llu", n ? "x" : "", (unsigned long long)o->fuse[n]);
        FD_TRY_GOTO(h5u_attr_str(f, "fuse", grid), st, done);
        FD_TRY_GOTO(h5u_attr_u64(f, "fuse_iterations", fuse_iters), st, done);
    }
    FD_TRY_GOTO(h5u_attr_f64(f, "load_seconds", t_load), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "fit_seconds", t_fit), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "sweep_seconds", m->sweep_seconds), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "product_seconds", m->product_seconds), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "sum_seconds", m->sum_seconds), st, done);
    /* The model's: under --fuse t is sub-tensor 0, whose sizes are its own. */
    FD_TRY_GOTO(h5u_write_1d(f, "dims", H5T_STD_U64LE, H5T_NATIVE_UINT64, m->dims, t->order), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "lambda", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m->lambda, R), st, done);
    /* Per sweep: the bound, the fit, the rank, the wall time. */
    H5_CHECK_GOTO(g = H5Gcreate2(f, "trace", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    FD_TRY_GOTO(h5u_write_1d(g, "lower_bound", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m->lb, m->iters), st, done);
    FD_TRY_GOTO(h5u_write_1d(g, "fit", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m->fit, m->iters), st, done);
    FD_TRY_GOTO(h5u_write_1d(g, "rank", H5T_STD_U32LE, H5T_NATIVE_UINT32, m->ranks, m->iters), st, done);
    FD_TRY_GOTO(h5u_write_1d(g, "seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m->seconds, m->iters), st, done);
    H5Gclose(g);
    H5_CHECK_GOTO(g = H5Gcreate2(f, "factors", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    for (uint32_t n = 0; n < t->order; n++) {
        char name[32];
        snprintf(name, sizeof name, "A%u", n + 1);
        FD_TRY_GOTO(write_2d(g, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m->A[n], m->dims[n], R), st, done);
        snprintf(name, sizeof name, "Sigma%u", n + 1);
        FD_TRY_GOTO(write_2d(g, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, m->Sigma[n], R, R), st, done);
    }
    H5Gclose(g);
    g = -1;
    if (starts && starts->n > 1) {
        FD_TRY_GOTO(h5u_attr_u64(f, "starts", starts->n), st, done);
        FD_TRY_GOTO(h5u_attr_u64(f, "best_start", starts->best), st, done);
        H5_CHECK_GOTO(g = H5Gcreate2(f, "starts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "lower_bound", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, starts->lb, starts->n), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "fit", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, starts->fit, starts->n), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "rank", H5T_STD_U32LE, H5T_NATIVE_UINT32, starts->rank, starts->n), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "sweeps", H5T_STD_U32LE, H5T_NATIVE_UINT32, starts->iters, starts->n), st, done);
        H5Gclose(g);
        g = -1;
    }
    if (o->completed) FD_TRY_GOTO(write_completed(f, m), st, done);
    if (at) FD_TRY_GOTO(write_predictions(f, m, at), st, done);
    st = h5u_out_commit(&out); /* sets complete */
done:
    if (g >= 0) H5Gclose(g);
    h5u_out_abort(&out);
    return st;
}

/* Every size a reader uses, against the datasets' own: a damaged or
 * edited file is refused here, not overrun later. */
static fd_status check_file(hid_t f, const char *path, uint64_t *order, uint64_t *R, uint64_t *dims)
{
    uint64_t iters = 0, shape[2];
    int nd = 0;
    FD_TRY(h5u_expect_complete(f, path, "fcbo-dist bcp", FD_FORMAT_VERSION));
    FD_TRY(h5u_read_u64_attr(f, path, "order", order));
    FD_TRY(h5u_read_u64_attr(f, path, "rank", R));
    FD_TRY(h5u_read_u64_attr(f, path, "iterations", &iters));
    if (*order < 1 || *order > BCP_MAX_ORDER || *R < 1 || *R > (1u << 20) || iters < 1)
        return fd_fail(FD_ERR_INPUT, "%s: order %llu, rank %llu and %llu sweeps cannot be", path,
                       (unsigned long long)*order, (unsigned long long)*R, (unsigned long long)iters);
    FD_TRY(h5u_expect_len(f, path, "dims", *order, "order"));
    FD_TRY(h5u_read_range(f, "dims", H5T_NATIVE_UINT64, 0, *order, dims));
    FD_TRY(h5u_expect_len(f, path, "lambda", *R, "rank"));
    static const char *const trace[] = {"trace/lower_bound", "trace/fit", "trace/rank", "trace/seconds"};
    for (int k = 0; k < 4; k++) FD_TRY(h5u_expect_len(f, path, trace[k], iters, "iterations"));
    /* --starts S: one value per start, the best one of them. */
    if (H5Lexists(f, "starts", H5P_DEFAULT) > 0) {
        uint64_t S = 0, best = 0;
        FD_TRY(h5u_read_u64_attr(f, path, "starts", &S));
        FD_TRY(h5u_read_u64_attr(f, path, "best_start", &best));
        if (S < 2 || best >= S)
            return fd_fail(FD_ERR_INPUT, "%s: best_start %llu of %llu starts cannot be", path, (unsigned long long)best,
                           (unsigned long long)S);
        static const char *const per_start[] = {"starts/lower_bound", "starts/fit", "starts/rank", "starts/sweeps"};
        for (int k = 0; k < 4; k++) FD_TRY(h5u_expect_len(f, path, per_start[k], S, "starts"));
    }
    for (uint64_t n = 0; n < *order; n++) {
        char name[32];
        const uint64_t want[2][2] = {{dims[n], *R}, {*R, *R}};
        for (int w = 0; w < 2; w++) {
            snprintf(name, sizeof name, w ? "factors/Sigma%llu" : "factors/A%llu", (unsigned long long)n + 1);
            FD_TRY(h5u_shape(f, name, 2, &nd, shape));
            if (nd != 2 || shape[0] != want[w][0] || shape[1] != want[w][1])
                return fd_fail(FD_ERR_INPUT, "%s: %s is not %llu x %llu (dims and rank)", path, name,
                               (unsigned long long)want[w][0], (unsigned long long)want[w][1]);
        }
    }
    /* --completed: the model's tensor, of the dims. */
    if (H5Lexists(f, "completed", H5P_DEFAULT) > 0) {
        uint64_t cs[BCP_MAX_ORDER];
        FD_TRY(h5u_shape(f, "completed", BCP_MAX_ORDER, &nd, cs));
        int ok = (uint64_t)nd == *order;
        for (uint64_t n = 0; ok && n < *order; n++) ok = cs[n] == dims[n];
        if (!ok) return fd_fail(FD_ERR_INPUT, "%s: /completed is not of the shape /dims gives", path);
    }
    /* --predict-at: K entries' indices, each within /dims, and K values. */
    if (H5Lexists(f, "predictions", H5P_DEFAULT) > 0) {
        FD_TRY(h5u_shape(f, "predictions/indices", 2, &nd, shape));
        if (nd != 2 || shape[1] != *order || shape[0] < 1)
            return fd_fail(FD_ERR_INPUT, "%s: /predictions/indices is not K x %llu (the order)", path,
                           (unsigned long long)*order);
        FD_TRY(h5u_expect_len(f, path, "predictions/values", shape[0], "predictions"));
    }
    return FD_OK;
}

fd_status bcp_h5_info(hid_t f, const char *path, FILE *out)
{
    char input[4096] = "", sha[72] = "", cmd[4096] = "", init[16] = "";
    uint64_t order = 0, r0 = 0, R = 0, iters = 0, conv = 0, dims[BCP_MAX_ORDER] = {0};
    double fit = NAN, lb = NAN, tau = NAN, tf = NAN;
    FD_TRY(check_file(f, path, &order, &R, dims));
    FD_TRY(h5u_read_attr_u64(f, "rank_initial", &r0));
    FD_TRY(h5u_read_attr_u64(f, "iterations", &iters));
    FD_TRY(h5u_read_attr_u64(f, "converged", &conv));
    FD_TRY(h5u_read_attr_f64(f, "fit", &fit));
    FD_TRY(h5u_read_attr_f64(f, "lower_bound", &lb));
    FD_TRY(h5u_read_attr_f64(f, "tau", &tau));
    FD_TRY(h5u_read_attr_f64(f, "fit_seconds", &tf));
    FD_TRY(h5u_read_attr_str(f, "input", input, sizeof input));
    FD_TRY(h5u_read_attr_str(f, "input_sha256", sha, sizeof sha));
    FD_TRY(h5u_read_attr_str(f, "init", init, sizeof init));
    h5u_read_attr_str(f, "command", cmd, sizeof cmd);
    fd_errclear();
    fprintf(out, "file:        %s (fcbo-dist bcp)\n", path);
    fprintf(out, "command:     %s\n", cmd);
    fprintf(out, "input:       %s\n", input);
    fprintf(out, "sha256:      %s\n", sha);
    fprintf(out, "tensor:     ");
    for (uint64_t n = 0; n < order; n++) fprintf(out, "%s%llu", n ? " x " : " ", (unsigned long long)dims[n]);
    fprintf(out, "\nrank:        %llu (from %llu, %s start)\n", (unsigned long long)R, (unsigned long long)r0, init);
    uint64_t miss = 0, seen = 0;
    if (H5Aexists(f, "missing_entries") > 0 && H5Aexists(f, "observed_entries") > 0) {
        FD_TRY(h5u_read_attr_u64(f, "missing_entries", &miss));
        FD_TRY(h5u_read_attr_u64(f, "observed_entries", &seen));
    }
    if (miss)
        fprintf(out, "missing:     %llu of %llu entries (the fit is over the observed)\n", (unsigned long long)miss,
                (unsigned long long)(miss + seen));
    fprintf(out, "fit:         %.6f (1 - ||Y - [[A]]|| / ||Y||)\n", fit);
    fprintf(out, "noise:       tau = %.6g (sd %.6g)\n", tau, tau > 0 ? 1 / sqrt(tau) : NAN);
    char fuse[160] = "";
    uint64_t fiters = 0;
    if (H5Aexists(f, "fuse") > 0) {
        FD_TRY(h5u_read_attr_str(f, "fuse", fuse, sizeof fuse));
        FD_TRY(h5u_read_attr_u64(f, "fuse_iterations", &fiters));
        fprintf(out, "fused:       from %s sub-tensors, %llu fusion sweeps (%s)\n", fuse, (unsigned long long)fiters,
                conv ? "converged" : "stopped");
    } else {
        fprintf(out, "sweeps:      %llu, %s; lower bound %.10g\n", (unsigned long long)iters,
                conv ? "converged" : "--max-iter reached", lb);
    }
    if (H5Lexists(f, "completed", H5P_DEFAULT) > 0) fprintf(out, "completed:   every entry (/completed)\n");
    if (H5Lexists(f, "predictions", H5P_DEFAULT) > 0) {
        uint64_t k = 0;
        FD_TRY(h5u_len(f, "predictions/values", &k));
        fprintf(out, "predictions: %llu listed entries (/predictions)\n", (unsigned long long)k);
    }
    fprintf(out, "time:        %.3f s\n", tf);
    return FD_OK;
}

/* Rows [r0, r0 + k) of the rows x R dataset name. */
static fd_status read_rows(hid_t f, const char *name, uint64_t r0, uint64_t k, uint64_t R, double *A)
{
    fd_status st = FD_OK;
    hid_t ds = -1, fs = -1, ms = -1;
    hsize_t start[2] = {r0, 0}, count[2] = {k, R};
    H5_CHECK_GOTO(ds = H5Dopen2(f, name, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(fs = H5Dget_space(ds), st, done);
    H5_CHECK_GOTO(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), st, done);
    H5_CHECK_GOTO(ms = H5Screate_simple(2, count, NULL), st, done);
    H5_CHECK_GOTO(H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, A), st, done);
done:
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    if (ds >= 0) H5Dclose(ds);
    return st;
}

fd_status bcp_h5_text(hid_t f, const char *path, FILE *out)
{
    fd_status st = FD_OK;
    uint64_t order = 0, R = 0, dims[BCP_MAX_ORDER] = {0};
    FD_TRY(check_file(f, path, &order, &R, dims));
    /* Slabs of rows: memory stays bounded whatever the file says. */
    const uint64_t slab = (R < (1u << 16) ? (1u << 16) / R : 1);
    double *A = malloc(slab * R * sizeof *A);
    if (!A) return fd_fail(FD_ERR_NOMEM, "out of memory");
    fprintf(out, "# mode row then the row's %llu factor values\n", (unsigned long long)R);
    for (uint64_t n = 0; n < order && st == FD_OK; n++) {
        char name[32];
        snprintf(name, sizeof name, "factors/A%llu", (unsigned long long)n + 1);
        for (uint64_t i0 = 0; i0 < dims[n] && st == FD_OK; i0 += slab) {
            const uint64_t k = dims[n] - i0 < slab ? dims[n] - i0 : slab;
            if ((st = read_rows(f, name, i0, k, R, A)) != FD_OK) break;
            for (uint64_t i = 0; i < k; i++) {
                fprintf(out, "%llu %llu", (unsigned long long)n + 1, (unsigned long long)(i0 + i));
                for (uint64_t r = 0; r < R; r++) fprintf(out, " %.17g", A[i * R + r]);
                fputc('\n', out);
            }
        }
    }
    free(A);
    return st;
}
