/* SPDX-License-Identifier: BSD-3-Clause */
/* The dpc result file (see dpc_h5.h). */
#include "dpc_h5.h"

#include "../job/h5part.h"
#include "../io/h5util.h"
#include "version.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

fd_status dpc_h5_write(const char *path, const dpc_opts *o, const dpc_result *r)
{
    fd_status st = FD_OK;
    const uint64_t n = r->p->n;
    h5u_out out = H5U_OUT_NONE;
    FD_TRY_GOTO(h5u_out_create(&out, path), st, done);
    const hid_t f = out.file;
    FD_TRY_GOTO(h5u_attr_str(f, "format", "fcbo-dist dpc"), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "format_version", FD_FORMAT_VERSION), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "version", FD_VERSION), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "command", o->command ? o->command : ""), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "input", r->p->source), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "input_sha256", r->sha256), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_points", n), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "dims", r->p->d), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "kernel", o->kernel == DPC_CUTOFF ? "cutoff" : "gaussian"), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "dc", r->dc), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "dc_rule", o->dc_rule == 'x' ? "dc" : o->dc_rule == 'p' ? "percent" : "neighbors"), st,
                done);
    FD_TRY_GOTO(h5u_attr_f64(f, "dc_percent", o->dc_rule == 'p' ? o->dc_percent : NAN), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "neighbors", o->dc_rule == 'k' ? o->neighbors : NAN), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "seed", o->seed), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "centers_rule", o->centers.k ? "count" : o->centers.delta_min > 0 ? "rectangle"
                                                : o->centers.outliers ? "outliers" : "gap"),
                st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_clusters", r->k), st, done);
    if (r->rep && r->rep->automatic) {
        FD_TRY_GOTO(h5u_attr_u64(f, "centers_gap_rule", r->rep->gap), st, done);
        FD_TRY_GOTO(h5u_attr_u64(f, "centers_outlier_rule", r->rep->outliers), st, done);
        FD_TRY_GOTO(h5u_attr_f64(f, "outlier_gamma_threshold", r->rep->gamma_thr), st, done);
        FD_TRY_GOTO(h5u_attr_f64(f, "outlier_alpha", r->rep->alpha), st, done);
        FD_TRY_GOTO(h5u_attr_f64(f, "outlier_z", r->rep->z), st, done);
        FD_TRY_GOTO(h5u_attr_f64(f, "outlier_log_median", r->rep->log_median), st, done);
        FD_TRY_GOTO(h5u_attr_f64(f, "outlier_log_scale", r->rep->log_scale), st, done);
    }
    FD_TRY_GOTO(h5u_attr_u64(f, "halo", (uint64_t)o->halo), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "ari", r->ari), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "ranks", (uint64_t)r->ranks), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "threads", (uint64_t)r->threads), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "load_seconds", r->t_load), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "dc_seconds", r->t_dc), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "rho_seconds", r->t_rho), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "delta_seconds", r->t_delta), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "assign_seconds", r->t_assign), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "labels", H5T_STD_I32LE, H5T_NATIVE_INT32, r->labels, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "rho", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->rho, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "delta", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->delta, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "parent", H5T_STD_I64LE, H5T_NATIVE_INT64, r->parent, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "gamma", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->gamma, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "centers", H5T_STD_I64LE, H5T_NATIVE_INT64, r->centers, r->k), st, done);
    if (r->core) FD_TRY_GOTO(h5u_write_1d(f, "core_labels", H5T_STD_I32LE, H5T_NATIVE_INT32, r->core, n), st, done);
    if (r->pred) {
        hid_t g = H5Gcreate2(f, "predict", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g < 0) {
            st = fd_fail(FD_ERR_IO, "%s: cannot create /predict", path);
            goto done;
        }
        const uint64_t m = r->pred->n;
        st = h5u_attr_str(g, "input", o->predict);
        if (st == FD_OK) st = h5u_attr_str(g, "input_sha256", r->q_sha256);
        if (st == FD_OK) st = h5u_attr_u64(g, "n_points", m);
        if (st == FD_OK) st = h5u_write_1d(g, "labels", H5T_STD_I32LE, H5T_NATIVE_INT32, r->pred->labels, m);
        if (st == FD_OK) st = h5u_write_1d(g, "rho", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->pred->rho, m);
        if (st == FD_OK) st = h5u_write_1d(g, "parent", H5T_STD_I64LE, H5T_NATIVE_INT64, r->pred->parent, m);
        if (st == FD_OK) st = h5u_write_1d(g, "delta", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->pred->delta, m);
        H5Gclose(g);
        FD_TRY_GOTO(st, st, done);
    }
    st = h5u_out_commit(&out);
