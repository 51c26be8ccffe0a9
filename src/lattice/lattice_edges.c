/* SPDX-License-Identifier: BSD-3-Clause */
#include "lattice_edges.h"

#include "../common/bitset.h"
#include "../common/par_rows.h"

#include <stdlib.h>
#include <string.h>

/* Intents as bitsets over the attribute indices, and a hash table of
 * them to find a concept by its intent.  The table is open addressing
 * over concept ids (2^k >= 2n slots), keyed by a mix of the words. */
typedef struct {
    const fca_context *ctx;
    uint64_t n;
    uint32_t w;               /* words per intent */
    fd_word *intents;         /* n x w */
    fd_word *rows;            /* n_obj x w */
    uint64_t *slot, mask;     /* concept id + 1, 0: empty */
    uint64_t **covers;        /* per concept, its covers (malloc'ed), *ncov of them */
    uint32_t *ncov;
} cov_ctx;

static uint64_t mix(const fd_word *x, uint32_t w)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint32_t k = 0; k < w; k++) {
        h ^= x[k] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h;
}

static inline int words_eq(const fd_word *a, const fd_word *b, uint32_t w)
{
    for (uint32_t q = 0; q < w; q++)
        if (a[q] != b[q]) return 0;
    return 1;
}

static int64_t find(const cov_ctx *c, const fd_word *x)
{
    for (uint64_t s = mix(x, c->w) & c->mask;; s = (s + 1) & c->mask) {
        if (!c->slot[s]) return -1;
        const uint64_t id = c->slot[s] - 1;
        if (words_eq(c->intents + id * c->w, x, c->w)) return (int64_t)id;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

typedef struct {
    uint32_t idx, pop;
} cand_order;


/* Concepts [i0, i1): the distinct B ∩ g' of the objects g outside the
 * extent (a hash set per thread), then the maximal ones, largest first:
 * a candidate is maximal when no maximal one kept before it contains it
 * (a containing candidate is larger, so it came first, and is itself in
 * or below a kept one), then their ids.  O(objects) a concept, plus the
 * candidates times the covers. */
static fd_status covers_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    cov_ctx *c = arg;
    const uint32_t w = c->w, no = c->ctx->n_obj;
    (void)thread;
    uint64_t hsize = 2;
    while (hsize < 2 * ((uint64_t)no + 1)) hsize *= 2;
    fd_word *cand = malloc(((size_t)no + 1) * w * sizeof *cand);
    uint32_t *hslot = calloc(hsize, sizeof *hslot), *used = malloc(((size_t)no + 1) * sizeof *used);
    uint32_t *kept = malloc(((size_t)no + 1) * sizeof *kept);
    cand_order *ord = malloc(((size_t)no + 1) * sizeof *ord);
    const uint32_t na = c->ctx->n_attr;
    uint32_t *bucket = malloc(((size_t)na + 1) * sizeof *bucket), *pops = malloc(((size_t)no + 1) * sizeof *pops);
    fd_status st = cand && hslot && used && kept && ord && bucket && pops
                       ? FD_OK
                       : fd_fail(FD_ERR_NOMEM, "out of memory for the covers");
    for (uint64_t i = i0; i < i1 && st == FD_OK; i++) {
        const fd_word *B = c->intents + i * w;
        uint32_t k = 0;
        for (uint32_t g = 0; g < no; g++) {
            const fd_word *R = c->rows + (size_t)g * w;
            fd_word *D = cand + (size_t)k * w;
            int in_extent = 1;
            for (uint32_t q = 0; q < w; q++) {
                D[q] = B[q] & R[q];
                in_extent &= D[q] == B[q];
            }
            if (in_extent) continue;
            uint64_t s = mix(D, w) & (hsize - 1);
            for (; hslot[s]; s = (s + 1) & (hsize - 1))
                if (words_eq(cand + (size_t)(hslot[s] - 1) * w, D, w)) break;
            if (hslot[s]) continue; /* seen */
            hslot[s] = k + 1;
            used[k++] = (uint32_t)s;
        }
        for (uint32_t a = 0; a < k; a++) hslot[used[a]] = 0;
        /* Largest first, by a counting sort on the sizes (at most the
         * attributes); a stable one, so ties keep the objects' order. */
        for (uint32_t a = 0; a <= na; a++) bucket[a] = 0;
        for (uint32_t a = 0; a < k; a++) bucket[pops[a] = bs_count(cand + (size_t)a * w, w)]++;
        for (uint32_t a = na, sum = 0; a + 1 > 0; a--) {
            const uint32_t cnt = bucket[a];
            bucket[a] = sum;
            sum += cnt;
        }
        for (uint32_t a = 0; a < k; a++) ord[bucket[pops[a]]++] = (cand_order){a, pops[a]};
        uint32_t m = 0;
        for (uint32_t a = 0; a < k; a++) {
            const fd_word *A = cand + (size_t)ord[a].idx * w;
            int below = 0;
            for (uint32_t b = 0; b < m && !below; b++) {
                const fd_word *K = cand + (size_t)kept[b] * w;
                int sub = 1;
                for (uint32_t q = 0; q < w && sub; q++) sub = (A[q] & ~K[q]) == 0;
                below = sub;
            }
            if (!below) kept[m++] = ord[a].idx;
        }
        uint64_t *out = malloc(((size_t)m + 1) * sizeof *out);
        if (!out) {
            st = fd_fail(FD_ERR_NOMEM, "out of memory for the covers");
            break;
        }
        uint32_t t = 0;
        for (uint32_t a = 0; a < m && st == FD_OK; a++) {
            const int64_t id = find(c, cand + (size_t)kept[a] * w);
            if (id < 0)
                st = fd_fail(FD_ERR_INPUT, "--edges: an upper cover of concept %llu is not among the concepts",
                             (unsigned long long)i);
            else out[t++] = (uint64_t)id;
        }
        qsort(out, t, sizeof *out, cmp_u64);
        c->covers[i] = out;
        c->ncov[i] = t;
    }
    free(cand);
    free(hslot);
    free(used);
    free(kept);
    free(ord);
    free(bucket);
    free(pops);
    return st;
}

fd_status lattice_covers(const fca_context *ctx, uint64_t n, const uint64_t *off, const uint32_t *ids, int threads,
                         uint64_t **cov_off, uint64_t **cov_ids)
{
    fd_status st = FD_OK;
    cov_ctx c = {ctx, n, bs_words(ctx->n_attr ? ctx->n_attr : 1), NULL, NULL, NULL, 0, NULL, NULL};
    uint32_t *index_of = NULL, maxlabel = 0;
    *cov_off = NULL;
    *cov_ids = NULL;
    for (uint32_t a = 0; a < ctx->n_attr; a++) maxlabel = ctx->attr_label[a] > maxlabel ? ctx->attr_label[a] : maxlabel;
    FD_ALLOC_GOTO(index_of, (size_t)maxlabel + 1, st, done);
    for (uint32_t a = 0; a <= maxlabel; a++) index_of[a] = UINT32_MAX;
    for (uint32_t a = 0; a < ctx->n_attr; a++) index_of[ctx->attr_label[a]] = a;
    FD_ALLOC_GOTO(c.intents, n * c.w + 1, st, done);
    memset(c.intents, 0, (n * c.w + 1) * sizeof *c.intents);
    for (uint64_t i = 0; i < n; i++)
        for (uint64_t k = off[i]; k < off[i + 1]; k++) {
            if (ids[k] > maxlabel || index_of[ids[k]] == UINT32_MAX) {
                st = fd_fail(FD_ERR_INTERNAL, "--edges: intent id %u is not an attribute", ids[k]);
                goto done;
            }
            bs_set(c.intents + i * c.w, index_of[ids[k]]);
        }
    FD_ALLOC_GOTO(c.rows, (size_t)ctx->n_obj * c.w + 1, st, done);
    memset(c.rows, 0, ((size_t)ctx->n_obj * c.w + 1) * sizeof *c.rows);
    for (uint32_t g = 0; g < ctx->n_obj; g++)
        for (uint64_t k = ctx->row_ptr[g]; k < ctx->row_ptr[g + 1]; k++) bs_set(c.rows + (size_t)g * c.w, ctx->row_idx[k]);
    uint64_t slots = 2;
    while (slots < 2 * n) slots *= 2;
    c.mask = slots - 1;
    FD_ALLOC_GOTO(c.slot, slots, st, done);
    memset(c.slot, 0, slots * sizeof *c.slot);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t s = mix(c.intents + i * c.w, c.w) & c.mask;
        while (c.slot[s]) s = (s + 1) & c.mask;
        c.slot[s] = i + 1;
    }
    FD_ALLOC_GOTO(c.covers, n + 1, st, done);
    memset(c.covers, 0, (n + 1) * sizeof *c.covers);
    FD_ALLOC_GOTO(c.ncov, n + 1, st, done);
    FD_TRY_GOTO(par_rows(threads, 0, n, covers_range, &c, NULL), st, done);
    FD_ALLOC_GOTO(*cov_off, n + 1, st, done);
    (*cov_off)[0] = 0;
    for (uint64_t i = 0; i < n; i++) (*cov_off)[i + 1] = (*cov_off)[i] + c.ncov[i];
    FD_ALLOC_GOTO(*cov_ids, (*cov_off)[n] + 1, st, done);
    for (uint64_t i = 0; i < n; i++) memcpy(*cov_ids + (*cov_off)[i], c.covers[i], c.ncov[i] * sizeof **cov_ids);
done:
    for (uint64_t i = 0; c.covers && i < n; i++) free(c.covers[i]);
    free(c.covers);
    free(c.ncov);
    free(c.slot);
    free(c.rows);
    free(c.intents);
    free(index_of);
    if (st != FD_OK) {
        free(*cov_off);
        free(*cov_ids);
        *cov_off = NULL;
        *cov_ids = NULL;
    }
    return st;
}
