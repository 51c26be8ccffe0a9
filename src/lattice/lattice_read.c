/* SPDX-License-Identifier: BSD-3-Clause */
/* Reading a lattice result (see lattice_read.h). */
#include "lattice_read.h"

#include "../io/h5util.h"
#include "../job/h5part.h"
#include "lattice_h5.h"
#include "lattice_master.h"
#include "../io/matrix_collect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One CSR pair G/offsets, G/ids of a file of n concepts: n + 1 offsets
 * from 0 to the number of ids (the offsets between are checked as they
 * are read: read_csr_slice). */
static fd_status check_csr(hid_t f, const char *path, const char *g, uint64_t n)
{
    char off[32], ids[32];
    uint64_t nids = 0, ends[2];
    snprintf(off, sizeof off, "%s/offsets", g);
    snprintf(ids, sizeof ids, "%s/ids", g);
    FD_TRY(h5u_expect_len(f, path, off, n + 1, "n_concepts"));
    if (h5u_len(f, ids, &nids) != FD_OK || h5u_read_range(f, off, H5T_NATIVE_UINT64, 0, 1, &ends[0]) != FD_OK ||
        h5u_read_range(f, off, H5T_NATIVE_UINT64, n, 1, &ends[1]) != FD_OK) {
        fd_errclear();
        return fd_fail(FD_ERR_INPUT, "%s: %s cannot be read", path, g);
    }
    if (ends[0] != 0 || ends[1] != nids)
        return fd_fail(FD_ERR_INPUT, "%s: %s runs from %llu to %llu over %llu ids", path, off,
                       (unsigned long long)ends[0], (unsigned long long)ends[1], (unsigned long long)nids);
    return FD_OK;
}

/* Every size a reader uses, against the datasets' own: a damaged or
 * edited file is refused here, not overrun later. */
static fd_status check_file(hid_t f, const char *path)
{
    uint64_t n = 0, nattr = 0, nobj = 0, ext = 0;
    FD_TRY(h5u_expect_complete(f, path, "fcbo-dist lattice", FD_FORMAT_VERSION));
    FD_TRY(h5u_read_u64_attr(f, path, "n_concepts", &n));
    FD_TRY(h5u_read_u64_attr(f, path, "n_attributes", &nattr));
    FD_TRY(h5u_read_u64_attr(f, path, "n_objects", &nobj));
    FD_TRY(h5u_read_u64_attr(f, path, "extents_stored", &ext));
    FD_TRY(h5u_expect_len(f, path, "supports", n, "n_concepts"));
    FD_TRY(check_csr(f, path, "intents", n));
    if (ext > 1 || (int)ext != (H5Lexists(f, "extents", H5P_DEFAULT) > 0))
        return fd_fail(FD_ERR_INPUT, "%s: extents_stored is %llu, and the file %s extents", path,
                       (unsigned long long)ext, H5Lexists(f, "extents", H5P_DEFAULT) > 0 ? "has" : "has no");
    if (ext) FD_TRY(check_csr(f, path, "extents", n));
    FD_TRY(h5u_expect_len(f, path, "attributes/ids", nattr, "n_attributes"));
    FD_TRY(h5u_expect_len(f, path, "attributes/names", nattr, "n_attributes"));
    if (H5Lexists(f, "objects", H5P_DEFAULT) > 0) FD_TRY(h5u_expect_len(f, path, "objects/names", nobj, "n_objects"));
    if (H5Lexists(f, "edges", H5P_DEFAULT) > 0) {
        uint64_t ne = 0, len = 0;
        FD_TRY(check_csr(f, path, "edges", n));
        FD_TRY(h5u_read_u64_attr(f, path, "n_edges", &ne));
        FD_TRY(h5u_len(f, "edges/ids", &len));
        if (ne != len)
            return fd_fail(FD_ERR_INPUT, "%s: n_edges is %llu, and edges/ids has %llu", path, (unsigned long long)ne,
                           (unsigned long long)len);
    }
    return FD_OK;
}

fd_status lattice_read_open(const char *path, hid_t *f)
{
    char fmt[64];
    if (access(path, R_OK) != 0) return fd_fail(FD_ERR_INPUT, "%s: cannot open: no such readable file", path);
    *f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*f < 0) return fd_fail(FD_ERR_INPUT, "%s: not an HDF5 file", path);
    if (h5u_read_attr_str(*f, "format", fmt, sizeof fmt) != FD_OK || strcmp(fmt, "fcbo-dist lattice") != 0) {
        H5Fclose(*f);
        fd_errclear();
        return fd_fail(FD_ERR_INPUT, "%s: not a fcbo-dist lattice file", path);
    }
    fd_status st = lattice_master_check(*f, path);
    if (st == FD_OK) st = check_file(*f, path);
    if (st != FD_OK) H5Fclose(*f);
    return st;
}

