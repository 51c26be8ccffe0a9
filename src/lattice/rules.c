/* SPDX-License-Identifier: BSD-3-Clause */
#include "rules.h"

#include "../common/bitset.h"

#include <stdlib.h>
#include <string.h>

void rules_out_free(rules_out *r)
{
    free(r->premise.off);
    free(r->premise.ids);
    free(r->conclusion.off);
    free(r->conclusion.ids);
    free(r->support);
    free(r->confidence);
    free(r->lift);
    free(r->lower);
    free(r->upper);
    memset(r, 0, sizeof *r);
}

/* Appends the attributes of bitset s (w words, m bits) as a set. */
static fd_status sets_push_bits(rules_sets *s, const fd_word *b, uint32_t w)
{
    if (!s->off) {
        FD_TRY(fd_grow((void **)&s->off, &s->cap, 1, sizeof *s->off));
        s->off[0] = 0;
    }
    FD_TRY(fd_grow((void **)&s->off, &s->cap, s->n + 2, sizeof *s->off));
    uint32_t c = bs_count(b, w);
    FD_TRY(fd_grow((void **)&s->ids, &s->capids, s->nids + c + 1, sizeof *s->ids));
    for (uint32_t q = 0; q < w; q++)
        for (fd_word x = b[q]; x; x &= x - 1) s->ids[s->nids++] = q * 64u + (uint32_t)__builtin_ctzll(x);
    s->off[++s->n] = s->nids;
    return FD_OK;
}

/* Room for one more rule (the per-rule arrays; rules add the last four). */
static fd_status out_grow(rules_out *r, int with_rules)
{
    if (r->n < r->cap) return FD_OK;
    uint64_t cap = r->cap ? 2 * r->cap : 1024;
    uint64_t *su = realloc(r->support, cap * sizeof *su);
    if (!su) return fd_fail(FD_ERR_NOMEM, "out of memory for the rules");
    r->support = su;
    if (with_rules) {
        double *c = realloc(r->confidence, cap * sizeof *c);
        if (c) r->confidence = c;
        double *l = c ? realloc(r->lift, cap * sizeof *l) : NULL;
        if (l) r->lift = l;
        uint64_t *lo = l ? realloc(r->lower, cap * sizeof *lo) : NULL;
        if (lo) r->lower = lo;
        uint64_t *up = lo ? realloc(r->upper, cap * sizeof *up) : NULL;
        if (!up) return fd_fail(FD_ERR_NOMEM, "out of memory for the rules");
        r->upper = up;
    }
    r->cap = cap;
    return FD_OK;
}

/* The context as bitsets: each object's attributes (rows, wa words) and
 * each attribute's objects (cols, wo words). */
typedef struct {
    uint32_t m, g, wa, wo;
    fd_word *rows, *cols;
    fd_word *ext, *tmp;         /* scratch: wo and wa words */
} bits_ctx;

static void bits_free(bits_ctx *b)
{
    free(b->rows);
    free(b->cols);
    free(b->ext);
    free(b->tmp);
}

static fd_status bits_make(const fca_context *ctx, bits_ctx *b)
{
    memset(b, 0, sizeof *b);
    b->m = ctx->n_attr;
    b->g = ctx->n_obj;
    b->wa = bs_words(b->m ? b->m : 1);
    b->wo = bs_words(b->g ? b->g : 1);
    b->rows = calloc((size_t)b->g * b->wa + 1, sizeof *b->rows);
    b->cols = calloc((size_t)b->m * b->wo + 1, sizeof *b->cols);
    b->ext = calloc(b->wo, sizeof *b->ext);
    b->tmp = calloc(b->wa, sizeof *b->tmp);
    if (!b->rows || !b->cols || !b->ext || !b->tmp) {
        bits_free(b);
        return fd_fail(FD_ERR_NOMEM, "out of memory for the context's bitsets (%u x %u)", b->g, b->m);
    }
    for (uint32_t o = 0; o < b->g; o++)
        for (uint64_t k = ctx->row_ptr[o]; k < ctx->row_ptr[o + 1]; k++) {
            bs_set(b->rows + (size_t)o * b->wa, ctx->row_idx[k]);
            bs_set(b->cols + (size_t)ctx->row_idx[k] * b->wo, o);
        }
    return FD_OK;
}

