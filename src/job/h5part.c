/* SPDX-License-Identifier: BSD-3-Clause */
#include "h5part.h"

#include "../io/h5util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

fd_status h5part_put_parts(hid_t master, const char *run_id, int ranks)
{
    FD_TRY(h5u_attr_u64(master, "parts", (uint64_t)ranks));
    return h5u_attr_str(master, "run_id", run_id);
}

/* The directory part of path ("." when there is none), into buf. */
static void dir_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(buf, cap, ".");
    else if (slash == path) snprintf(buf, cap, "/");
    else snprintf(buf, cap, "%.*s", (int)(slash - path), path);
}

static fd_status check_one(const char *dir, const char *master, const char *workload, const char *run_id, int r,
                           const char *sha, uint64_t want, const char *count_attr)
{
    char name[H5PART_NAME_MAX], file[4096 + H5PART_NAME_MAX + 2], fmt[64], psha[80], part_format[64];
    uint64_t complete = 0, n = 0;
    struct stat sb;
    rd_part_name(name, sizeof name, workload, run_id, r);
    snprintf(file, sizeof file, "%s/%s", dir, name);
    snprintf(part_format, sizeof part_format, "fcbo-dist %s part", workload);
    if (stat(file, &sb) != 0 || !S_ISREG(sb.st_mode) || access(file, R_OK) != 0)
        return fd_fail(FD_ERR_INPUT, "%s: its part %s is missing or unreadable (HDF5 would read it as zeros)", master,
                       file);
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return fd_fail(FD_ERR_INPUT, "%s: its part %s is not an HDF5 file", master, file);
    int ok = h5u_read_attr_str(f, "format", fmt, sizeof fmt) == FD_OK && !strcmp(fmt, part_format) &&
             h5u_read_attr_u64(f, "complete", &complete) == FD_OK && complete == 1 &&
             h5u_read_attr_str(f, "input_sha256", psha, sizeof psha) == FD_OK &&
             h5u_read_attr_u64(f, count_attr, &n) == FD_OK;
    H5Fclose(f);
    fd_errclear();
    if (!ok) return fd_fail(FD_ERR_INPUT, "%s: its part %s is not a complete '%s'", master, file, part_format);
    if (strcmp(psha, sha) != 0)
        return fd_fail(FD_ERR_INPUT, "%s: its part %s comes from a different input (another run?)", master, file);
    if (n != want)
        return fd_fail(FD_ERR_INPUT, "%s: its part %s holds %llu records, the master expects %llu (another run?)",
                       master, file, (unsigned long long)n, (unsigned long long)want);
    return FD_OK;
}

/* Every mapping of the virtual dataset dset names one of the parts: the
 * names HDF5 opens are those stored in the mappings, which an edited
 * master could point anywhere (a FIFO would block the read). */
