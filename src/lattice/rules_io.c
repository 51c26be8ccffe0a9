/* SPDX-License-Identifier: BSD-3-Clause */
#include "rules_io.h"

#include "lattice_edges.h"
#include "lattice_read.h"

#include "../io/h5util.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rules_lattice_free(rules_lattice *l)
{
    free(l->off);
    free(l->supp);
    free(l->cov_off);
    free(l->cov_ids);
    free(l->ids);
    memset(l, 0, sizeof *l);
}

typedef struct {
    uint32_t label, index;
} label_index;

static int cmp_label(const void *a, const void *b)
{
    const uint32_t x = ((const label_index *)a)->label, y = ((const label_index *)b)->label;
    return (x > y) - (x < y);
}

/* The file's intents (user ids) as the context's indices, each intent
 * ascending (the rules' sets are), each id an attribute of the context. */
static fd_status ids_to_indices(const char *path, const fca_context *ctx, rules_lattice *l)
{
    label_index *map = malloc(((size_t)ctx->n_attr + 1) * sizeof *map);
    if (!map) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint32_t a = 0; a < ctx->n_attr; a++) map[a] = (label_index){ctx->attr_label[a], a};
    qsort(map, ctx->n_attr, sizeof *map, cmp_label);
    fd_status st = FD_OK;
    for (uint64_t c = 0; c < l->n && st == FD_OK; c++) {
        if (l->off[c + 1] < l->off[c] || l->off[c + 1] > l->off[l->n]) {
            st = fd_fail(FD_ERR_INPUT, "%s: intents/offsets[%llu] is out of order", path, (unsigned long long)c + 1);
            break;
        }
        for (uint64_t k = l->off[c]; k < l->off[c + 1]; k++) {
            label_index key = {l->ids[k], 0};
            const label_index *hit = bsearch(&key, map, ctx->n_attr, sizeof *map, cmp_label);
            if (!hit) {
                st = fd_fail(FD_ERR_INPUT, "%s: concept %llu has attribute id %u, which its context has not", path,
                             (unsigned long long)c, l->ids[k]);
                break;
            }
            l->ids[k] = hit->index;
        }
        /* Ids ascending in the file keep their indices ascending (the
         * mapping is monotone); sort anyway, cheap against a hostile file. */
        for (uint64_t k = l->off[c] + 1; k < l->off[c + 1]; k++)
            for (uint64_t q = k; q > l->off[c] && l->ids[q - 1] > l->ids[q]; q--) {
                uint32_t t = l->ids[q];
                l->ids[q] = l->ids[q - 1];
                l->ids[q - 1] = t;
            }
    }
    free(map);
    return st;
}

/* /edges as read: offsets in range, every cover a concept of larger
 * support (a cover has the larger extent), so that confidence is in (0, 1]. */
static fd_status check_covers(const char *path, const rules_lattice *l, uint64_t nids)
{
    if (l->cov_off[0] != 0 || l->cov_off[l->n] != nids)
        return fd_fail(FD_ERR_INPUT, "%s: edges/offsets does not cover edges/ids", path);
    for (uint64_t c = 0; c < l->n; c++) {
        if (l->cov_off[c + 1] < l->cov_off[c])
            return fd_fail(FD_ERR_INPUT, "%s: edges/offsets[%llu] is out of order", path, (unsigned long long)c + 1);
        for (uint64_t e = l->cov_off[c]; e < l->cov_off[c + 1]; e++) {
            const uint64_t u = l->cov_ids[e];
            if (u >= l->n || l->supp[u] <= l->supp[c])
                return fd_fail(FD_ERR_INPUT, "%s: edge %llu -> %llu is not a cover (no such concept, or no larger support)",
                               path, (unsigned long long)c, (unsigned long long)u);
        }
    }
    return FD_OK;
}

