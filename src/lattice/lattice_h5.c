/* SPDX-License-Identifier: BSD-3-Clause */
#include "lattice_h5.h"

#include "../job/h5part.h"
#include "../io/h5util.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK ((uint64_t)1 << 18)

struct lattice_h5 {
    h5u_out out;    /* the file, under its temporary name until the commit */
    hid_t gint, gext;
    h5u_app int_off, int_ids, supp, ext_off, ext_ids;
    int with_extents;
    uint64_t *offbuf;
    size_t offcap;
};

static void close_all(lattice_h5 *w)
{
    h5u_app_close(&w->int_off);
    h5u_app_close(&w->int_ids);
    h5u_app_close(&w->supp);
    h5u_app_close(&w->ext_off);
    h5u_app_close(&w->ext_ids);
    if (w->gint >= 0) H5Gclose(w->gint);
    if (w->gext >= 0) H5Gclose(w->gext);
    w->gint = w->gext = -1;
}

void lattice_h5_abort(lattice_h5 **pw)
{
    lattice_h5 *w = *pw;
    if (!w) return;
    close_all(w);
    h5u_out_abort(&w->out);
    free(w->offbuf);
    free(w);
    *pw = NULL;
}

/* Ids fit in 16 bits for most contexts; halving the largest dataset pays. */
static hid_t id_type(uint32_t max) { return max <= UINT16_MAX ? H5T_STD_U16LE : H5T_STD_U32LE; }

/* A writer with nothing open yet. */
static lattice_h5 *writer_new(int with_extents)
{
    lattice_h5 *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->out.file = w->gint = w->gext = -1;
    w->int_off.ds = w->int_ids.ds = w->supp.ds = w->ext_off.ds = w->ext_ids.ds = -1;
    w->with_extents = with_extents;
    return w;
}