/* X' into b->ext, returning |X'|. */
static uint64_t bits_extent(bits_ctx *b, const fd_word *x)
{
    bs_fill(b->ext, b->g);
    if (!b->g) bs_zero(b->ext, b->wo);
    for (uint32_t q = 0; q < b->wa; q++)
        for (fd_word v = x[q]; v; v &= v - 1) {
            const fd_word *col = b->cols + (size_t)(q * 64u + (uint32_t)__builtin_ctzll(v)) * b->wo;
            for (uint32_t k = 0; k < b->wo; k++) b->ext[k] &= col[k];
        }
    return bs_count(b->ext, b->wo);
}

/* X'' into out, and |X'|. */
static uint64_t bits_closure(bits_ctx *b, const fd_word *x, fd_word *out)
{
    uint64_t n = bits_extent(b, x);
    bs_fill(out, b->m);
    if (!b->m) bs_zero(out, b->wa);
    for (uint32_t q = 0; q < b->wo; q++)
        for (fd_word v = b->ext[q]; v; v &= v - 1) {
            const fd_word *row = b->rows + (size_t)(q * 64u + (uint32_t)__builtin_ctzll(v)) * b->wa;
            for (uint32_t k = 0; k < b->wa; k++) out[k] &= row[k];
        }
    return n;
}

/* ---------------- the stem base ---------------- */

typedef struct {
    uint32_t wa;
    fd_word *p, *c;   /* premises, and premise | conclusion, n x wa */
    uint64_t n, cap;
} implications;

/* x := L*(x): closed under P -> P'' for every P of L that is a proper
 * subset of x (the pseudo-closure: with proper subsets, the L*-closed
 * sets are the intents and the pseudo-intents).  With `below` (the words
 * of the attributes below the candidate i, `prefix` the set's attributes
 * there), it stops, returning 0, as soon as an attribute below i outside
 * the prefix enters x: the candidate then fails NextClosure's lectic
 * test whatever the rest of the closure adds (as FCbO's canonicity test
 * stops early).  The premise test comes first: it rejects most. */
static int pseudo_close(const implications *L, fd_word *x, const fd_word *prefix, const fd_word *below)
{
    const uint32_t w = L->wa;
    for (int changed = 1; changed;) {
        changed = 0;
        for (uint64_t k = 0; k < L->n; k++) {
            const fd_word *p = L->p + k * w, *c = L->c + k * w;
            if (!bs_subset(p, x, w) || bs_subset(c, x, w) || bs_equal(p, x, w)) continue;
            fd_word early = 0;
            for (uint32_t q = 0; q < w; q++) {
                x[q] |= c[q];
                if (below) early |= x[q] & below[q] & ~prefix[q];
            }
            if (early) return 0;
            changed = 1;
        }
    }
    return 1;
}