fd_status rules_lattice_read(const char *path, const char *ctx_path, int covers, int threads, fca_context **ctx,
                             rules_lattice *l)
{
    fd_status st = FD_OK;
    hid_t f = -1;
    char input[4096] = "", sha[80] = "", fmt[32] = "";
    uint64_t nattr = 0, nobj = 0, nids = 0;
    uint32_t *supp32 = NULL, *user_ids = NULL;
    memset(l, 0, sizeof *l);
    *ctx = NULL;
    FD_TRY(lattice_read_open(path, &f));
    if (h5u_read_u64_attr(f, path, "n_concepts", &l->n) != FD_OK ||
        h5u_read_u64_attr(f, path, "min_support", &l->min_support) != FD_OK ||
        h5u_read_u64_attr(f, path, "n_attributes", &nattr) != FD_OK ||
        h5u_read_u64_attr(f, path, "n_objects", &nobj) != FD_OK || h5u_read_attr_str(f, "input", input, sizeof input) != FD_OK ||
        h5u_read_attr_str(f, "input_sha256", sha, sizeof sha) != FD_OK ||
        h5u_read_attr_str(f, "input_format", fmt, sizeof fmt) != FD_OK) {
        fd_errclear();
        st = fd_fail(FD_ERR_INPUT, "%s: lacks the attributes a lattice file has", path);
        goto done;
    }
    const char *cpath = ctx_path ? ctx_path : input;
    if (!*cpath) {
        st = fd_fail(FD_ERR_USAGE, "%s does not name its input: give --context FILE", path);
        goto done;
    }
    st = fca_context_read(ctx, cpath, ctx_path ? CTX_FMT_AUTO : ctx_format_from_name(fmt));
    if (st != FD_OK) {
        if (!ctx_path) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", fd_errmsg());
            fd_errclear();
            st = fd_fail(st, "%s (the input %s names; --context FILE gives another)", msg, path);
        }
        goto done;
    }
    if (strcmp((*ctx)->sha256, sha) != 0 || (*ctx)->n_obj != nobj || (*ctx)->n_attr != nattr) {
        st = fd_fail(FD_ERR_INPUT, "%s is not the context %s was computed from (SHA-256 %.12s..., the file records %.12s...)",
                     cpath, path, (*ctx)->sha256, sha);
        goto done;
    }
    const uint64_t n = l->n;
    if (h5u_len(f, "intents/ids", &nids) != FD_OK) goto bad;
    FD_ALLOC_GOTO(l->off, n + 1, st, done);
    FD_ALLOC_GOTO(l->ids, nids + 1, st, done);
    FD_ALLOC_GOTO(supp32, n + 1, st, done);
    FD_ALLOC_GOTO(l->supp, n + 1, st, done);
    if (h5u_read_range(f, "intents/offsets", H5T_NATIVE_UINT64, 0, n + 1, l->off) != FD_OK ||
        (nids && h5u_read_range(f, "intents/ids", H5T_NATIVE_UINT32, 0, nids, l->ids) != FD_OK) ||
        (n && h5u_read_range(f, "supports", H5T_NATIVE_UINT32, 0, n, supp32) != FD_OK))
        goto bad;
    for (uint64_t c = 0; c < n; c++) {
        l->supp[c] = supp32[c];
        if (supp32[c] > nobj) {
            st = fd_fail(FD_ERR_INPUT, "%s: concept %llu has support %u of %llu objects", path, (unsigned long long)c,
                         supp32[c], (unsigned long long)nobj);
            goto done;
        }
    }
    if (l->off[0] != 0 || l->off[n] != nids) {
        st = fd_fail(FD_ERR_INPUT, "%s: intents/offsets does not cover intents/ids", path);
        goto done;
    }
    l->had_edges = H5Lexists(f, "edges", H5P_DEFAULT) > 0;
    if (!covers) { /* the stem base alone: the context decides it */
        FD_TRY_GOTO(ids_to_indices(path, *ctx, l), st, done);
        goto done;
    }
    if (l->had_edges) {
        uint64_t ne = 0;
        if (h5u_len(f, "edges/ids", &ne) != FD_OK) goto bad;
        FD_ALLOC_GOTO(l->cov_off, n + 1, st, done);
        FD_ALLOC_GOTO(l->cov_ids, ne + 1, st, done);
        if (h5u_read_range(f, "edges/offsets", H5T_NATIVE_UINT64, 0, n + 1, l->cov_off) != FD_OK ||
            (ne && h5u_read_range(f, "edges/ids", H5T_NATIVE_UINT64, 0, ne, l->cov_ids) != FD_OK))
            goto bad;
        FD_TRY_GOTO(check_covers(path, l, ne), st, done);
    }
    if (!l->had_edges) {
        /* lattice_covers wants the file's own ids, and trusts them: a copy
         * of them for it, the originals checked (offsets in order, every
         * id an attribute) and mapped first. */
        FD_ALLOC_GOTO(user_ids, nids + 1, st, done);
        memcpy(user_ids, l->ids, nids * sizeof *user_ids);
    }
    FD_TRY_GOTO(ids_to_indices(path, *ctx, l), st, done);
    if (!l->had_edges) {
        const uint32_t ms = l->min_support > UINT32_MAX ? UINT32_MAX : (uint32_t)l->min_support;
        const lattice_covers_job cj = {.ctx = *ctx,
                                       .n = n,
                                       .off = l->off,
                                       .ids = user_ids,
                                       .min_support = ms,
                                       .supports = supp32,
                                       .count = n,
                                       .work_count = n,
                                       .threads = threads};
        FD_TRY_GOTO(lattice_covers(&cj, &l->cov_off, &l->cov_ids, NULL), st, done);
    }
    goto done;