fd_status lattice_h5_create(lattice_h5 **out, const char *path, const char *replaces, const fca_context *ctx,
                            int with_extents)
{
    fd_status st = FD_OK;
    lattice_h5 *w = writer_new(with_extents);
    if (!w) return fd_fail(FD_ERR_NOMEM, "out of memory");
    FD_TRY_GOTO(h5u_out_create_for(&w->out, path, replaces), st, fail);
    H5_CHECK_GOTO(w->gint = H5Gcreate2(w->out.file, "intents", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, fail);
    FD_TRY_GOTO(h5u_app_create(&w->int_off, w->gint, "offsets", H5T_STD_U64LE, H5T_NATIVE_UINT64, CHUNK), st, fail);
    FD_TRY_GOTO(h5u_app_create(&w->int_ids, w->gint, "ids", lattice_h5_id_type(ctx, 0), H5T_NATIVE_UINT32, CHUNK), st, fail);
    FD_TRY_GOTO(h5u_app_create(&w->supp, w->out.file, "supports", H5T_STD_U32LE, H5T_NATIVE_UINT32, CHUNK), st, fail);
    uint64_t zero = 0;
    FD_TRY_GOTO(h5u_app_append(&w->int_off, &zero, 1), st, fail);
    if (with_extents) {
        H5_CHECK_GOTO(w->gext = H5Gcreate2(w->out.file, "extents", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, fail);
        FD_TRY_GOTO(h5u_app_create(&w->ext_off, w->gext, "offsets", H5T_STD_U64LE, H5T_NATIVE_UINT64, CHUNK), st, fail);
        FD_TRY_GOTO(h5u_app_create(&w->ext_ids, w->gext, "ids", lattice_h5_id_type(ctx, 1), H5T_NATIVE_UINT32, CHUNK), st, fail);
        FD_TRY_GOTO(h5u_app_append(&w->ext_off, &zero, 1), st, fail);
    }
    *out = w;
    return FD_OK;
fail:
    lattice_h5_abort(&w);
    return st;
}

/* Appends batch-local CSR ends as global offsets. */
static fd_status append_offsets(lattice_h5 *w, h5u_app *off, const uint64_t *end, uint64_t n, uint64_t base)
{
    FD_TRY(fd_grow((void **)&w->offbuf, &w->offcap, n, sizeof *w->offbuf));
    for (uint64_t i = 0; i < n; i++) w->offbuf[i] = base + end[i];
    return h5u_app_append(off, w->offbuf, n);
}

static fd_status h5_write(void *self, const concept_batch *b)
{
    lattice_h5 *w = self;
    uint64_t base = w->int_ids.n;
    FD_TRY(h5u_app_append(&w->int_ids, b->int_ids, b->nint));
    FD_TRY(append_offsets(w, &w->int_off, b->int_end, b->n, base));
    FD_TRY(h5u_app_append(&w->supp, b->supp, b->n));
    if (w->with_extents) {
        base = w->ext_ids.n;
        FD_TRY(h5u_app_append(&w->ext_ids, b->ext_ids, b->next));
        FD_TRY(append_offsets(w, &w->ext_off, b->ext_end, b->n, base));
    }
    return FD_OK;
}

concept_writer lattice_h5_as(lattice_h5 *w) { return (concept_writer){h5_write, w}; }

void lattice_h5_counts(const lattice_h5 *w, uint64_t *n, uint64_t *nint, uint64_t *next)
{
    *n = w->supp.n;
    *nint = w->int_ids.n;
    *next = w->with_extents ? w->ext_ids.n : 0;
}

hid_t lattice_h5_id_type(const fca_context *ctx, int extents)
{
    uint32_t max = 0;
    if (extents) return id_type(ctx->n_obj);
    for (uint32_t a = 0; a < ctx->n_attr; a++)
        if (ctx->attr_label[a] > max) max = ctx->attr_label[a];
    return id_type(max);
}

fd_status lattice_h5_put_meta(hid_t f, const fca_context *ctx, const lattice_meta *m, uint64_t n_concepts,
                              int with_extents)
{
    fd_status st = FD_OK;
    hid_t g = -1;
    FD_TRY_GOTO(h5u_attr_str(f, "format", "fcbo-dist lattice"), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "format_version", FD_FORMAT_VERSION), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "version", FD_VERSION), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "command", m->command ? m->command : ""), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "input", ctx->source ? ctx->source : ""), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "input_sha256", ctx->sha256), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "input_format", ctx_format_name(ctx->format)), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "backend", m->backend), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_objects", ctx->n_obj), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_attributes", ctx->n_attr), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "min_support", m->min_support), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "threads", (uint64_t)m->threads), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "ranks", (uint64_t)m->ranks), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_concepts", n_concepts), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "closures", m->stats.closures), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "canonicity_failures", m->stats.fails), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "pruned_by_failed_sets", m->stats.skipped_nj), st, fail);
    FD_TRY_GOTO(h5u_attr_f64(f, "wall_seconds", m->wall_seconds), st, fail);
    FD_TRY_GOTO(h5u_attr_f64(f, "checkpoint_seconds", m->checkpoint_seconds), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "resumed_subtrees", m->resumed_subtrees), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "extents_stored", (uint64_t)with_extents), st, fail);
    H5_CHECK_GOTO(g = H5Gcreate2(f, "attributes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, fail);
    FD_TRY_GOTO(h5u_write_1d(g, "ids", H5T_STD_U32LE, H5T_NATIVE_UINT32, ctx->attr_label, ctx->n_attr), st, fail);
    FD_TRY_GOTO(h5u_write_strings(g, "names", ctx->attr_names, ctx->n_attr), st, fail);
    H5Gclose(g);
    g = -1;
    if (ctx->obj_names) {
        H5_CHECK_GOTO(g = H5Gcreate2(f, "objects", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, fail);
        FD_TRY_GOTO(h5u_write_strings(g, "names", ctx->obj_names, ctx->n_obj), st, fail);
        H5Gclose(g);
        g = -1;
    }
fail:
    if (g >= 0) H5Gclose(g);
    return st;
}

/* Closes the datasets, then marks the file complete, closes it and renames
 * it into place. */
static fd_status finish(lattice_h5 **pw)
{
    lattice_h5 *w = *pw;
    fd_status st = FD_OK;
    FD_TRY_GOTO(h5u_app_close(&w->int_off), st, fail);
    FD_TRY_GOTO(h5u_app_close(&w->int_ids), st, fail);
    FD_TRY_GOTO(h5u_app_close(&w->supp), st, fail);
    FD_TRY_GOTO(h5u_app_close(&w->ext_off), st, fail);
    FD_TRY_GOTO(h5u_app_close(&w->ext_ids), st, fail);
    H5Gclose(w->gint);
    w->gint = -1;
    if (w->gext >= 0) H5Gclose(w->gext);
    w->gext = -1;
    FD_TRY_GOTO(h5u_out_commit(&w->out), st, fail);
fail:
    lattice_h5_abort(pw);
    return st;
}

fd_status lattice_h5_commit(lattice_h5 **pw, const fca_context *ctx, const lattice_meta *m)
{
    fd_status st = lattice_h5_put_meta((*pw)->out.file, ctx, m, (*pw)->supp.n, (*pw)->with_extents);
    if (st != FD_OK) {
        lattice_h5_abort(pw);
        return st;
    }
    return finish(pw);
}

fd_status lattice_h5_commit_part(lattice_h5 **pw, const fca_context *ctx, const lattice_part *part)
{
    lattice_h5 *w = *pw;
    fd_status st = FD_OK;
    hid_t f = w->out.file;
    FD_TRY_GOTO(h5u_app_add(&w->int_off, part->first_int), st, fail);
    FD_TRY_GOTO(h5u_app_add(&w->ext_off, part->first_ext), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "format", "fcbo-dist lattice part"), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "format_version", FD_FORMAT_VERSION), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "input_sha256", ctx->sha256), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "rank", (uint64_t)part->rank), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "ranks", (uint64_t)part->ranks), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_concepts", w->supp.n), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "first_concept", part->first_concept), st, fail);
    return finish(pw);
