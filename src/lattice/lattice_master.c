/* SPDX-License-Identifier: BSD-3-Clause */
/* The master file of a partitioned lattice: virtual datasets over the
 * ranks' part files, the metadata of the whole run, and a table of what
 * each rank did (docs/formats.md). */
#include "lattice_master.h"

#include "../job/h5part.h"
#include "../io/h5util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PART_NAME_MAX H5PART_NAME_MAX

/* The pieces of one logical dataset, one per rank in rank order.  For
 * CSR offsets (offsets = 1) a part has n+1 entries that are already
 * global: each part contributes its first n, the last part also its end. */
static fd_status concat(hid_t loc, const char *name, const char *dset, hid_t type, char (*names)[PART_NAME_MAX],
                        const uint64_t *len, int ranks, int offsets)
{
    h5u_piece *pc = calloc((size_t)ranks + 1, sizeof *pc);
    if (!pc) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (int r = 0; r < ranks; r++)
        pc[r] = (h5u_piece){names[r], dset, len[r] + (uint64_t)offsets, 0, len[r]};
    int n = ranks;
    if (offsets) {
        int last = ranks - 1;
        pc[n++] = (h5u_piece){names[last], dset, len[last] + 1, len[last], 1};
    }
    fd_status st = h5u_concat(loc, name, type, pc, (size_t)n);
    free(pc);
    return st;
}

/* /ranks: the shared columns, plus first_concept and closures. */
static fd_status write_rank_table(hid_t f, const char *run_id, const lattice_rank *rs, int ranks)
{
    fd_status st = FD_OK;
    hid_t g = -1;
    size_t n = (size_t)ranks;
    h5part_rank *base = NULL;
    uint64_t *u = NULL, first = 0;
    FD_ALLOC_GOTO(base, n, st, done);
    FD_ALLOC_GOTO(u, n, st, done);
    for (size_t r = 0; r < n; r++) base[r] = rs[r].r;
    FD_TRY_GOTO(h5part_write_ranks(f, "lattice", run_id, base, ranks, "concepts", "subtrees", &g), st, done);
    for (size_t r = 0; r < n; r++) {
        u[r] = first;
        first += rs[r].r.results;
    }
    FD_TRY_GOTO(h5u_write_1d(g, "first_concept", H5T_STD_U64LE, H5T_NATIVE_UINT64, u, n), st, done);
    for (size_t r = 0; r < n; r++) u[r] = rs[r].closures;
    FD_TRY_GOTO(h5u_write_1d(g, "closures", H5T_STD_U64LE, H5T_NATIVE_UINT64, u, n), st, done);
done:
    if (g >= 0) H5Gclose(g);
    free(base);
    free(u);
    return st;
}

fd_status lattice_master_write(const char *path, const char *run_id, const fca_context *ctx, const lattice_meta *meta,
                               const lattice_rank *rs, int ranks, int with_extents, int with_edges)
{
    fd_status st = FD_OK;
    hid_t g = -1;
    h5u_out out = H5U_OUT_NONE;
    char(*names)[PART_NAME_MAX] = calloc((size_t)ranks, sizeof *names);
    uint64_t *n = calloc((size_t)ranks, sizeof *n), *ni = calloc((size_t)ranks, sizeof *ni),
             *ne = calloc((size_t)ranks, sizeof *ne), *nc = calloc((size_t)ranks, sizeof *nc), total = 0, edges = 0;
    if (!names || !n || !ni || !ne || !nc) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    for (int r = 0; r < ranks; r++) {
        rd_part_name(names[r], PART_NAME_MAX, "lattice", run_id, r);
        n[r] = rs[r].r.results;
        ni[r] = rs[r].int_ids;
        ne[r] = rs[r].ext_ids;
        nc[r] = rs[r].edges;
        total += n[r];
        edges += nc[r];
    }
    FD_TRY_GOTO(h5u_out_create(&out, path), st, done);
    const hid_t f = out.file;
    FD_TRY_GOTO(lattice_h5_put_meta(f, ctx, meta, total, with_extents), st, done);
    FD_TRY_GOTO(h5part_put_parts(f, run_id, ranks), st, done);
    FD_TRY_GOTO(concat(f, "supports", "supports", H5T_STD_U32LE, names, n, ranks, 0), st, done);
    H5_CHECK_GOTO(g = H5Gcreate2(f, "intents", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    FD_TRY_GOTO(concat(g, "offsets", "intents/offsets", H5T_STD_U64LE, names, n, ranks, 1), st, done);
    FD_TRY_GOTO(concat(g, "ids", "intents/ids", lattice_h5_id_type(ctx, 0), names, ni, ranks, 0), st, done);
    H5Gclose(g);
    g = -1;
    if (with_extents) {
        H5_CHECK_GOTO(g = H5Gcreate2(f, "extents", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
        FD_TRY_GOTO(concat(g, "offsets", "extents/offsets", H5T_STD_U64LE, names, n, ranks, 1), st, done);
        FD_TRY_GOTO(concat(g, "ids", "extents/ids", lattice_h5_id_type(ctx, 1), names, ne, ranks, 0), st, done);
        H5Gclose(g);
        g = -1;
    }
    if (with_edges) {
        H5_CHECK_GOTO(g = H5Gcreate2(f, "edges", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
        FD_TRY_GOTO(concat(g, "offsets", "edges/offsets", H5T_STD_U64LE, names, n, ranks, 1), st, done);
        FD_TRY_GOTO(concat(g, "ids", "edges/ids", H5T_STD_U64LE, names, nc, ranks, 0), st, done);
        H5Gclose(g);
        g = -1;
        FD_TRY_GOTO(h5u_attr_u64(f, "n_edges", edges), st, done);
    }
    FD_TRY_GOTO(write_rank_table(f, run_id, rs, ranks), st, done);
    /* The caller writes the master only once every part is committed. */
    st = h5u_out_commit(&out);
done:
    if (g >= 0) H5Gclose(g);
    h5u_out_abort(&out);
    free(names);
    free(n);
    free(ni);
    free(ne);
    free(nc);
    return st;
}

fd_status lattice_master_check(hid_t f, const char *path)
{
    static const char *const vds[] = {"supports",    "intents/offsets", "intents/ids",  "extents/offsets",
                                      "extents/ids", "edges/offsets",   "edges/ids",    NULL};
    return h5part_check(f, path, "lattice", "n_concepts", "ranks/concepts", vds);
}
