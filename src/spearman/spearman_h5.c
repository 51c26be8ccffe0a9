/* SPDX-License-Identifier: BSD-3-Clause */
#include "spearman_h5.h"

#include "../io/matrix_collect.h"

#include "../job/h5part.h"
#include "../io/h5util.h"
#include "tile.h"
#include "version.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((uint64_t)1 << 16)

static const char *const cols[5] = {"pairs/i", "pairs/j", "pairs/rho", "pairs/p", NULL};
static const char *cols_of(int c) { return cols[c]; }

struct spearman_h5 {
    h5u_out out; /* the file, under its temporary name until the commit */
    hid_t grp;
    h5u_app col[4];
};

void spearman_h5_abort(spearman_h5 **pw)
{
    spearman_h5 *w = *pw;
    if (!w) return;
    for (int c = 0; c < 4; c++) h5u_app_close(&w->col[c]);
    if (w->grp >= 0) H5Gclose(w->grp);
    h5u_out_abort(&w->out);
    free(w);
    *pw = NULL;
}

/* A writer with nothing open yet. */
static spearman_h5 *writer_new(void)
{
    spearman_h5 *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->out.file = w->grp = -1;
    for (int c = 0; c < 4; c++) w->col[c].ds = -1;
    return w;
}

fd_status spearman_h5_create(spearman_h5 **out, const char *path)
{
    fd_status st = FD_OK;
    spearman_h5 *w = writer_new();
    if (!w) return fd_fail(FD_ERR_NOMEM, "out of memory");
    FD_TRY_GOTO(h5u_out_create(&w->out, path), st, fail);
    H5_CHECK_GOTO(w->grp = H5Gcreate2(w->out.file, "pairs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, fail);
    FD_TRY_GOTO(h5u_app_create(&w->col[0], w->grp, "i", H5T_STD_U64LE, H5T_NATIVE_UINT64, CHUNK), st, fail);
    FD_TRY_GOTO(h5u_app_create(&w->col[1], w->grp, "j", H5T_STD_U64LE, H5T_NATIVE_UINT64, CHUNK), st, fail);
    FD_TRY_GOTO(h5u_app_create(&w->col[2], w->grp, "rho", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, CHUNK), st, fail);
    FD_TRY_GOTO(h5u_app_create(&w->col[3], w->grp, "p", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, CHUNK), st, fail);
    *out = w;
    return FD_OK;
fail:
    spearman_h5_abort(&w);
    return st;
}

fd_status spearman_h5_append(spearman_h5 *w, const uint64_t *i, const uint64_t *j, const float *rho,
                             const double *p, size_t n)
{
    FD_TRY(h5u_app_append(&w->col[0], i, n));
    FD_TRY(h5u_app_append(&w->col[1], j, n));
    FD_TRY(h5u_app_append(&w->col[2], rho, n));
    return h5u_app_append(&w->col[3], p, n);
}

uint64_t spearman_h5_count(const spearman_h5 *w) { return w->col[0].n; }

static fd_status put_meta(hid_t f, const spearman_meta *m)
{
    fd_status st = FD_OK;
    FD_TRY(h5u_attr_str(f, "format", "fcbo-dist spearman"));
    FD_TRY(h5u_attr_u64(f, "format_version", FD_FORMAT_VERSION));
    FD_TRY(h5u_attr_str(f, "version", FD_VERSION));
    FD_TRY(h5u_attr_str(f, "command", m->command ? m->command : ""));
    FD_TRY(h5u_attr_str(f, "input", m->input));
    FD_TRY(h5u_attr_str(f, "input_sha256", m->input_sha256));
    if (m->y_input) {
        FD_TRY(h5u_attr_str(f, "y_input", m->y_input));
        FD_TRY(h5u_attr_str(f, "y_input_sha256", m->y_sha256));
        FD_TRY(h5u_attr_u64(f, "y_rows", m->y_rows));
        FD_TRY(h5u_attr_u64(f, "y_constant_rows", m->y_constant_rows));
    }
    FD_TRY(h5u_attr_str(f, "backend", m->backend ? m->backend : ""));
    FD_TRY(h5u_attr_str(f, "selection", m->mode));
    FD_TRY(h5u_attr_f64(f, "threshold", m->threshold));
    FD_TRY(h5u_attr_f64(f, "rho_cut", m->rho_cut));
    FD_TRY(h5u_attr_u64(f, "count_only", (uint64_t)m->count_only));
    FD_TRY(h5u_attr_u64(f, "rows", m->rows));
    FD_TRY(h5u_attr_u64(f, "observations", m->n));
    FD_TRY(h5u_attr_u64(f, "constant_rows", m->constant_rows));
    FD_TRY(h5u_attr_u64(f, "dropped_rows", m->dropped_rows));
    FD_TRY(h5u_attr_str(f, "missing", m->missing ? m->missing : "refuse"));
    FD_TRY(h5u_attr_str(f, "method", m->method ? m->method : "spearman"));
    FD_TRY(h5u_attr_u64(f, "dropped_observations", m->dropped_observations));
    if (m->missing && !strcmp(m->missing, "pairwise")) {
        FD_TRY(h5u_attr_u64(f, "incomplete_rows", m->incomplete_rows));
        if (m->y_input) FD_TRY(h5u_attr_u64(f, "y_incomplete_rows", m->y_incomplete_rows));
    }
    FD_TRY(h5u_attr_u64(f, "pairs_tested", m->pairs_tested));
    FD_TRY(h5u_attr_u64(f, "n_pairs", m->pairs_selected));
    FD_TRY(h5u_attr_u64(f, "ranks", (uint64_t)m->ranks));
    FD_TRY(h5u_attr_u64(f, "threads", (uint64_t)m->threads));
    FD_TRY(h5u_attr_f64(f, "wall_seconds", m->wall_seconds));
    FD_TRY(h5u_attr_f64(f, "load_seconds", m->load_seconds));
    FD_TRY(h5u_attr_f64(f, "pass1_seconds", m->pass1_seconds));
    FD_TRY(h5u_attr_f64(f, "pass2_seconds", m->pass2_seconds));
    if (!strcmp(m->mode, "fdr")) FD_TRY(h5u_attr_f64(f, "fdr_cutoff_seconds", m->fdr_seconds));
    FD_TRY(h5u_attr_f64(f, "checkpoint_seconds", m->checkpoint_seconds));
    FD_TRY(h5u_attr_u64(f, "resumed_records", m->resumed_records));
    if (m->names) FD_TRY(h5u_write_strings(f, "names", m->names, m->n_names));
    if (m->y_names) FD_TRY(h5u_write_strings(f, "y_names", m->y_names, m->n_y_names));
    if (m->hist) {
        double edges[SPEARMAN_HIST_BINS + 1];
        for (int b = 0; b <= SPEARMAN_HIST_BINS; b++) edges[b] = -1.0 + 2.0 * b / SPEARMAN_HIST_BINS;
        FD_TRY(h5u_write_1d(f, "histogram", H5T_STD_U64LE, H5T_NATIVE_UINT64, m->hist, SPEARMAN_HIST_BINS));
        FD_TRY(h5u_write_1d(f, "histogram_edges", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, edges, SPEARMAN_HIST_BINS + 1));
    }
    return st;
}

/* Closes the datasets, then marks complete, closes and renames into place. */
static fd_status finish(spearman_h5 **pw)
{
    spearman_h5 *w = *pw;
    fd_status st = FD_OK;
    for (int c = 0; c < 4; c++) FD_TRY_GOTO(h5u_app_close(&w->col[c]), st, done);
    H5Gclose(w->grp);
    w->grp = -1;
    FD_TRY_GOTO(h5u_out_commit(&w->out), st, done);
done:
    spearman_h5_abort(pw);
    return st;
}

hid_t spearman_h5_file(const spearman_h5 *w) { return w->out.file; }
const char *spearman_h5_path(const spearman_h5 *w) { return w->out.path; }
fd_status spearman_h5_finish(spearman_h5 **pw) { return finish(pw); }

fd_status spearman_h5_append_file(spearman_h5 *w, hid_t src, const char *what)
{
    fd_status st = FD_OK;
    const uint64_t step = (uint64_t)1 << 20;
    uint64_t n[4], *ii = NULL, *jj = NULL;
    float *rho = NULL;
    double *p = NULL;
    for (int c = 0; c < 4; c++) FD_TRY(h5u_len(src, cols[c], &n[c]));
    if (n[1] != n[0] || n[2] != n[0] || n[3] != n[0])
        return fd_fail(FD_ERR_INPUT, "%s: its pair columns differ in length", what);
    FD_ALLOC_GOTO(ii, step, st, done);
    FD_ALLOC_GOTO(jj, step, st, done);
    FD_ALLOC_GOTO(rho, step, st, done);
    FD_ALLOC_GOTO(p, step, st, done);
    for (uint64_t a = 0; a < n[0] && st == FD_OK; a += step) {
        uint64_t k = n[0] - a < step ? n[0] - a : step;
        FD_TRY_GOTO(h5u_read_range(src, cols[0], H5T_NATIVE_UINT64, a, k, ii), st, done);
        FD_TRY_GOTO(h5u_read_range(src, cols[1], H5T_NATIVE_UINT64, a, k, jj), st, done);
        FD_TRY_GOTO(h5u_read_range(src, cols[2], H5T_NATIVE_FLOAT, a, k, rho), st, done);
        FD_TRY_GOTO(h5u_read_range(src, cols[3], H5T_NATIVE_DOUBLE, a, k, p), st, done);
        st = spearman_h5_append(w, ii, jj, rho, p, (size_t)k);
    }
done:
    free(ii);
    free(jj);
    free(rho);
    free(p);
    return st;
}

fd_status spearman_h5_adopt(spearman_h5 **out, const char *seg, const char *path)
{
    fd_status st = FD_OK;
    spearman_h5 *w = writer_new();
    if (!w) return fd_fail(FD_ERR_NOMEM, "out of memory");
    /* What made it a segment goes. */
    static const char *const dsets[] = {"records", "ckpt_hist", "ckpt_xhist", NULL};
    static const char *const attrs[] = {"format", "workload", "generation", "rank", "stage", "complete",
                                        "ckpt_pairs", "ckpt_selected", "pairs_complete", NULL};
    FD_TRY_GOTO(h5u_out_adopt(&w->out, path, seg, dsets, attrs), st, fail);
    H5_CHECK_GOTO(w->grp = H5Gopen2(w->out.file, "pairs", H5P_DEFAULT), st, fail);
    for (int c = 0; c < 4; c++) {
        const hid_t mem = c < 2 ? H5T_NATIVE_UINT64 : c == 2 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
        FD_TRY_GOTO(h5u_app_open(&w->col[c], w->grp, cols[c] + 6, mem), st, fail);
    }
    *out = w;
    return FD_OK;
fail:
    spearman_h5_abort(&w);
    return st;
}

fd_status spearman_h5_commit(spearman_h5 **pw, const spearman_meta *m)
{
    fd_status st = put_meta((*pw)->out.file, m);
    if (st != FD_OK) {
        spearman_h5_abort(pw);
        return st;
    }
    return finish(pw);
}

fd_status spearman_h5_commit_part(spearman_h5 **pw, const char *sha256, int rank, int ranks)
{
    hid_t f = (*pw)->out.file;
    fd_status st = h5u_attr_str(f, "format", "fcbo-dist spearman part");
    if (st == FD_OK) st = h5u_attr_u64(f, "format_version", FD_FORMAT_VERSION);
    if (st == FD_OK) st = h5u_attr_str(f, "input_sha256", sha256);
    if (st == FD_OK) st = h5u_attr_u64(f, "rank", (uint64_t)rank);
    if (st == FD_OK) st = h5u_attr_u64(f, "ranks", (uint64_t)ranks);
    if (st == FD_OK) st = h5u_attr_u64(f, "n_pairs", spearman_h5_count(*pw));
    if (st != FD_OK) {
        spearman_h5_abort(pw);
        return st;
    }
    return finish(pw);
}

fd_status spearman_master_write(const char *path, const char *run_id, const spearman_meta *m, const h5part_rank *rs,
                                int ranks)
{
    fd_status st = FD_OK;
    hid_t g = -1;
    h5u_out out = H5U_OUT_NONE;
    char(*names)[H5PART_NAME_MAX] = calloc((size_t)ranks, sizeof *names);
    h5u_piece *pc = calloc((size_t)ranks, sizeof *pc);
    if (!names || !pc) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    FD_TRY_GOTO(h5u_out_create(&out, path), st, done);
    const hid_t f = out.file;
    FD_TRY_GOTO(put_meta(f, m), st, done);
    FD_TRY_GOTO(h5part_put_parts(f, run_id, ranks), st, done);
    H5_CHECK_GOTO(g = H5Gcreate2(f, "pairs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    hid_t types[4] = {H5T_STD_U64LE, H5T_STD_U64LE, H5T_IEEE_F32LE, H5T_IEEE_F64LE};
    for (int c = 0; c < 4; c++) {
        for (int r = 0; r < ranks; r++) {
            rd_part_name(names[r], H5PART_NAME_MAX, "spearman", run_id, r);
            pc[r] = (h5u_piece){names[r], cols[c], rs[r].results, 0, rs[r].results};
        }
        FD_TRY_GOTO(h5u_concat(g, cols[c] + 6, types[c], pc, (size_t)ranks), st, done);
    }
    H5Gclose(g);
    g = -1;
    FD_TRY_GOTO(h5part_write_ranks(f, "spearman", run_id, rs, ranks, "pairs", "tiles", &g), st, done);
    H5Gclose(g);
    g = -1;
    st = h5u_out_commit(&out);
done:
    if (g >= 0) H5Gclose(g);
    h5u_out_abort(&out);
    free(names);
    free(pc);
    return st;
}

/* Every size a reader uses, against the datasets' own: a damaged or
 * edited file is refused here, not overrun later.  *rows, *jrows: the
 * bounds of i and j. */
static fd_status check_file(hid_t f, const char *path, uint64_t *rows, uint64_t *jrows)
{
    uint64_t n = 0;
    FD_TRY(h5u_expect_complete(f, path, "fcbo-dist spearman", FD_FORMAT_VERSION));
    FD_TRY(h5part_check(f, path, "spearman", "n_pairs", "ranks/pairs", cols));
    FD_TRY(h5u_read_u64_attr(f, path, "n_pairs", &n));
    uint64_t dropped = 0;
    FD_TRY(h5u_read_u64_attr(f, path, "rows", rows));
    FD_TRY(h5u_read_u64_attr(f, path, "dropped_rows", &dropped));
    *jrows = *rows;
    if (H5Aexists(f, "y_rows") > 0) FD_TRY(h5u_read_u64_attr(f, path, "y_rows", jrows));
    /* i and j are input row numbers, which count the dropped rows too (of
     * either input: the attribute sums them). */
    if (*rows > UINT64_MAX / 2 || *jrows > UINT64_MAX / 2 || dropped > UINT64_MAX / 4)
        return fd_fail(FD_ERR_INPUT, "%s: rows, y_rows or dropped_rows out of range", path);
    *rows += dropped;
    *jrows += dropped;
    for (int c = 0; c < 4; c++) FD_TRY(h5u_expect_len(f, path, cols_of(c), n, "n_pairs"));
    if (H5Lexists(f, "histogram", H5P_DEFAULT) > 0) {
        FD_TRY(h5u_expect_len(f, path, "histogram", SPEARMAN_HIST_BINS, "the histogram's definition"));
        FD_TRY(h5u_expect_len(f, path, "histogram_edges", SPEARMAN_HIST_BINS + 1, "the histogram's definition"));
    }
    return FD_OK;
}

fd_status spearman_h5_info(hid_t f, const char *path, FILE *out)
{
    static const char *strs[] = {"version", "command", "input", "input_sha256", "y_input", "y_input_sha256",
                                 "backend", "selection", "method", "missing"};
    static const char *nums[] = {"rows", "y_rows", "observations", "constant_rows", "y_constant_rows",
                                 "dropped_rows", "dropped_observations", "incomplete_rows", "y_incomplete_rows",
                                 "pairs_tested", "n_pairs", "count_only", "ranks", "threads", "parts",
                                 "resumed_records", "complete"};
    static const char *dbls[] = {"threshold", "rho_cut", "wall_seconds", "load_seconds", "pass1_seconds",
                                 "fdr_cutoff_seconds", "pass2_seconds", "checkpoint_seconds"};
    char buf[4096];
    uint64_t v, rows, jrows;
    double d;
    FD_TRY(check_file(f, path, &rows, &jrows));
    fprintf(out, "%-22s %s\n%-22s %s\n", "file", path, "format", "fcbo-dist spearman");
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        if (h5u_read_attr_str(f, strs[i], buf, sizeof buf) == FD_OK) fprintf(out, "%-22s %s\n", strs[i], buf);
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
        if (h5u_read_attr_u64(f, nums[i], &v) == FD_OK) fprintf(out, "%-22s %llu\n", nums[i], (unsigned long long)v);
        else if (!strcmp(nums[i], "complete")) fprintf(out, "%-22s 0\n", nums[i]);
    for (size_t i = 0; i < sizeof dbls / sizeof *dbls; i++)
        if (h5u_read_attr_f64(f, dbls[i], &d) == FD_OK) fprintf(out, "%-22s %.17g\n", dbls[i], d);
    fd_errclear();
    return h5part_print_ranks_file(f, out, "pairs", "tiles");
}

/* /names (or /y_names) when the file has them: as many as the input had
 * rows, between the rows kept and those plus every dropped one. */
static fd_status read_names(hid_t f, const char *path, const char *name, uint64_t kept, uint64_t bound, char ***out,
                            uint64_t *n)
{
    *out = NULL;
    *n = 0;
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) return FD_OK;
    FD_TRY(h5u_len(f, name, n));
    if (*n < kept || *n > bound)
        return fd_fail(FD_ERR_INPUT, "%s: /%s holds %llu names for %llu rows", path, name, (unsigned long long)*n,
                       (unsigned long long)kept);
    return h5u_read_strings(f, path, name, *n, out);
}

fd_status spearman_h5_text(hid_t f, const char *path, FILE *out)
{
    fd_status st = FD_OK;
    uint64_t n, *i = NULL, *j = NULL, rows, jrows, kept = 0, jkept = 0, nn = 0, nyn = 0;
    float *rho = NULL;
    double *p = NULL;
    char **names = NULL, **ynames = NULL;
    const uint64_t slice = (uint64_t)1 << 16;
    FD_TRY(check_file(f, path, &rows, &jrows));
    FD_TRY(h5u_read_u64_attr(f, path, "rows", &kept));
    jkept = kept;
    if (H5Aexists(f, "y_rows") > 0) FD_TRY(h5u_read_u64_attr(f, path, "y_rows", &jkept));
    FD_TRY_GOTO(read_names(f, path, "names", kept, rows, &names, &nn), st, done);
    FD_TRY_GOTO(read_names(f, path, "y_names", jkept, jrows, &ynames, &nyn), st, done);
    if (names && !ynames && !H5Aexists(f, "y_rows")) {
        ynames = names;
        nyn = nn;
    }
    FD_TRY(h5u_len(f, "pairs/i", &n));
    FD_ALLOC_GOTO(i, slice, st, done);
    FD_ALLOC_GOTO(j, slice, st, done);
    FD_ALLOC_GOTO(rho, slice, st, done);
    FD_ALLOC_GOTO(p, slice, st, done);
    for (uint64_t s = 0; s < n; s += slice) {
        uint64_t k = n - s < slice ? n - s : slice;
        FD_TRY_GOTO(h5u_read_range(f, "pairs/i", H5T_NATIVE_UINT64, s, k, i), st, done);
        FD_TRY_GOTO(h5u_read_range(f, "pairs/j", H5T_NATIVE_UINT64, s, k, j), st, done);
        FD_TRY_GOTO(h5u_read_range(f, "pairs/rho", H5T_NATIVE_FLOAT, s, k, rho), st, done);
        FD_TRY_GOTO(h5u_read_range(f, "pairs/p", H5T_NATIVE_DOUBLE, s, k, p), st, done);
        for (uint64_t x = 0; x < k; x++)
            if (i[x] >= rows || j[x] >= jrows) {
                st = fd_fail(FD_ERR_INPUT, "%s: pair %llu names row %llu and %llu, of %llu and %llu", path,
                             (unsigned long long)(s + x), (unsigned long long)i[x], (unsigned long long)j[x],
                             (unsigned long long)rows, (unsigned long long)jrows);
                goto done;
            }
        for (uint64_t x = 0; x < k; x++) {
            fprintf(out, "%llu %llu %.9g %.17g", (unsigned long long)i[x], (unsigned long long)j[x], rho[x], p[x]);
            /* Names (which may hold blanks) after the numbers, tab-separated. */
            if (names) fprintf(out, "\t%s", i[x] < nn ? names[i[x]] : "");
            if (ynames) fprintf(out, "\t%s", j[x] < nyn ? ynames[j[x]] : "");
            fputc('\n', out);
        }
    }
    if (ferror(out)) st = fd_fail(FD_ERR_IO, "writing pairs to standard output failed");
done:
    free(i);
    free(j);
    free(rho);
    free(p);
    if (ynames != names) fd_names_free(ynames, nyn);
    fd_names_free(names, nn);
    return st;
}