fail:
    lattice_h5_abort(pw);
    return st;
}


/* Concepts [s, s + k) of one CSR pair (G/offsets, G/ids of total ids):
 * off gets the k batch-local ends, *ids (regrown) the ids, *m their
 * number. */
static fd_status read_csr_slice(hid_t f, const char *path, const char *g, uint64_t total, uint64_t s, uint64_t k,
                                uint64_t *off, uint32_t **ids, size_t *m)
{
    char name[32];
    snprintf(name, sizeof name, "%s/offsets", g);
    FD_TRY(h5u_read_range(f, name, H5T_NATIVE_UINT64, s, k + 1, off));
    for (uint64_t i = 0; i < k; i++)
        if (off[i + 1] < off[i] || off[i + 1] > total)
            return fd_fail(FD_ERR_INPUT, "%s: %s is not ascending within the %llu ids at concept %llu", path, name,
                           (unsigned long long)total, (unsigned long long)(s + i));
    const uint64_t base = off[0];
    *m = (size_t)(off[k] - base);
    free(*ids);
    if (!(*ids = fd_calloc(*m, sizeof **ids))) return fd_fail(FD_ERR_NOMEM, "out of memory for %llu ids", (unsigned long long)*m);
    snprintf(name, sizeof name, "%s/ids", g);
    FD_TRY(h5u_read_range(f, name, H5T_NATIVE_UINT32, base, *m, *ids));
    for (uint64_t i = 0; i < k; i++) off[i] = off[i + 1] - base;
    return FD_OK;
}

fd_status lattice_h5_stream(hid_t f, const char *path, int full, concept_writer wr)
{
    fd_status st = FD_OK;
    uint64_t n, nids, next = 0, *off = NULL, *eoff = NULL;
    uint32_t *ids = NULL, *eids = NULL, *supp = NULL;
    concept_batch b;
    concept_batch_init(&b);
    const int ext = full && H5Lexists(f, "extents", H5P_DEFAULT) > 0;
    FD_TRY(h5u_len(f, "supports", &n));
    FD_TRY(h5u_len(f, "intents/ids", &nids));
    if (ext) FD_TRY(h5u_len(f, "extents/ids", &next));
    const uint64_t slice = (uint64_t)1 << 16;
    FD_ALLOC_GOTO(off, slice + 1, st, done);
    FD_ALLOC_GOTO(eoff, slice + 1, st, done);
    FD_ALLOC_GOTO(supp, slice, st, done);
    for (uint64_t s = 0; s < n; s += slice) {
        uint64_t k = n - s < slice ? n - s : slice;
        FD_TRY_GOTO(read_csr_slice(f, path, "intents", nids, s, k, off, &ids, &b.nint), st, done);
        b.n = k;
        b.int_end = off;
        b.int_ids = ids;
        if (full) {
            FD_TRY_GOTO(h5u_read_range(f, "supports", H5T_NATIVE_UINT32, s, k, supp), st, done);
            b.supp = supp;
        }
        if (ext) {
            FD_TRY_GOTO(read_csr_slice(f, path, "extents", next, s, k, eoff, &eids, &b.next), st, done);
            b.ext_end = eoff;
            b.ext_ids = eids;
        }
        FD_TRY_GOTO(wr.write(wr.self, &b), st, done);
    }
done:
    free(off);
    free(eoff);
    free(ids);
    free(eids);
    free(supp);
    return st;
}

fd_status lattice_h5_append_file(lattice_h5 *w, const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return fd_fail(FD_ERR_IO, "%s: cannot reopen the checkpoint segment", path);
    fd_status st = lattice_h5_stream(f, path, 1, lattice_h5_as(w));
    H5Fclose(f);
    return st;
}