done:
    h5u_out_abort(&out);
    return st;
}

/* Every size a reader uses, against the datasets' own: a damaged or
 * edited file is refused here, not overrun later. */
static fd_status check_file(hid_t f, const char *path, uint64_t *n, uint64_t *k)
{
    static const char *const per_point[] = {"labels", "rho", "delta", "parent", "gamma"};
    uint64_t d = 0, halo = 0;
    FD_TRY(h5u_expect_complete(f, path, "fcbo-dist dpc", FD_FORMAT_VERSION));
    FD_TRY(h5u_read_u64_attr(f, path, "n_points", n));
    FD_TRY(h5u_read_u64_attr(f, path, "dims", &d));
    FD_TRY(h5u_read_u64_attr(f, path, "n_clusters", k));
    FD_TRY(h5u_read_u64_attr(f, path, "halo", &halo));
    if (*k > *n || d == 0 || halo > 1)
        return fd_fail(FD_ERR_INPUT, "%s: %llu clusters of %llu points in %llu dimensions (halo %llu) cannot be", path,
                       (unsigned long long)*k, (unsigned long long)*n, (unsigned long long)d, (unsigned long long)halo);
    for (size_t c = 0; c < sizeof per_point / sizeof *per_point; c++)
        FD_TRY(h5u_expect_len(f, path, per_point[c], *n, "n_points"));
    FD_TRY(h5u_expect_len(f, path, "centers", *k, "n_clusters"));
    if (halo) FD_TRY(h5u_expect_len(f, path, "core_labels", *n, "n_points"));
    /* --predict's group: its arrays as long as its own n_points, each new
     * point's parent a fitted point. */
    if (H5Lexists(f, "predict", H5P_DEFAULT) > 0) {
        static const char *const per_new[] = {"predict/labels", "predict/rho", "predict/parent", "predict/delta"};
        uint64_t m = 0;
        hid_t g = H5Gopen2(f, "predict", H5P_DEFAULT);
        if (g < 0) return fd_fail(FD_ERR_INPUT, "%s: /predict is not a group", path);
        fd_status st = h5u_read_u64_attr(g, path, "n_points", &m);
        H5Gclose(g);
        FD_TRY(st);
        for (size_t c = 0; c < sizeof per_new / sizeof *per_new; c++)
            FD_TRY(h5u_expect_len(f, path, per_new[c], m, "/predict's n_points"));
        int64_t par[4096];
        for (uint64_t q = 0; q < m; q += 4096) {
            const uint64_t len = m - q < 4096 ? m - q : 4096;
            FD_TRY(h5u_read_range(f, "predict/parent", H5T_NATIVE_INT64, q, len, par));
            for (uint64_t r = 0; r < len; r++)
                if (par[r] < 0 || (uint64_t)par[r] >= *n)
                    return fd_fail(FD_ERR_INPUT, "%s: /predict/parent[%llu] = %lld is not one of the %llu points", path,
                                   (unsigned long long)(q + r), (long long)par[r], (unsigned long long)*n);
        }
    }
    return FD_OK;
}