bad:
    fd_errclear();
    st = fd_fail(FD_ERR_INPUT, "%s: its concepts cannot be read (damaged?)", path);
done:
    free(supp32);
    free(user_ids);
    if (f >= 0) H5Fclose(f);
    if (st != FD_OK) {
        rules_lattice_free(l);
        fca_context_destroy(ctx);
    }
    return st;
}

/* ---------------- output ---------------- */

/* A set of indices as the context's ids. */
static fd_status put_sets(hid_t g, const char *name, const fca_context *ctx, const rules_sets *s)
{
    fd_status st = FD_OK;
    hid_t sg = -1;
    static const uint64_t zero = 0;
    uint32_t *lab = malloc((s->nids + 1) * sizeof *lab);
    if (!lab) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (uint64_t k = 0; k < s->nids; k++) lab[k] = ctx->attr_label[s->ids[k]];
    H5_CHECK_GOTO(sg = H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    FD_TRY_GOTO(h5u_write_1d(sg, "offsets", H5T_STD_U64LE, H5T_NATIVE_UINT64, s->off ? s->off : &zero, s->n + 1), st, done);
    FD_TRY_GOTO(h5u_write_1d(sg, "ids", H5T_STD_U32LE, H5T_NATIVE_UINT32, lab, s->nids), st, done);
done:
    if (sg >= 0) H5Gclose(sg);
    free(lab);
    return st;
}

static fd_status put_group(hid_t f, const char *name, const fca_context *ctx, const rules_out *r, int rules)
{
    fd_status st = FD_OK;
    hid_t g = -1;
    H5_CHECK_GOTO(g = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    FD_TRY_GOTO(put_sets(g, "premise", ctx, &r->premise), st, done);
    FD_TRY_GOTO(put_sets(g, "conclusion", ctx, &r->conclusion), st, done);
    FD_TRY_GOTO(h5u_write_1d(g, "support", H5T_STD_U64LE, H5T_NATIVE_UINT64, r->support, r->n), st, done);
    if (rules) {
        FD_TRY_GOTO(h5u_write_1d(g, "confidence", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->confidence, r->n), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "lift", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->lift, r->n), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "lower", H5T_STD_U64LE, H5T_NATIVE_UINT64, r->lower, r->n), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "upper", H5T_STD_U64LE, H5T_NATIVE_UINT64, r->upper, r->n), st, done);
    }
done:
    if (g >= 0) H5Gclose(g);
    return st;
}