fd_status lattice_read_info(const char *path, FILE *out)
{
    hid_t f;
    FD_TRY(lattice_read_open(path, &f));
    static const char *strs[] = {"version", "command", "input", "input_sha256", "input_format", "backend"};
    static const char *nums[] = {"n_objects", "n_attributes", "n_concepts", "n_edges", "min_support", "threads", "ranks",
                                 "closures", "canonicity_failures", "pruned_by_failed_sets", "extents_stored",
                                 "resumed_subtrees", "complete"};
    char buf[4096];
    uint64_t v;
    double d;
    fprintf(out, "%-22s %s\n%-22s %s\n", "file", path, "format", "fcbo-dist lattice");
    /* What is printed was checked against the datasets (check_file). */
    for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
        if (h5u_read_attr_str(f, strs[i], buf, sizeof buf) == FD_OK) fprintf(out, "%-22s %s\n", strs[i], buf);
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
        if (h5u_read_attr_u64(f, nums[i], &v) == FD_OK) fprintf(out, "%-22s %llu\n", nums[i], (unsigned long long)v);
        else if (!strcmp(nums[i], "complete")) fprintf(out, "%-22s 0\n", nums[i]);
    if (h5u_read_attr_f64(f, "wall_seconds", &d) == FD_OK) fprintf(out, "%-22s %.3f\n", "wall_seconds", d);
    if (h5u_read_attr_u64(f, "parts", &v) == FD_OK) fprintf(out, "%-22s %llu (all present and complete)\n", "parts", (unsigned long long)v);
    fd_errclear();
    fd_status st = h5part_print_ranks_file(f, out, "concepts", "subtrees");
    H5Fclose(f);
    return st;
}

fd_status lattice_read_text(const char *path, FILE *out)
{
    fd_status st = FD_OK;
    hid_t f = -1;
    text_writer *tw = NULL;
    FD_TRY(lattice_read_open(path, &f));
    st = text_writer_create(&tw, out);
    if (st == FD_OK) st = lattice_h5_stream(f, path, 0, text_writer_as(tw));
    text_writer_destroy(&tw);
    H5Fclose(f);
    return st;
}


/* The intents by name: ids looked up in /attributes/ids (sorted here),
 * each id the file's intents hold must be listed there. */
typedef struct {
    FILE *out;
    uint64_t m;
    uint32_t *ids;   /* sorted */
    uint64_t *at;    /* ids[k]'s name is names[at[k]] */
    char **names;
    const char *path;
} names_writer;

static int cmp_id(const void *a, const void *b, void *ctx)
{
    const uint32_t *ids = ctx;
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return ids[x] < ids[y] ? -1 : ids[x] > ids[y];
}

static fd_status names_write(void *self, const concept_batch *b)
{
    names_writer *w = self;
    uint64_t start = 0;
    for (uint64_t c = 0; c < b->n; c++) {
        for (uint64_t k = start; k < b->int_end[c]; k++) {
            const uint32_t id = b->int_ids[k];
            uint64_t lo = 0, hi = w->m;
            while (lo < hi) {
                const uint64_t mid = lo + (hi - lo) / 2;
                if (w->ids[mid] < id) lo = mid + 1;
                else hi = mid;
            }
            if (lo == w->m || w->ids[lo] != id)
                return fd_fail(FD_ERR_INPUT, "%s: attribute id %u of an intent is not in /attributes/ids", w->path, id);
            fprintf(w->out, k > start ? "\t%s" : "%s", w->names[w->at[lo]]);
        }
        fputc('\n', w->out);
        start = b->int_end[c];
    }
    return ferror(w->out) ? fd_fail(FD_ERR_IO, "writing the intents: %s", strerror(errno)) : FD_OK;
}

fd_status lattice_read_text_names(const char *path, FILE *out)
{
    fd_status st = FD_OK;
    hid_t f = -1;
    names_writer w = {out, 0, NULL, NULL, NULL, path};
    uint64_t *order = NULL;
    uint32_t *raw = NULL;
    FD_TRY(lattice_read_open(path, &f));
    FD_TRY_GOTO(h5u_read_u64_attr(f, path, "n_attributes", &w.m), st, done);
    FD_TRY_GOTO(h5u_expect_len(f, path, "attributes/ids", w.m, "n_attributes"), st, done);
    FD_TRY_GOTO(h5u_read_strings(f, path, "attributes/names", w.m, &w.names), st, done);
    FD_ALLOC_GOTO(raw, w.m ? w.m : 1, st, done);
    FD_ALLOC_GOTO(order, w.m ? w.m : 1, st, done);
    FD_ALLOC_GOTO(w.ids, w.m ? w.m : 1, st, done);
    FD_ALLOC_GOTO(w.at, w.m ? w.m : 1, st, done);
    if (w.m) FD_TRY_GOTO(h5u_read_range(f, "attributes/ids", H5T_NATIVE_UINT32, 0, w.m, raw), st, done);
    for (uint64_t k = 0; k < w.m; k++) order[k] = k;
    qsort_r(order, w.m, sizeof *order, cmp_id, raw);
    for (uint64_t k = 0; k < w.m; k++) {
        w.ids[k] = raw[order[k]];
        w.at[k] = order[k];
        if (k && w.ids[k] == w.ids[k - 1]) {
            st = fd_fail(FD_ERR_INPUT, "%s: /attributes/ids repeats id %u", path, w.ids[k]);
            goto done;
        }
    }
    st = lattice_h5_stream(f, path, 0, (concept_writer){names_write, &w});
done:
    fd_names_free(w.names, w.names ? w.m : 0);
    free(order);
    free(raw);
    free(w.ids);
    free(w.at);
    H5Fclose(f);
    return st;
}