fd_status dpc_h5_info(hid_t f, const char *path, FILE *out)
{
    char input[4096] = "", sha[72] = "", kernel[16] = "", rule[16] = "", centers[16] = "", cmd[4096] = "";
    uint64_t n = 0, d = 0, k = 0, complete = 0, halo = 0;
    double dc = NAN, ari = NAN;
    FD_TRY(check_file(f, path, &n, &k));
    FD_TRY(h5u_read_attr_u64(f, "dims", &d));
    FD_TRY(h5u_read_attr_f64(f, "dc", &dc));
    FD_TRY(h5u_read_attr_str(f, "kernel", kernel, sizeof kernel));
    FD_TRY(h5u_read_attr_str(f, "dc_rule", rule, sizeof rule));
    FD_TRY(h5u_read_attr_str(f, "centers_rule", centers, sizeof centers));
    FD_TRY(h5u_read_attr_str(f, "input", input, sizeof input));
    FD_TRY(h5u_read_attr_str(f, "input_sha256", sha, sizeof sha));
    h5u_read_attr_str(f, "command", cmd, sizeof cmd);
    h5u_read_attr_u64(f, "complete", &complete);
    h5u_read_attr_u64(f, "halo", &halo);
    h5u_read_attr_f64(f, "ari", &ari);
    fd_errclear();
    fprintf(out, "%s: fcbo-dist dpc result%s\n", path, complete ? "" : " (INCOMPLETE)");
    fprintf(out, "  command   %s\n  input     %s (SHA-256 %s)\n", cmd, input, sha);
    fprintf(out, "  points    %llu in %llu dimensions\n", (unsigned long long)n, (unsigned long long)d);
    fprintf(out, "  density   %s kernel, d_c = %.9g (%s)\n", kernel, dc, rule);
    fprintf(out, "  clusters  %llu (%s)%s\n", (unsigned long long)k, centers, halo ? ", halo in /core_labels" : "");
    if (!isnan(ari)) fprintf(out, "  ARI       %.6f against the label column\n", ari);
    return FD_OK;
}

fd_status dpc_h5_text(hid_t f, const char *path, FILE *out)
{
    fd_status st = FD_OK;
    uint64_t n = 0, k = 0;
    FD_TRY(check_file(f, path, &n, &k));
    const uint64_t slab = 1u << 16;
    int32_t *lab = malloc(slab * sizeof *lab);
    double *rho = malloc(slab * sizeof *rho), *delta = malloc(slab * sizeof *delta);
    int64_t *par = malloc(slab * sizeof *par);
    if (!lab || !rho || !delta || !par) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    fprintf(out, "# point label rho delta parent\n");
    for (uint64_t a = 0; a < n && st == FD_OK; a += slab) {
        const uint64_t m = n - a < slab ? n - a : slab;
        FD_TRY_GOTO(h5u_read_range(f, "labels", H5T_NATIVE_INT32, a, m, lab), st, done);
        FD_TRY_GOTO(h5u_read_range(f, "rho", H5T_NATIVE_DOUBLE, a, m, rho), st, done);
        FD_TRY_GOTO(h5u_read_range(f, "delta", H5T_NATIVE_DOUBLE, a, m, delta), st, done);
        FD_TRY_GOTO(h5u_read_range(f, "parent", H5T_NATIVE_INT64, a, m, par), st, done);
        for (uint64_t i = 0; i < m; i++)
            if (lab[i] < 0 || lab[i] > (int64_t)k || par[i] < -1 || par[i] >= (int64_t)n) {
                st = fd_fail(FD_ERR_INPUT, "%s: point %llu has label %d and parent %lld, of %llu clusters and %llu points",
                             path, (unsigned long long)(a + i), lab[i], (long long)par[i], (unsigned long long)k,
                             (unsigned long long)n);
                goto done;
            }
        for (uint64_t i = 0; i < m; i++)
            fprintf(out, "%llu %d %.17g %.17g %lld\n", (unsigned long long)(a + i), lab[i], rho[i], delta[i],
                    (long long)par[i]);
    }
done:
    free(lab);
    free(rho);
    free(delta);
    free(par);
    return st;
}