fd_status rules_write_h5(const char *path, const fca_context *ctx, const rules_meta *m, const rules_out *stem,
                         const rules_out *lux)
{
    fd_status st = FD_OK;
    h5u_out o = H5U_OUT_NONE;
    hid_t g = -1;
    FD_TRY(h5u_out_create(&o, path));
    const hid_t f = o.file;
    FD_TRY_GOTO(h5u_attr_str(f, "format", "fcbo-dist rules"), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "format_version", 1), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "version", FD_VERSION), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "command", m->command ? m->command : ""), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "lattice", m->lattice), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "input", ctx->source ? ctx->source : ""), st, fail);
    FD_TRY_GOTO(h5u_attr_str(f, "input_sha256", ctx->sha256), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_objects", ctx->n_obj), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_attributes", ctx->n_attr), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "min_support", m->min_support), st, fail);
    FD_TRY_GOTO(h5u_attr_f64(f, "min_confidence", m->min_confidence), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_implications", m->stem ? stem->n : 0), st, fail);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_rules", m->lux ? lux->n : 0), st, fail);
    H5_CHECK_GOTO(g = H5Gcreate2(f, "attributes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, fail);
    FD_TRY_GOTO(h5u_write_1d(g, "ids", H5T_STD_U32LE, H5T_NATIVE_UINT32, ctx->attr_label, ctx->n_attr), st, fail);
    FD_TRY_GOTO(h5u_write_strings(g, "names", ctx->attr_names, ctx->n_attr), st, fail);
    H5Gclose(g);
    g = -1;
    if (m->stem) FD_TRY_GOTO(put_group(f, "implications", ctx, stem, 0), st, fail);
    if (m->lux) FD_TRY_GOTO(put_group(f, "rules", ctx, lux, 1), st, fail);
    st = h5u_out_commit(&o); /* then the abort frees the names and leaves the file */
fail:
    if (g >= 0) H5Gclose(g);
    h5u_out_abort(&o);
    return st;
}

static void put_set_text(FILE *f, const fca_context *ctx, int names, const rules_sets *s, uint64_t k)
{
    for (uint64_t q = s->off[k]; q < s->off[k + 1]; q++) {
        if (q > s->off[k]) fputc(names ? '\t' : ' ', f);
        if (names) fputs(ctx->attr_names[s->ids[q]], f);
        else fprintf(f, "%u", ctx->attr_label[s->ids[q]]);
    }
}

/* One basis: its heading, then premise => conclusion and the support,
 * with the Luxenburger basis's confidence and lift after it. */
static void put_basis_text(FILE *f, const fca_context *ctx, int names, const rules_out *r, const char *heading,
                           int measures)
{
    const char *sep = names ? "\t=>\t" : " => ";
    fprintf(f, heading, (unsigned long long)r->n);
    for (uint64_t k = 0; k < r->n; k++) {
        put_set_text(f, ctx, names, &r->premise, k);
        fputs(sep, f);
        put_set_text(f, ctx, names, &r->conclusion, k);
        fprintf(f, "\t%llu", (unsigned long long)r->support[k]);
        if (measures) fprintf(f, "\t%.17g\t%.17g", r->confidence[k], r->lift[k]);
        fputc('\n', f);
    }
}

fd_status rules_write_text(FILE *f, const fca_context *ctx, int names, const rules_out *stem, const rules_out *lux)
{
    if (stem)
        put_basis_text(f, ctx, names, stem,
                       "# stem base (Duquenne-Guigues): %llu implications; premise => conclusion, support\n", 0);
    if (lux)
        put_basis_text(f, ctx, names, lux,
                       "# Luxenburger basis: %llu rules; premise => conclusion, support, confidence, lift\n", 1);
    return FD_OK;
}

/* ---------------- info ---------------- */

static fd_status check_sets(hid_t f, const char *path, const char *g, uint64_t n)
{
    char off[64], ids[64];
    uint64_t nids = 0, end = 0;
    snprintf(off, sizeof off, "%s/offsets", g);
    snprintf(ids, sizeof ids, "%s/ids", g);
    FD_TRY(h5u_expect_len(f, path, off, n + 1, "n_implications or n_rules"));
    if (h5u_len(f, ids, &nids) != FD_OK || h5u_read_range(f, off, H5T_NATIVE_UINT64, n, 1, &end) != FD_OK) {
        fd_errclear();
        return fd_fail(FD_ERR_INPUT, "%s: %s cannot be read", path, g);
    }
    if (end != nids) return fd_fail(FD_ERR_INPUT, "%s: %s ends at %llu of %llu ids", path, off, (unsigned long long)end,
                                    (unsigned long long)nids);
    return FD_OK;
}

static fd_status check_group(hid_t f, const char *path, const char *g, uint64_t n, int rules)
{
    char name[64];
    static const char *const per_rule[] = {"support", "confidence", "lift", "lower", "upper"};
    snprintf(name, sizeof name, "%s/premise", g);
    FD_TRY(check_sets(f, path, name, n));
    snprintf(name, sizeof name, "%s/conclusion", g);
    FD_TRY(check_sets(f, path, name, n));
    for (int k = 0; k < (rules ? 5 : 1); k++) {
        snprintf(name, sizeof name, "%s/%s", g, per_rule[k]);
        FD_TRY(h5u_expect_len(f, path, name, n, rules ? "n_rules" : "n_implications"));
    }
    return FD_OK;
}

fd_status rules_h5_info(hid_t f, const char *path, FILE *out)
{
    uint64_t ni = 0, nr = 0, nobj = 0, nattr = 0, ms = 0;
    double mc = 0;
    char lat[4096] = "", input[4096] = "", sha[80] = "", cmd[4096] = "";
    FD_TRY(h5u_expect_complete(f, path, "fcbo-dist rules", 1));
    FD_TRY(h5u_read_u64_attr(f, path, "n_implications", &ni));
    FD_TRY(h5u_read_u64_attr(f, path, "n_rules", &nr));
    FD_TRY(h5u_read_u64_attr(f, path, "n_objects", &nobj));
    FD_TRY(h5u_read_u64_attr(f, path, "n_attributes", &nattr));
    FD_TRY(h5u_read_u64_attr(f, path, "min_support", &ms));
    if (h5u_read_attr_f64(f, "min_confidence", &mc) != FD_OK || h5u_read_attr_str(f, "lattice", lat, sizeof lat) != FD_OK ||
        h5u_read_attr_str(f, "input", input, sizeof input) != FD_OK ||
        h5u_read_attr_str(f, "input_sha256", sha, sizeof sha) != FD_OK) {
        fd_errclear();
        return fd_fail(FD_ERR_INPUT, "%s: lacks the attributes a rules file has", path);
    }
    h5u_read_attr_str(f, "command", cmd, sizeof cmd);
    fd_errclear();
    FD_TRY(h5u_expect_len(f, path, "attributes/ids", nattr, "n_attributes"));
    const int has_i = H5Lexists(f, "implications", H5P_DEFAULT) > 0, has_r = H5Lexists(f, "rules", H5P_DEFAULT) > 0;
    if (has_i) FD_TRY(check_group(f, path, "implications", ni, 0));
    if (has_r) FD_TRY(check_group(f, path, "rules", nr, 1));
    fprintf(out, "%s: fcbo-dist rules, complete\n", path);
    fprintf(out, "  command:        %s\n", cmd);
    fprintf(out, "  lattice:        %s\n", lat);
    fprintf(out, "  input:          %s (sha256 %s)\n", input, sha);
    fprintf(out, "  context:        %llu objects x %llu attributes; lattice min support %llu\n", (unsigned long long)nobj,
            (unsigned long long)nattr, (unsigned long long)ms);
    if (has_i) fprintf(out, "  stem base:      %llu implications\n", (unsigned long long)ni);
    if (has_r) fprintf(out, "  Luxenburger:    %llu rules of confidence >= %g\n", (unsigned long long)nr, mc);
    return FD_OK;
}