fd_status rules_stem_base(const fca_context *ctx, rules_out *out, void (*progress)(void *arg, uint64_t sets),
                          void *arg)
{
    fd_status st = FD_OK;
    bits_ctx b;
    implications L = {0};
    memset(out, 0, sizeof *out);
    FD_TRY(bits_make(ctx, &b));
    const uint32_t m = b.m, w = b.wa;
    L.wa = w;
    fd_word *A = calloc(w, sizeof *A), *B = calloc(w, sizeof *B), *C = calloc(w, sizeof *C),
            *full = calloc(w, sizeof *full), *below = calloc(w, sizeof *below);
    if (!A || !B || !C || !full || !below) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto done;
    }
    bs_fill(full, m);
    if (!m) bs_zero(full, w);
    pseudo_close(&L, A, NULL, NULL); /* L is empty: A = {} */
    for (uint64_t sets = 1;; sets++) {
        const uint64_t supp = bits_closure(&b, A, C);
        if (!bs_equal(A, C, w)) {
            /* A is L*-closed and not an intent: a pseudo-intent. */
            if (L.n == L.cap) {
                uint64_t cap = L.cap ? 2 * L.cap : 256;
                fd_word *p = realloc(L.p, cap * w * sizeof *p);
                if (p) L.p = p;
                fd_word *c = p ? realloc(L.c, cap * w * sizeof *c) : NULL;
                if (!c) {
                    st = fd_fail(FD_ERR_NOMEM, "out of memory for the stem base");
                    goto done;
                }
                L.c = c;
                L.cap = cap;
            }
            bs_copy(L.p + L.n * w, A, w);
            bs_copy(L.c + L.n * w, C, w);
            L.n++;
            for (uint32_t q = 0; q < w; q++) B[q] = C[q] & ~A[q];
            FD_TRY_GOTO(out_grow(out, 0), st, done);
            FD_TRY_GOTO(sets_push_bits(&out->premise, A, w), st, done);
            FD_TRY_GOTO(sets_push_bits(&out->conclusion, B, w), st, done);
            out->support[out->n++] = supp;
        }
        if (bs_equal(A, full, w)) break;
        /* every 64: a set can take milliseconds on a wide context, where
         * every 65,536 left the progress line at 0 for minutes */
        if (progress && !(sets & 63)) progress(arg, sets);
        /* The next L*-closed set after A in lectic order: the largest i
         * not in A such that L*(A ∩ {0..i-1} ∪ {i}) adds nothing below i. */
        int found = 0;
        for (uint32_t i = m; i-- > 0;) {
            if (bs_test(A, i)) {
                bs_clear_bit(A, i);
                continue;
            }
            bs_copy(B, A, w);
            bs_set(B, i);
            for (uint32_t q = 0; q < w; q++) /* the attributes below i */
                below[q] = q < i / 64 ? ~(fd_word)0 : q == i / 64 ? ((fd_word)1 << (i % 64)) - 1 : 0;
            if (pseudo_close(&L, B, A, below) && bs_prefix_equal(B, A, i)) {
                bs_copy(A, B, w);
                found = 1;
                break;
            }
        }
        if (!found) break;
    }
done:
    free(A);
    free(B);
    free(C);
    free(full);
    free(below);
    free(L.p);
    free(L.c);
    bits_free(&b);
    if (st != FD_OK) rules_out_free(out);
    return st;
}

/* ---------------- the Luxenburger basis ---------------- */

fd_status rules_luxenburger(const fca_context *ctx, uint64_t n, const uint64_t *off, const uint32_t *ids,
                            const uint64_t *supp, const uint64_t *cov_off, const uint64_t *cov_ids, double min_conf,
                            rules_out *out)
{
    fd_status st = FD_OK;
    bits_ctx b;
    memset(out, 0, sizeof *out);
    FD_TRY(bits_make(ctx, &b));
    const uint32_t w = b.wa;
    fd_word *lo = calloc(w, sizeof *lo), *up = calloc(w, sizeof *up);
    if (!lo || !up) {
        st = fd_fail(FD_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (uint64_t c = 0; c < n; c++) {
        if (!supp[c]) continue;
        bs_zero(lo, w);
        bs_set_ids(lo, ids + off[c], off[c + 1] - off[c]);
        for (uint64_t e = cov_off[c]; e < cov_off[c + 1]; e++) {
            const uint64_t u = cov_ids[e];
            const double conf = (double)supp[c] / (double)supp[u];
            if (conf < min_conf) continue;
            bs_zero(up, w);
            bs_set_ids(up, ids + off[u], off[u + 1] - off[u]);
            for (uint32_t q = 0; q < w; q++) b.tmp[q] = lo[q] & ~up[q];
            /* |(B2\B1)'| >= |A2| > 0: the conclusion's own support. */
            const uint64_t sc = bits_extent(&b, b.tmp);
            FD_TRY_GOTO(out_grow(out, 1), st, done);
            FD_TRY_GOTO(sets_push_bits(&out->premise, up, w), st, done);
            FD_TRY_GOTO(sets_push_bits(&out->conclusion, b.tmp, w), st, done);
            out->support[out->n] = supp[c];
            out->confidence[out->n] = conf;
            out->lift[out->n] = conf * (double)b.g / (double)sc;
            out->lower[out->n] = c;
            out->upper[out->n] = u;
            out->n++;
        }
    }
done:
    free(lo);
    free(up);
    bits_free(&b);
    if (st != FD_OK) rules_out_free(out);
    return st;
}