static fd_status check_sources(hid_t master, const char *path, const char *dset, const char *workload,
                               const char *run_id, uint64_t parts)
{
    fd_status st = FD_OK;
    hid_t ds = -1, dcpl = -1;
    size_t count = 0;
    char name[H5PART_NAME_MAX], src[H5PART_NAME_MAX + 2];
    if (H5Lexists(master, dset, H5P_DEFAULT) <= 0) return FD_OK; /* the readers say what is missing */
    H5_CHECK_GOTO(ds = H5Dopen2(master, dset, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(dcpl = H5Dget_create_plist(ds), st, done);
    if (H5Pget_layout(dcpl) != H5D_VIRTUAL) {
        st = fd_fail(FD_ERR_INPUT, "%s: %s is not a virtual dataset over the parts", path, dset);
        goto done;
    }
    H5_CHECK_GOTO(H5Pget_virtual_count(dcpl, &count), st, done);
    for (size_t m = 0; m < count; m++) {
        const ssize_t len = H5Pget_virtual_filename(dcpl, m, src, sizeof src);
        int ok = len > 0 && (size_t)len < sizeof src;
        if (ok) {
            ok = 0;
            for (uint64_t r = 0; r < parts && !ok; r++) {
                rd_part_name(name, sizeof name, workload, run_id, (int)r);
                ok = !strcmp(src, name);
            }
        }
        if (!ok) {
            st = fd_fail(FD_ERR_INPUT, "%s: %s reads from a file that is not one of its parts", path, dset);
            goto done;
        }
    }
done:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (ds >= 0) H5Dclose(ds);
    return st;
}

/* Every mapping of dset reads within its part's dataset: HDF5 reads what
 * a mapping selects past the end of an edited or truncated part as fill
 * values without a word, so a part whose dataset is shorter than the
 * master says is refused here.  After check_one: the parts are there,
 * regular files and complete. */
static fd_status check_extents(hid_t master, const char *path, const char *dir, const char *dset)
{
    fd_status st = FD_OK;
    hid_t ds = -1, dcpl = -1;
    size_t count = 0;
    char src[H5PART_NAME_MAX + 2], sdset[256], file[4096 + H5PART_NAME_MAX + 2];
    if (H5Lexists(master, dset, H5P_DEFAULT) <= 0) return FD_OK;
    H5_CHECK_GOTO(ds = H5Dopen2(master, dset, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(dcpl = H5Dget_create_plist(ds), st, done);
    H5_CHECK_GOTO(H5Pget_virtual_count(dcpl, &count), st, done);
    for (size_t m = 0; m < count && st == FD_OK; m++) {
        hsize_t start[H5S_MAX_RANK], end[H5S_MAX_RANK], have[H5S_MAX_RANK];
        hid_t space = -1, f = -1, sd = -1, sp = -1;
        const ssize_t a = H5Pget_virtual_filename(dcpl, m, src, sizeof src);
        const ssize_t b = H5Pget_virtual_dsetname(dcpl, m, sdset, sizeof sdset);
        int ok = a > 0 && (size_t)a < sizeof src && b > 0 && (size_t)b < sizeof sdset;
        if (ok) {
            snprintf(file, sizeof file, "%s/%s", dir, src);
            ok = (space = H5Pget_virtual_srcspace(dcpl, m)) >= 0 && H5Sget_select_npoints(space) >= 0;
        }
        const int rank = ok ? H5Sget_simple_extent_ndims(space) : -1;
        ok = ok && rank >= 0 && rank <= H5S_MAX_RANK && (H5Sget_select_npoints(space) == 0 ||
                                                          H5Sget_select_bounds(space, start, end) >= 0);
        if (ok && H5Sget_select_npoints(space) > 0) {
            ok = (f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT)) >= 0 && (sd = H5Dopen2(f, sdset, H5P_DEFAULT)) >= 0 &&
                 (sp = H5Dget_space(sd)) >= 0 && H5Sget_simple_extent_ndims(sp) == rank &&
                 H5Sget_simple_extent_dims(sp, have, NULL) == rank;
            for (int d = 0; ok && d < rank; d++) ok = end[d] < have[d];
        }
        if (sp >= 0) H5Sclose(sp);
        if (sd >= 0) H5Dclose(sd);
        if (f >= 0) H5Fclose(f);
        if (space >= 0) H5Sclose(space);
        if (!ok) {
            fd_errclear();
            st = fd_fail(FD_ERR_INPUT, "%s: %s reads past the end of %s in its part %s (a truncated or edited part?)",
                         path, dset, sdset, src);
        }
    }
done:
    if (dcpl >= 0) H5Pclose(dcpl);
    if (ds >= 0) H5Dclose(ds);
    return st;
}

fd_status h5part_check(hid_t master, const char *path, const char *workload, const char *count_attr,
                       const char *counts_dset, const char *const *vds)
{
    fd_status st = FD_OK;
    uint64_t parts = 0, len = 0, *n = NULL;
    char dir[4096], sha[80], run_id[64] = "";
    if (H5Aexists(master, "parts") <= 0) return FD_OK; /* a single file */
    FD_TRY(h5u_read_attr_u64(master, "parts", &parts));
    FD_TRY(h5u_read_attr_str(master, "input_sha256", sha, sizeof sha));
    /* Masters written before run ids (format_version 1) name their parts
     * part-RRRRR.h5. */
    if (H5Aexists(master, "run_id") > 0) {
        FD_TRY(h5u_read_attr_str(master, "run_id", run_id, sizeof run_id));
        if (!rd_is_run_id(run_id)) return fd_fail(FD_ERR_INPUT, "%s: its run_id is not a run id", path);
    }
    if (parts == 0 || parts > (1u << 24))
        return fd_fail(FD_ERR_INPUT, "%s: bad number of parts %llu", path, (unsigned long long)parts);
    FD_TRY(h5u_len(master, counts_dset, &len));
    if (len != parts)
        return fd_fail(FD_ERR_INPUT, "%s: %s has %llu entries for %llu parts", path, counts_dset,
                       (unsigned long long)len, (unsigned long long)parts);
    FD_ALLOC_GOTO(n, parts, st, done);
    FD_TRY_GOTO(h5u_read_range(master, counts_dset, H5T_NATIVE_UINT64, 0, parts, n), st, done);
    for (size_t k = 0; vds && vds[k]; k++) FD_TRY_GOTO(check_sources(master, path, vds[k], workload, run_id, parts), st, done);
    dir_of(path, dir, sizeof dir);
    for (uint64_t r = 0; r < parts; r++)
        FD_TRY_GOTO(check_one(dir, path, workload, run_id, (int)r, sha, n[r], count_attr), st, done);
    for (size_t k = 0; vds && vds[k]; k++) FD_TRY_GOTO(check_extents(master, path, dir, vds[k]), st, done);
done:
    free(n);
    return st;
}

void h5part_rank_times(h5part_rank *r, double busy_thread_seconds, int threads, double wall_seconds)
{
    r->threads = (uint32_t)(threads > 0 ? threads : 1);
    r->busy_seconds = busy_thread_seconds / r->threads;
    r->idle_seconds = wall_seconds > r->busy_seconds ? wall_seconds - r->busy_seconds : 0;
    memset(r->host, 0, sizeof r->host);
    gethostname(r->host, sizeof r->host - 1);
}

fd_status h5part_write_ranks(hid_t f, const char *workload, const char *run_id, const h5part_rank *rs, int ranks,
                             const char *results, const char *units, hid_t *group)
{
    fd_status st = FD_OK;
    size_t n = (size_t)ranks;
    hid_t g = -1;
    uint64_t *u = NULL;
    uint32_t *t = NULL;
    double *d = NULL;
    char **s = NULL;
    char(*names)[H5PART_NAME_MAX] = NULL;
    FD_ALLOC_GOTO(u, n, st, done);
    FD_ALLOC_GOTO(t, n, st, done);
    FD_ALLOC_GOTO(d, n, st, done);
    FD_ALLOC_GOTO(s, n, st, done);
    FD_ALLOC_GOTO(names, n, st, done);
    H5_CHECK_GOTO(g = H5Gcreate2(f, "ranks", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    for (size_t r = 0; r < n; r++) {
        rd_part_name(names[r], H5PART_NAME_MAX, workload, run_id, (int)r);
        s[r] = names[r];
    }
    FD_TRY_GOTO(h5u_write_strings(g, "part", s, n), st, done);
    for (size_t r = 0; r < n; r++) s[r] = (char *)rs[r].host;
    FD_TRY_GOTO(h5u_write_strings(g, "host", s, n), st, done);
    for (size_t r = 0; r < n; r++) t[r] = rs[r].threads;
    FD_TRY_GOTO(h5u_write_1d(g, "threads", H5T_STD_U32LE, H5T_NATIVE_UINT32, t, n), st, done);
    for (size_t r = 0; r < n; r++) u[r] = rs[r].results;
    FD_TRY_GOTO(h5u_write_1d(g, results, H5T_STD_U64LE, H5T_NATIVE_UINT64, u, n), st, done);
    for (size_t r = 0; r < n; r++) u[r] = rs[r].units;
    FD_TRY_GOTO(h5u_write_1d(g, units, H5T_STD_U64LE, H5T_NATIVE_UINT64, u, n), st, done);
    for (size_t r = 0; r < n; r++) d[r] = rs[r].busy_seconds;
    FD_TRY_GOTO(h5u_write_1d(g, "busy_seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, d, n), st, done);
    for (size_t r = 0; r < n; r++) d[r] = rs[r].idle_seconds;
    FD_TRY_GOTO(h5u_write_1d(g, "idle_seconds", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, d, n), st, done);
    *group = g;
    g = -1;
done:
    if (g >= 0) H5Gclose(g);
    free(u);
    free(t);
    free(d);
    free(s);
    free(names);
    return st;
}

void h5part_print_ranks(FILE *out, const char *results, const char *units, const h5part_rank *rs, int ranks)
{
    double sum = 0, max = 0;
    fprintf(out, "%6s %14s %10s %10s %10s\n", "rank", results, units, "busy_s", "idle_s");
    for (int r = 0; r < ranks; r++) {
        fprintf(out, "%6d %14llu %10llu %10.3f %10.3f\n", r, (unsigned long long)rs[r].results,
                (unsigned long long)rs[r].units, rs[r].busy_seconds, rs[r].idle_seconds);
        sum += rs[r].busy_seconds;
        if (rs[r].busy_seconds > max) max = rs[r].busy_seconds;
    }
    if (ranks > 0 && sum > 0) fprintf(out, "load imbalance (max busy / mean busy) %.3f\n", max / (sum / ranks));
}

fd_status h5part_print_ranks_file(hid_t f, FILE *out, const char *results, const char *units)
{
    fd_status st = FD_OK;
    uint64_t P = 0, *u = NULL;
    double *d = NULL;
    h5part_rank *rs = NULL;
    char path[96];
    if (H5Lexists(f, "ranks", H5P_DEFAULT) <= 0) return FD_OK;
    snprintf(path, sizeof path, "ranks/%s", results);
    FD_TRY(h5u_len(f, path, &P));
    FD_ALLOC_GOTO(u, P, st, done);
    FD_ALLOC_GOTO(d, P, st, done);
    FD_ALLOC_GOTO(rs, P, st, done);
    FD_TRY_GOTO(h5u_read_range(f, path, H5T_NATIVE_UINT64, 0, P, u), st, done);
    for (uint64_t r = 0; r < P; r++) rs[r].results = u[r];
    snprintf(path, sizeof path, "ranks/%s", units);
    FD_TRY_GOTO(h5u_read_range(f, path, H5T_NATIVE_UINT64, 0, P, u), st, done);
    for (uint64_t r = 0; r < P; r++) rs[r].units = u[r];
    FD_TRY_GOTO(h5u_read_range(f, "ranks/busy_seconds", H5T_NATIVE_DOUBLE, 0, P, d), st, done);
    for (uint64_t r = 0; r < P; r++) rs[r].busy_seconds = d[r];
    FD_TRY_GOTO(h5u_read_range(f, "ranks/idle_seconds", H5T_NATIVE_DOUBLE, 0, P, d), st, done);
    for (uint64_t r = 0; r < P; r++) rs[r].idle_seconds = d[r];
    h5part_print_ranks(out, results, units, rs, (int)P);
done:
    free(u);
    free(d);
    free(rs);
    return st;
}