fd_status lattice_h5_adopt(lattice_h5 **out, const char *seg, const char *path, int with_extents)
{
    fd_status st = FD_OK;
    lattice_h5 *w = writer_new(with_extents);
    if (!w) return fd_fail(FD_ERR_NOMEM, "out of memory");
    /* What made it a segment goes; commit writes what makes it a part. */
    static const char *const dsets[] = {"records", NULL};
    static const char *const attrs[] = {"workload", "generation", "stage", "complete", NULL};
    FD_TRY_GOTO(h5u_out_adopt(&w->out, path, seg, dsets, attrs), st, fail);
    H5_CHECK_GOTO(w->gint = H5Gopen2(w->out.file, "intents", H5P_DEFAULT), st, fail);
    FD_TRY_GOTO(h5u_app_open(&w->int_off, w->gint, "offsets", H5T_NATIVE_UINT64), st, fail);
    FD_TRY_GOTO(h5u_app_open(&w->int_ids, w->gint, "ids", H5T_NATIVE_UINT32), st, fail);
    FD_TRY_GOTO(h5u_app_open(&w->supp, w->out.file, "supports", H5T_NATIVE_UINT32), st, fail);
    if (with_extents) {
        H5_CHECK_GOTO(w->gext = H5Gopen2(w->out.file, "extents", H5P_DEFAULT), st, fail);
        FD_TRY_GOTO(h5u_app_open(&w->ext_off, w->gext, "offsets", H5T_NATIVE_UINT64), st, fail);
        FD_TRY_GOTO(h5u_app_open(&w->ext_ids, w->gext, "ids", H5T_NATIVE_UINT32), st, fail);
    }
    if (w->int_off.n != w->supp.n + 1) {
        st = fd_fail(FD_ERR_INPUT, "%s: its offsets do not match its concepts", seg);
        goto fail;
    }
    *out = w;
    return FD_OK;
fail:
    lattice_h5_abort(&w);
    return st;
}

hid_t lattice_h5_file(const lattice_h5 *w) { return w->out.file; }
const char *lattice_h5_path(const lattice_h5 *w) { return w->out.path; }
fd_status lattice_h5_finish(lattice_h5 **pw) { return finish(pw); }

fd_status lattice_h5_intents(lattice_h5 *w, uint64_t **off, uint32_t **ids, uint32_t **supports)
{
    fd_status st = FD_OK;
    const uint64_t n = w->supp.n, nint = w->int_ids.n;
    *off = NULL;
    *ids = *supports = NULL;
    FD_ALLOC_GOTO(*off, n + 1, st, done);
    FD_ALLOC_GOTO(*ids, nint + 1, st, done);
    FD_ALLOC_GOTO(*supports, n + 1, st, done);
    FD_TRY_GOTO(h5u_read_range(w->out.file, "intents/offsets", H5T_NATIVE_UINT64, 0, n + 1, *off), st, done);
    if (nint) FD_TRY_GOTO(h5u_read_range(w->out.file, "intents/ids", H5T_NATIVE_UINT32, 0, nint, *ids), st, done);
    if (n) FD_TRY_GOTO(h5u_read_range(w->out.file, "supports", H5T_NATIVE_UINT32, 0, n, *supports), st, done);
    for (uint64_t i = 0; i < n; i++)
        if ((*off)[i + 1] < (*off)[i] || (*off)[i + 1] > nint) {
            st = fd_fail(FD_ERR_INTERNAL, "%s: its intents' offsets are out of order", w->out.path);
            break;
        }
done:
    if (st != FD_OK) {
        free(*off);
        free(*ids);
        free(*supports);
        *off = NULL;
        *ids = *supports = NULL;
    }
    return st;
}

fd_status lattice_h5_put_covers(lattice_h5 *w, const uint64_t *cov_off, const uint64_t *cov_ids)
{
    fd_status st = FD_OK;
    const uint64_t n = w->supp.n, ne = cov_off[n] - cov_off[0];
    hid_t g = -1;
    H5_CHECK_GOTO(g = H5Gcreate2(w->out.file, "edges", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    FD_TRY_GOTO(h5u_write_1d(g, "offsets", H5T_STD_U64LE, H5T_NATIVE_UINT64, cov_off, n + 1), st, done);
    FD_TRY_GOTO(h5u_write_1d(g, "ids", H5T_STD_U64LE, H5T_NATIVE_UINT64, cov_ids, ne), st, done);
    FD_TRY_GOTO(h5u_attr_u64(w->out.file, "n_edges", ne), st, done);
done:
    if (g >= 0) H5Gclose(g);
    return st;
}
