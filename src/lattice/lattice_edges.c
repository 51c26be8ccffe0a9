/* SPDX-License-Identifier: BSD-3-Clause */
#include "lattice_edges.h"

#include "../common/bitset.h"
#include "../common/clock.h"
#include "../common/env.h"
#include "../common/interrupt.h"
#include "../common/par_rows.h"
#include "hash_words.h"

#include <math.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Two passes find the same edges (docs/algorithms.md, "Edges"):
 *
 * - up: each concept's upper covers, the maximal intents among B ∩ g'
 *   over the objects g outside its extent.  The candidates are subsets of
 *   B, held as masks over B's positions (bit p: B's p-th attribute) when
 *   they are made from the columns of B's attributes (sparse contexts: an
 *   object that shares nothing with B gives the empty candidate and is
 *   never touched), or as attribute bitsets B ∩ g' from the rows (dense
 *   ones), whichever a concept's incidences make cheaper.
 * - down: each concept's lower covers, the maximal extents among A ∩ m'
 *   over the attributes m outside its intent, as masks over A's
 *   positions, made from the rows of A's objects: cheap where extents are
 *   small against the objects (dense contexts' lattices), and every edge
 *   is then routed to the concept below it (to its rank).
 *
 * The intents are ascending attribute indices, found by a hash table over
 * concept ids (2^k >= 2n slots). */
typedef struct {
    uint64_t *mask;     /* per item (object; attribute down): a mask */
    uint64_t *stamp;    /* concept id + 1 that last touched the item */
    uint32_t *touched;  /* the items touched, in order */
    uint64_t *cand;     /* the distinct candidates, cw words each */
    uint32_t *hslot;    /* candidate + 1, 0: empty */
    uint32_t *used;     /* the slots filled */
    uint32_t *pops, *bucket, *kept, *order, *key;
    uint32_t *ext;      /* down: the extent's objects */
    uint64_t *B;        /* the intent as a bitset */
    uint64_t *single;   /* up by columns: the positions some object has alone */
    uint64_t hsize;
    /* maximal's index of the kept candidates by position: the first node
     * of each position's list (NONE: empty), how many kept hold it, and
     * the nodes (kept candidate, next node), grown as needed */
    uint32_t *ihead, *icnt;
    uint32_t (*inode)[2];
    uint64_t inodes_cap;
} cov_scratch;

#define NONE UINT32_MAX

typedef struct {
    const fca_context *ctx;
    uint64_t n;
    uint64_t *ioff;           /* n + 1 */
    uint32_t *iidx;           /* the intents, ascending attribute indices */
    uint32_t kmax;            /* attributes of the largest intent */
    uint32_t w;               /* words of a row bitset */
    uint64_t *rows;           /* n_obj x w row bitsets, or NULL: columns only */
    uint64_t *col_ptr;        /* n_attr + 1 */
    uint32_t *col_obj;        /* the objects of each attribute, ascending */
    uint64_t *slot, smask;    /* concept id + 1, 0: empty */
    uint64_t first;           /* the rank's concepts, whose covers it returns */
    uint64_t wfirst;          /* the concepts it finds the covers of */
    uint32_t min_support;     /* down: a lower cover below it is not a concept here */
    int down;                 /* the pass: 0 up, 1 down */
    uint64_t **covers;        /* per concept of the range, its covers (down: lower ones) */
    uint32_t *ncov;
    cov_scratch *scratch;     /* one per thread, made on first use */
    int pass;                 /* FD_EDGES_PASS: PASS_* */
    _Atomic uint64_t by_rows; /* up: the concepts that took the rows */
    /* With a device: the covers it found (covers[i] points in here for
     * those), and the concepts left to the host's threads. */
    uint64_t *dev_ids, *rest, nrest, on_device;
} cov_ctx;

/* FD_EDGES_PASS (a test knob): the pass by the estimate and each
 * concept's cheaper way up, or one for all (rows and down need the row
 * bitsets to fit). */
enum { PASS_AUTO, PASS_ROWS, PASS_COLUMNS, PASS_DOWN };
static const char *const passes[] = {"auto", "rows", "columns", "down", NULL};

static uint64_t hash_u32(const uint32_t *x, uint32_t k)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ k;
    for (uint32_t i = 0; i < k; i++) {
        h = (h ^ x[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

static int64_t find_intent(const cov_ctx *c, const uint32_t *key, uint32_t k)
{
    for (uint64_t s = hash_u32(key, k) & c->smask;; s = (s + 1) & c->smask) {
        if (!c->slot[s]) return -1;
        const uint64_t id = c->slot[s] - 1, len = c->ioff[id + 1] - c->ioff[id];
        if (len == k && !memcmp(c->iidx + c->ioff[id], key, (size_t)k * sizeof *key)) return (int64_t)id;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void scratch_free(cov_scratch *s)
{
    free(s->mask);
    free(s->stamp);
    free(s->touched);
    free(s->cand);
    free(s->hslot);
    free(s->used);
    free(s->pops);
    free(s->bucket);
    free(s->kept);
    free(s->order);
    free(s->key);
    free(s->B);
    free(s->ext);
    free(s->single);
    free(s->ihead);
    free(s->icnt);
    free(s->inode);
}

static fd_status scratch_make(const cov_ctx *c, cov_scratch *s)
{
    const size_t no = (size_t)c->ctx->n_obj + 1, na = (size_t)c->ctx->n_attr + 1, kw = bs_words(c->kmax ? c->kmax : 1);
    const size_t items = c->down ? na : no, mw = c->down ? bs_words((uint32_t)no) : kw;
    const size_t cw = c->down ? mw : c->rows ? c->w : kw;
    s->hsize = 2;
    while (s->hsize < 2 * items) s->hsize *= 2;
    s->mask = malloc(items * mw * sizeof *s->mask);
    s->stamp = calloc(items, sizeof *s->stamp);
    s->touched = malloc(items * sizeof *s->touched);
    s->cand = malloc(items * cw * sizeof *s->cand);
    s->B = malloc((size_t)c->w * sizeof *s->B);
    s->hslot = calloc(s->hsize, sizeof *s->hslot);
    s->used = malloc(items * sizeof *s->used);
    s->pops = malloc(items * sizeof *s->pops);
    s->bucket = malloc(((c->down ? no : c->kmax) + 2) * sizeof *s->bucket);
    s->kept = malloc(items * sizeof *s->kept);
    s->order = malloc(items * sizeof *s->order);
    s->key = malloc((c->down ? na : (size_t)c->kmax + 1) * sizeof *s->key);
    s->ext = malloc((c->down ? no : 1) * sizeof *s->ext);
    s->single = calloc(kw, sizeof *s->single);
    s->ihead = malloc(cw * 64 * sizeof *s->ihead);
    s->icnt = calloc(cw * 64, sizeof *s->icnt);
    if (s->ihead) memset(s->ihead, 0xff, cw * 64 * sizeof *s->ihead); /* NONE */
    if (s->mask && s->stamp && s->touched && s->cand && s->hslot && s->used && s->pops && s->bucket && s->kept &&
        s->order && s->key && s->B && s->ext && s->single && s->ihead && s->icnt)
        return FD_OK;
    scratch_free(s);
    memset(s, 0, sizeof *s);
    return fd_fail(FD_ERR_NOMEM, "out of memory for the covers' scratch (%zu objects, %zu attributes)", no - 1, na - 1);
}

/* Inline: candidates are a word or two, where a call to memcmp costs more
 * than the comparison. */
static inline int words_equal(const uint64_t *a, const uint64_t *b, uint32_t w)
{
    for (uint32_t q = 0; q < w; q++)
        if (a[q] != b[q]) return 0;
    return 1;
}

/* Item (an object up, an attribute down) gets bit in word q of its mask
 * of mw words; the first time in concept cur - 1 its mask is cleared and
 * it joins the touched list (*t items). */
static inline void mark(cov_scratch *s, uint32_t item, uint32_t mw, uint64_t cur, uint32_t q, uint64_t bit,
                        uint32_t *t)
{
    uint64_t *M = s->mask + (size_t)item * mw;
    if (s->stamp[item] != cur) {
        s->stamp[item] = cur;
        for (uint32_t x = 0; x < mw; x++) M[x] = 0;
        s->touched[(*t)++] = item;
    }
    M[q] |= bit;
}

/* Candidate nd, already at s->cand + nd * cw: kept (returns nd + 1)
 * unless an equal one is. */
static uint32_t add_distinct(cov_scratch *s, uint32_t nd, uint32_t cw)
{
    const uint64_t *M = s->cand + (size_t)nd * cw, hm = s->hsize - 1;
    uint64_t h = fd_hash_words(M, cw) & hm;
    for (; s->hslot[h]; h = (h + 1) & hm)
        if (words_equal(s->cand + (size_t)(s->hslot[h] - 1) * cw, M, cw)) return nd;
    s->hslot[h] = nd + 1;
    s->used[nd] = (uint32_t)h;
    return nd + 1;
}

/* The distinct non-empty candidates of concept i (intent b of k
 * attributes) by its columns, as masks over b's positions (kw words):
 * every object of a column of b gets the positions it has; those with all
 * of them (the extent) are dropped.  Returns their number; *empty: some
 * object outside the extent shares nothing with b. */
static uint32_t candidates_by_columns(const cov_ctx *c, cov_scratch *s, uint64_t i, const uint32_t *b, uint32_t k,
                                      uint32_t kw, int *empty)
{
    const uint64_t cur = i + 1;
    uint32_t t = 0, nd = 0;
    for (uint32_t p = 0; p < k; p++) {
        const uint64_t bit = 1ull << (p & 63u);
        const uint32_t q = p >> 6;
        for (uint64_t e = c->col_ptr[b[p]]; e < c->col_ptr[b[p] + 1]; e++) mark(s, c->col_obj[e], kw, cur, q, bit, &t);
    }
    *empty = t < c->ctx->n_obj;
    const uint64_t last = k % 64 ? (1ull << (k % 64)) - 1 : ~0ull;
    for (uint32_t a = 0; a < t; a++) {
        const uint64_t *M = s->mask + (size_t)s->touched[a] * kw;
        int full = M[kw - 1] == last;
        for (uint32_t q = 0; q + 1 < kw && full; q++) full = M[q] == ~0ull;
        if (full) continue;
        /* Most objects of a sparse context share one attribute with B:
         * those candidates are a bit each, not hashed. */
        uint32_t nz = 0, zq = 0;
        for (uint32_t q = 0; q < kw; q++)
            if (M[q]) nz++, zq = q;
        if (nz == 1 && !(M[zq] & (M[zq] - 1))) {
            s->single[zq] |= M[zq];
            continue;
        }
        for (uint32_t x = 0; x < kw; x++) s->cand[(size_t)nd * kw + x] = M[x];
        nd = add_distinct(s, nd, kw);
    }
    for (uint32_t a = 0; a < nd; a++) s->hslot[s->used[a]] = 0;
    for (uint32_t q = 0; q < kw; q++) {
        for (uint64_t x = s->single[q]; x; x &= x - 1) {
            uint64_t *C = s->cand + (size_t)nd++ * kw;
            for (uint32_t y = 0; y < kw; y++) C[y] = 0;
            C[q] = x & (~x + 1);
        }
        s->single[q] = 0;
    }
    return nd;
}

/* The same by the rows, as bitsets over the attributes (w words): B ∩ g'
 * for every object; cheaper where b's columns hold more incidences than
 * the rows have words (dense contexts). */
static uint32_t candidates_by_rows(const cov_ctx *c, cov_scratch *s, const uint32_t *b, uint32_t k, int *empty)
{
    const uint32_t w = c->w;
    uint32_t nd = 0;
    memset(s->B, 0, w * sizeof *s->B);
    for (uint32_t p = 0; p < k; p++) bs_set(s->B, b[p]);
    *empty = 0;
    for (uint32_t g = 0; g < c->ctx->n_obj; g++) {
        const uint64_t *R = c->rows + (size_t)g * w;
        uint64_t *D = s->cand + (size_t)nd * w, any = 0;
        int in_extent = 1;
        for (uint32_t q = 0; q < w; q++) {
            D[q] = s->B[q] & R[q];
            in_extent &= D[q] == s->B[q];
            any |= D[q];
        }
        if (in_extent) continue;
        if (!any) *empty = 1;
        else nd = add_distinct(s, nd, w);
    }
    for (uint32_t a = 0; a < nd; a++) s->hslot[s->used[a]] = 0;
    return nd;
}

/* Kept candidates from which maximal() indexes them by position. */
#define MAXIMAL_INDEX_FROM 32

/* Kept candidate b into the index by position (maximal). */
static fd_status index_add(cov_scratch *s, uint32_t b, uint32_t kw, uint64_t *nn)
{
    const uint64_t *K = s->cand + (size_t)s->kept[b] * kw;
    const uint32_t pop = s->pops[s->kept[b]];
    if (*nn + pop > s->inodes_cap) FD_TRY(fd_grow((void **)&s->inode, &s->inodes_cap, *nn + pop, sizeof *s->inode));
    for (uint32_t q = 0; q < kw; q++)
        for (uint64_t x = K[q]; x; x &= x - 1) {
            const uint32_t pos = q * 64u + (uint32_t)__builtin_ctzll(x);
            s->inode[*nn][0] = b;
            s->inode[*nn][1] = s->ihead[pos];
            s->ihead[pos] = (uint32_t)(*nn)++;
            s->icnt[pos]++;
        }
    return FD_OK;
}

/* Whether candidate A lies in a kept one: each tested in turn while they
 * are few, then (indexed) only those that hold A's rarest position among
 * them. */
static int below_kept(const cov_scratch *s, const uint64_t *A, uint32_t m, uint32_t kw, int indexed)
{
    uint32_t n = 0, best = NONE, fewest = NONE;
    if (indexed) {
        for (uint32_t q = 0; q < kw && fewest; q++)
            for (uint64_t x = A[q]; x && fewest; x &= x - 1) {
                const uint32_t pos = q * 64u + (uint32_t)__builtin_ctzll(x);
                if (s->icnt[pos] < fewest) {
                    fewest = s->icnt[pos];
                    best = pos;
                }
            }
        if (best == NONE) return m > 0; /* empty: below any */
        if (!fewest) return 0;          /* a position no kept one holds */
        n = s->ihead[best];
    }
    for (uint32_t b = 0; indexed ? n != NONE : b < m; b++) {
        const uint64_t *K = s->cand + (size_t)s->kept[indexed ? s->inode[n][0] : b] * kw;
        int sub = 1;
        for (uint32_t q = 0; q < kw && sub; q++) sub = (A[q] & ~K[q]) == 0;
        if (sub) return 1;
        if (indexed) n = s->inode[n][1];
    }
    return 0;
}

/* The maximal ones of nd candidates, largest first: a candidate is
 * maximal when no maximal one kept before it contains it (a containing
 * candidate is larger, so it came first, and is itself in or below a kept
 * one).  Past MAXIMAL_INDEX_FROM kept ones, only those that hold the
 * candidate's rarest position among them are tested (below_kept):
 * testing every one was quadratic where a concept has many covers, as
 * the bottom of a wide sparse context has its atoms (50,000 x 3,000 at
 * density 0.0004: 94% of the run in here).  Their number into *m, the
 * candidates in s->kept. */
static fd_status maximal(cov_scratch *s, uint32_t nd, uint32_t k, uint32_t kw, uint32_t *m_out)
{
    fd_status st = FD_OK;
    /* A stable counting sort on the sizes, so ties keep the objects' order. */
    for (uint32_t a = 0; a <= k; a++) s->bucket[a] = 0;
    for (uint32_t a = 0; a < nd; a++) s->bucket[s->pops[a] = bs_count(s->cand + (size_t)a * kw, kw)]++;
    for (uint32_t a = k, sum = 0; a + 1 > 0; a--) {
        const uint32_t cnt = s->bucket[a];
        s->bucket[a] = sum;
        sum += cnt;
    }
    for (uint32_t a = 0; a < nd; a++) s->order[s->bucket[s->pops[a]]++] = a;
    uint32_t m = 0;
    uint64_t nn = 0;
    int indexed = 0;
    for (uint32_t a = 0; a < nd && st == FD_OK; a++) {
        if (below_kept(s, s->cand + (size_t)s->order[a] * kw, m, kw, indexed)) continue;
        s->kept[m++] = s->order[a];
        if (indexed) st = index_add(s, m - 1, kw, &nn);
        else if (m == MAXIMAL_INDEX_FROM)
            for (uint32_t b = 0; b < m && st == FD_OK; b++) st = index_add(s, b, kw, &nn);
        indexed = m >= MAXIMAL_INDEX_FROM;
    }
    for (uint32_t b = 0; nn && b < m; b++) { /* the index emptied for the next call */
        const uint64_t *K = s->cand + (size_t)s->kept[b] * kw;
        for (uint32_t q = 0; q < kw; q++)
            for (uint64_t x = K[q]; x; x &= x - 1) {
                const uint32_t pos = q * 64u + (uint32_t)__builtin_ctzll(x);
                s->ihead[pos] = NONE;
                s->icnt[pos] = 0;
            }
    }
    *m_out = m;
    return st;
}

/* Concept i's covers into c->covers (its own array) and c->ncov. */
static fd_status keep_covers(cov_ctx *c, uint64_t i, uint64_t *out, uint32_t t)
{
    qsort(out, t, sizeof *out, cmp_u64);
    c->covers[i - c->wfirst] = out;
    c->ncov[i - c->wfirst] = t;
    return FD_OK;
}

/* Up's two ways, in word operations: by rows a word of each row and a
 * hash an object; by columns a scattered OR and a hash an incidence,
 * about 4 words (an OR that misses the cache).  4 against 1, 2, 8 on
 * contexts from 14 to 870 attributes: 4 was as fast as the best of them
 * on each and 1.4 times faster than 1 on a 3,000 x 44 context at
 * density 0.3 (runs by hand on the dev VM). */
#define COLUMN_WORDS 4
static inline uint64_t up_rows_cost(uint64_t n_obj, uint32_t w) { return n_obj * (w + 1); }
static inline int up_by_rows(uint64_t incidences, uint64_t n_obj, uint32_t w)
{
    return COLUMN_WORDS * incidences > up_rows_cost(n_obj, w);
}

/* Up: concept i's upper covers. */
static fd_status upper_covers(cov_ctx *c, cov_scratch *s, uint64_t i)
{
    const uint32_t *b = c->iidx + c->ioff[i];
    const uint32_t k = (uint32_t)(c->ioff[i + 1] - c->ioff[i]), kw = bs_words(k);
    if (!k) return FD_OK; /* an empty intent is the top's: nothing above it */
    int empty = 0;
    uint64_t incidences = 0;
    for (uint32_t p = 0; p < k; p++) incidences += c->col_ptr[b[p] + 1] - c->col_ptr[b[p]];
    const int by_rows = c->rows && c->pass != PASS_COLUMNS &&
                        (c->pass == PASS_ROWS || up_by_rows(incidences, c->ctx->n_obj, c->w));
    if (by_rows) atomic_fetch_add_explicit(&c->by_rows, 1, memory_order_relaxed);
    const uint32_t cw = by_rows ? c->w : kw;
    const uint32_t nd = by_rows ? candidates_by_rows(c, s, b, k, &empty) : candidates_by_columns(c, s, i, b, k, kw, &empty);
    uint32_t m;
    FD_TRY(maximal(s, nd, k, cw, &m));
    uint64_t *out = malloc(((size_t)m + 1) * sizeof *out);
    uint32_t t = 0;
    if (!out) return fd_fail(FD_ERR_NOMEM, "out of memory for the covers");
    /* The empty candidate is below any other, so it is a cover only when
     * it is alone. */
    for (uint32_t a = 0; a < m + (m == 0 && empty); a++) {
        uint32_t len = 0;
        if (a < m) {
            /* Positions of b, or attributes: ascending either way. */
            const uint64_t *M = s->cand + (size_t)s->kept[a] * cw;
            for (uint32_t q = 0; q < cw; q++)
                for (uint64_t x = M[q]; x; x &= x - 1) {
                    const uint32_t bit = q * 64 + (uint32_t)__builtin_ctzll(x);
                    s->key[len++] = by_rows ? bit : b[bit];
                }
        }
        const int64_t id = find_intent(c, s->key, len);
        if (id < 0) {
            free(out);
            return fd_fail(FD_ERR_INPUT, "--edges: an upper cover of concept %llu is not among the concepts",
                           (unsigned long long)i);
        }
        out[t++] = (uint64_t)id;
    }
    return keep_covers(c, i, out, t);
}

/* Down: concept i's extent A (the objects of its rarest attribute that
 * have all of B), then for every attribute m outside B the mask of A's
 * objects that have it (A ∩ m', never all of A: m would be in B); the
 * maximal distinct ones are the lower covers' extents, and a cover's
 * intent is B and the attributes whose masks contain its own.  A cover
 * below the minimum support is not a concept of an iceberg lattice. */
static fd_status lower_covers(cov_ctx *c, cov_scratch *s, uint64_t i)
{
    const fca_context *ctx = c->ctx;
    const uint32_t *b = c->iidx + c->ioff[i];
    const uint32_t k = (uint32_t)(c->ioff[i + 1] - c->ioff[i]), w = c->w, na = ctx->n_attr;
    uint32_t nx = 0, t = 0, nd = 0;
    memset(s->B, 0, w * sizeof *s->B);
    for (uint32_t p = 0; p < k; p++) bs_set(s->B, b[p]);
    if (!k) {
        for (uint32_t g = 0; g < ctx->n_obj; g++) s->ext[nx++] = g;
    } else {
        uint32_t rare = b[0];
        for (uint32_t p = 1; p < k; p++)
            if (c->col_ptr[b[p] + 1] - c->col_ptr[b[p]] < c->col_ptr[rare + 1] - c->col_ptr[rare]) rare = b[p];
        for (uint64_t e = c->col_ptr[rare]; e < c->col_ptr[rare + 1]; e++) {
            const uint32_t g = c->col_obj[e];
            const uint64_t *R = c->rows + (size_t)g * w;
            int in = 1;
            for (uint32_t q = 0; q < w && in; q++) in = (s->B[q] & ~R[q]) == 0;
            if (in) s->ext[nx++] = g;
        }
    }
    const uint32_t aw = bs_words(nx ? nx : 1);
    const uint64_t cur = i + 1;
    for (uint32_t pos = 0; pos < nx; pos++) {
        const uint32_t g = s->ext[pos], q = pos >> 6;
        const uint64_t bit = 1ull << (pos & 63u);
        for (uint64_t e = ctx->row_ptr[g]; e < ctx->row_ptr[g + 1]; e++) {
            const uint32_t m = ctx->row_idx[e];
            if (!bs_test(s->B, m)) mark(s, m, aw, cur, q, bit, &t);
        }
    }
    for (uint32_t a = 0; a < t; a++) {
        const uint64_t *M = s->mask + (size_t)s->touched[a] * aw;
        for (uint32_t x = 0; x < aw; x++) s->cand[(size_t)nd * aw + x] = M[x];
        nd = add_distinct(s, nd, aw);
    }
    for (uint32_t a = 0; a < nd; a++) s->hslot[s->used[a]] = 0;
    uint32_t m;
    FD_TRY(maximal(s, nd, nx, aw, &m));
    uint64_t *out = malloc(((size_t)m + 1) * sizeof *out);
    uint32_t nout = 0;
    if (!out) return fd_fail(FD_ERR_NOMEM, "out of memory for the covers");
    /* No attribute outside B on A's objects, and some outside B: the
     * bottom (extent empty, intent every attribute) is the one below. */
    const int bottom = nd == 0 && k < na;
    for (uint32_t a = 0; a < m + (uint32_t)bottom; a++) {
        uint32_t len = 0, size = 0;
        if (a < m) {
            const uint64_t *E = s->cand + (size_t)s->kept[a] * aw;
            size = bs_count(E, aw);
            for (uint32_t p = 0; p < k; p++) s->key[len++] = b[p];
            for (uint32_t x = 0; x < t; x++) {
                const uint64_t *X = s->mask + (size_t)s->touched[x] * aw;
                int sub = 1;
                for (uint32_t q = 0; q < aw && sub; q++) sub = (E[q] & ~X[q]) == 0;
                if (sub) s->key[len++] = s->touched[x];
            }
            qsort(s->key, len, sizeof *s->key, cmp_u32);
        } else {
            for (uint32_t x = 0; x < na; x++) s->key[len++] = x;
        }
        const int64_t id = find_intent(c, s->key, len);
        if (id >= 0) out[nout++] = (uint64_t)id;
        else if (size >= c->min_support) {
            free(out);
            return fd_fail(FD_ERR_INPUT, "--edges: a lower cover of concept %llu (support %u) is not among the concepts",
                           (unsigned long long)i, size);
        }
    }
    return keep_covers(c, i, out, nout);
}

static fd_status covers_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    cov_ctx *c = arg;
    cov_scratch *s = &c->scratch[thread];
    if (!s->mask) FD_TRY(scratch_make(c, s));
    /* The covers of a large lattice take minutes: a signal stops them
     * here, and a checkpointed run keeps what --resume needs. */
    if (fd_interrupted()) return fd_interrupt_check();
    for (uint64_t i = i0; i < i1; i++) FD_TRY(c->down ? lower_covers(c, s, i) : upper_covers(c, s, i));
    return FD_OK;
}

/* covers_range over the concepts the device left (positions in c->rest). */
static fd_status covers_rest(void *arg, uint64_t r0, uint64_t r1, int thread)
{
    cov_ctx *c = arg;
    cov_scratch *s = &c->scratch[thread];
    if (!s->mask) FD_TRY(scratch_make(c, s));
    if (fd_interrupted()) return fd_interrupt_check();
    for (uint64_t r = r0; r < r1; r++) FD_TRY(upper_covers(c, s, c->rest[r]));
    return FD_OK;
}

/* Which concepts take the rows (a byte each from wfirst): the device's. */
typedef struct {
    const cov_ctx *c;
    uint8_t *rows;
} rows_work;

static fd_status which_way(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const rows_work *w = arg;
    const cov_ctx *c = w->c;
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) {
        const uint32_t *b = c->iidx + c->ioff[i];
        const uint64_t k = c->ioff[i + 1] - c->ioff[i];
        uint64_t incidences = 0;
        for (uint64_t p = 0; p < k; p++) incidences += c->col_ptr[b[p] + 1] - c->col_ptr[b[p]];
        w->rows[i - c->wfirst] = k && (c->pass == PASS_ROWS || up_by_rows(incidences, c->ctx->n_obj, c->w));
    }
    return FD_OK;
}

/* The up pass on the device for the concepts that take the rows (all of
 * them with FD_EDGES_PASS=rows); the others, and those the device leaves
 * (lattice_gpu_up_covers), into c->rest for the host's threads. */
static fd_status covers_on_device(cov_ctx *c, const lattice_covers_job *job)
{
    fd_status st = FD_OK;
    const uint64_t wc = job->work_count;
    uint64_t *list = NULL, *start = NULL, nlist = 0, nids = 0;
    uint32_t *cnt = NULL;
    uint8_t *rows = NULL;
    FD_ALLOC_GOTO(list, wc + 1, st, done);
    FD_ALLOC_GOTO(c->rest, wc + 1, st, done);
    FD_ALLOC_GOTO(rows, wc + 1, st, done);
    rows_work rw = {c, rows};
    FD_TRY_GOTO(par_rows_chunk(job->threads, c->wfirst, c->wfirst + wc, 4096, which_way, &rw, NULL), st, done);
    for (uint64_t i = c->wfirst; i < c->wfirst + wc; i++)
        if (rows[i - c->wfirst]) list[nlist++] = i;
        else c->rest[c->nrest++] = i;
    FD_ALLOC_GOTO(start, nlist + 1, st, done);
    FD_ALLOC_GOTO(cnt, nlist + 1, st, done);
    const lattice_gpu_covers in = {job->device, c->n, c->ioff, c->iidx, c->ctx->n_obj, c->w, c->rows, list, nlist};
    if (nlist) FD_TRY_GOTO(job->up_covers(&in, start, cnt, &c->dev_ids, &nids), st, done);
    for (uint64_t t = 0; t < nlist; t++) {
        if (cnt[t] == UINT32_MAX) {
            c->rest[c->nrest++] = list[t];
            continue;
        }
        if (start[t] > nids || cnt[t] > nids - start[t]) {
            st = fd_fail(FD_ERR_INTERNAL, "--edges: the device's covers of concept %llu are out of range",
                         (unsigned long long)list[t]);
            goto done;
        }
        c->covers[list[t] - c->wfirst] = c->dev_ids + start[t];
        c->ncov[list[t] - c->wfirst] = cnt[t];
        c->on_device++;
    }
    atomic_fetch_add_explicit(&c->by_rows, c->on_device, memory_order_relaxed);
    if (job->prog) fd_progress_add(job->prog, wc - c->nrest);
done:
    free(list);
    free(rows);
    free(start);
    free(cnt);
    return st;
}

/* The intents as ascending attribute indices (checked: each id an
 * attribute, none twice), the largest of the range's, and their table:
 * per concept on the threads (a lattice of 10^7 concepts took seconds on
 * one, while the GPU found its covers in less). */
typedef struct {
    cov_ctx *c;
    const uint64_t *off;
    const uint32_t *ids, *index_of;
    uint32_t maxlabel;
    uint64_t count;
    _Atomic uint64_t bad;  /* the first concept (+ 1) whose intent is refused, 0: none */
    _Atomic uint32_t kmax;
} intents_work;

/* 0, or 1 when an id (into *bad_id) is not an attribute, 2 when one is
 * there twice. */
static int index_one(intents_work *w, uint64_t i, uint32_t *bad_id)
{
    cov_ctx *c = w->c;
    const uint64_t len = c->ioff[i + 1] - c->ioff[i];
    uint32_t *d = c->iidx + c->ioff[i];
    for (uint64_t k = 0; k < len; k++) {
        const uint32_t id = w->ids[w->off[i] - w->off[0] + k];
        if (id > w->maxlabel || w->index_of[id] == UINT32_MAX) {
            *bad_id = id;
            return 1;
        }
        d[k] = w->index_of[id];
    }
    qsort(d, len, sizeof *d, cmp_u32);
    for (uint64_t k = 1; k < len; k++)
        if (d[k] == d[k - 1]) return 2;
    return 0;
}

static fd_status index_range(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    intents_work *w = arg;
    cov_ctx *c = w->c;
    _Atomic uint64_t *slot = (_Atomic uint64_t *)c->slot;
    uint32_t kmax = 0, id;
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) {
        if (index_one(w, i, &id)) {
            uint64_t seen = atomic_load_explicit(&w->bad, memory_order_relaxed);
            while ((!seen || i + 1 < seen) &&
                   !atomic_compare_exchange_weak_explicit(&w->bad, &seen, i + 1, memory_order_relaxed, memory_order_relaxed))
                ;
            continue;
        }
        const uint64_t len = c->ioff[i + 1] - c->ioff[i];
        if (i >= c->wfirst && i < c->wfirst + w->count && len > kmax) kmax = (uint32_t)len;
        /* Open addressing by compare-and-swap: any order of insertion gives
         * a table that finds every intent. */
        for (uint64_t s = hash_u32(c->iidx + c->ioff[i], (uint32_t)len) & c->smask;; s = (s + 1) & c->smask) {
            uint64_t empty = 0;
            if (atomic_compare_exchange_strong_explicit(&slot[s], &empty, i + 1, memory_order_relaxed,
                                                        memory_order_relaxed))
                break;
        }
    }
    for (uint32_t m = atomic_load_explicit(&w->kmax, memory_order_relaxed);
         kmax > m && !atomic_compare_exchange_weak_explicit(&w->kmax, &m, kmax, memory_order_relaxed, memory_order_relaxed);)
        ;
    return FD_OK;
}

static fd_status index_intents(cov_ctx *c, const uint64_t *off, const uint32_t *ids, uint64_t count, int threads)
{
    fd_status st = FD_OK;
    const fca_context *ctx = c->ctx;
    uint32_t *index_of = NULL, maxlabel = 0;
    for (uint32_t a = 0; a < ctx->n_attr; a++) maxlabel = ctx->attr_label[a] > maxlabel ? ctx->attr_label[a] : maxlabel;
    FD_ALLOC_GOTO(index_of, (size_t)maxlabel + 1, st, done);
    for (uint32_t a = 0; a <= maxlabel; a++) index_of[a] = UINT32_MAX;
    for (uint32_t a = 0; a < ctx->n_attr; a++) index_of[ctx->attr_label[a]] = a;
    FD_ALLOC_GOTO(c->ioff, c->n + 1, st, done);
    FD_ALLOC_GOTO(c->iidx, off[c->n] - off[0] + 1, st, done);
    c->ioff[0] = 0;
    for (uint64_t i = 0; i < c->n; i++) {
        if (off[i + 1] < off[i]) {
            st = fd_fail(FD_ERR_INPUT, "--edges: the intents' offsets are out of order at concept %llu", (unsigned long long)i);
            goto done;
        }
        c->ioff[i + 1] = c->ioff[i] + (off[i + 1] - off[i]);
    }
    uint64_t slots = 2;
    while (slots < 2 * c->n) slots *= 2;
    c->smask = slots - 1;
    FD_ALLOC_GOTO(c->slot, slots, st, done);
    intents_work w = {.c = c, .off = off, .ids = ids, .index_of = index_of, .maxlabel = maxlabel, .count = count};
    atomic_init(&w.bad, 0);
    atomic_init(&w.kmax, 0);
    FD_TRY_GOTO(par_rows_chunk(threads, 0, c->n, 4096, index_range, &w, NULL), st, done);
    const uint64_t bad = atomic_load(&w.bad);
    if (bad) { /* the first in concept order, as one thread would say */
        uint32_t id = 0;
        st = index_one(&w, bad - 1, &id) == 1
                 ? fd_fail(FD_ERR_INPUT, "--edges: intent id %u is not an attribute", id)
                 : fd_fail(FD_ERR_INPUT, "--edges: concept %llu names an attribute twice", (unsigned long long)bad - 1);
        goto done;
    }
    c->kmax = atomic_load(&w.kmax);
done:
    free(index_of);
    return st;
}

/* The objects of each attribute, ascending (a counting sort of the rows). */
static fd_status index_columns(cov_ctx *c)
{
    fd_status st = FD_OK;
    const fca_context *ctx = c->ctx;
    const uint64_t nnz = ctx->row_ptr[ctx->n_obj];
    FD_ALLOC_GOTO(c->col_ptr, (size_t)ctx->n_attr + 1, st, done);
    FD_ALLOC_GOTO(c->col_obj, nnz + 1, st, done);
    for (uint64_t e = 0; e < nnz; e++) c->col_ptr[ctx->row_idx[e] + 1]++;
    for (uint32_t a = 0; a < ctx->n_attr; a++) c->col_ptr[a + 1] += c->col_ptr[a];
    uint64_t *at = NULL;
    FD_ALLOC_GOTO(at, (size_t)ctx->n_attr + 1, st, done);
    memcpy(at, c->col_ptr, ((size_t)ctx->n_attr + 1) * sizeof *at);
    for (uint32_t g = 0; g < ctx->n_obj; g++)
        for (uint64_t e = ctx->row_ptr[g]; e < ctx->row_ptr[g + 1]; e++) c->col_obj[at[ctx->row_idx[e]]++] = g;
    free(at);
done:
    return st;
}

/* Row bitsets for the concepts whose columns hold many incidences, when
 * they fit in ROWS_MAX_BYTES (wide sparse contexts take the columns). */
#define ROWS_MAX_BYTES ((uint64_t)1 << 30)

static fd_status index_rows(cov_ctx *c)
{
    const fca_context *ctx = c->ctx;
    c->w = bs_words(ctx->n_attr ? ctx->n_attr : 1);
    if ((uint64_t)ctx->n_obj * c->w * sizeof *c->rows > ROWS_MAX_BYTES) return FD_OK;
    if (!(c->rows = calloc((size_t)ctx->n_obj * c->w + 1, sizeof *c->rows)))
        return fd_fail(FD_ERR_NOMEM, "out of memory for the covers' rows");
    for (uint32_t g = 0; g < ctx->n_obj; g++)
        for (uint64_t e = ctx->row_ptr[g]; e < ctx->row_ptr[g + 1]; e++) bs_set(c->rows + (size_t)g * c->w, ctx->row_idx[e]);
    return FD_OK;
}

/* Down's masks and candidates, per thread: the attributes x the words of
 * the largest extent, twice. */
#define DOWN_MAX_BYTES ((uint64_t)256 << 20)

/* The pass, the same on every rank (each has every intent, support and
 * the context, and nothing else enters): down when an estimate of its
 * word operations over all n concepts is below up's.  Up: a concept's
 * cheaper way (up_by_rows).  Down: its rarest attribute's objects
 * filtered by the rows (a row's words each), the rows of its extent A
 * (rbar attributes a row), and the attributes they touch (at most
 * min(attributes, |A| rbar)) hashed and tested against the covers as
 * masks of |A| / 64 + 1 words, about 8 times over.  This picks the
 * faster pass on mushroom, T10I4D100K at support 100, chess at 1500 and
 * a 3,000 x 44 context at density 0.3 (bench/lattice-edges.sh --passes;
 * docs/performance.md).  Without the supports |A| is taken as the rarest attribute's. */
static fd_status choose_pass(cov_ctx *c, const uint32_t *supports)
{
    const fca_context *ctx = c->ctx;
    const uint64_t no = ctx->n_obj, na = ctx->n_attr;
    const int can_down = c->rows && 2 * (na + 1) * bs_words(ctx->n_obj + 1) * sizeof(uint64_t) <= DOWN_MAX_BYTES;
    if (c->pass == PASS_DOWN && !can_down)
        return fd_fail(FD_ERR_USAGE, "FD_EDGES_PASS=down: the rows (%u x %u) do not fit the pass's memory", ctx->n_obj,
                       ctx->n_attr);
    c->down = c->pass == PASS_DOWN;
    if (c->pass != PASS_AUTO || !can_down) return FD_OK;
    const double rbar = no ? (double)ctx->row_ptr[no] / (double)no : 0;
    double up = 0, down = 0;
    for (uint64_t i = 0; i < c->n; i++) {
        const uint32_t *b = c->iidx + c->ioff[i];
        const uint64_t k = c->ioff[i + 1] - c->ioff[i];
        uint64_t sum = 0, rare = no;
        for (uint64_t p = 0; p < k; p++) {
            const uint64_t supp = c->col_ptr[b[p] + 1] - c->col_ptr[b[p]];
            sum += supp;
            rare = supp < rare ? supp : rare;
        }
        const double ext = supports && supports[i] <= rare ? supports[i] : (double)rare;
        const double rows = (double)up_rows_cost(no, c->w), cols = (double)COLUMN_WORDS * (double)sum;
        if (k) up += c->rows && rows < cols ? rows : cols;
        const double touched = fmin((double)na, ext * rbar);
        down += (double)rare * c->w + ext * rbar + 8 * touched * (ext / 64 + 1);
    }
    c->down = down < up;
    return FD_OK;
}

/* The upper covers of this rank's concepts from the (lower, upper) pairs
 * it got (down's, or any pass's through a router): a counting sort,
 * ascending since a lower concept's pairs come in the upper concepts'
 * order (checked; sorted when not). */
static fd_status pairs_to_covers(const cov_ctx *c, const uint64_t *pairs, uint64_t np, uint64_t count, uint64_t **cov_off,
                                 uint64_t **cov_ids)
{
    fd_status st = FD_OK;
    uint64_t *at = NULL;
    FD_ALLOC_GOTO(*cov_off, count + 1, st, done);
    FD_ALLOC_GOTO(*cov_ids, np + 1, st, done);
    FD_ALLOC_GOTO(at, count + 1, st, done);
    for (uint64_t e = 0; e < np; e++) {
        if (pairs[2 * e] < c->first || pairs[2 * e] - c->first >= count) {
            st = fd_fail(FD_ERR_INTERNAL, "--edges: concept %llu's covers came to the wrong rank",
                         (unsigned long long)pairs[2 * e]);
            goto done;
        }
        (*cov_off)[pairs[2 * e] - c->first + 1]++;
    }
    for (uint64_t i = 0; i < count; i++) (*cov_off)[i + 1] += (*cov_off)[i];
    memcpy(at, *cov_off, count * sizeof *at);
    for (uint64_t e = 0; e < np; e++) (*cov_ids)[at[pairs[2 * e] - c->first]++] = pairs[2 * e + 1];
    for (uint64_t i = 0; i < count; i++) {
        uint64_t *l = *cov_ids + (*cov_off)[i];
        const uint64_t len = (*cov_off)[i + 1] - (*cov_off)[i];
        for (uint64_t q = 1; q < len; q++)
            if (l[q] <= l[q - 1]) {
                qsort(l, len, sizeof *l, cmp_u64);
                break;
            }
    }
done:
    free(at);
    return st;
}

/* Everything local: the indexes, the pass, the covers of the concepts
 * this rank works on (c->covers), and when they go through pairs (down;
 * or a router) the (lower, upper) pairs. */
static fd_status covers_local(cov_ctx *c, const lattice_covers_job *job, uint64_t **pairs, uint64_t *np)
{
    const uint64_t wc = job->work_count;
    const double t0 = fd_now();
    FD_TRY(index_intents(c, job->off, job->ids, wc, job->threads));
    FD_TRY(index_columns(c));
    FD_TRY(index_rows(c));
    FD_TRY(fd_env_word("FD_EDGES_PASS", passes, PASS_AUTO, &c->pass));
    /* The device's kernel keeps a concept's candidates as row bitsets of
     * at most LATTICE_GPU_COVERS_MAX_WORDS words; the knob can ask for
     * the host's columns or down.  With the device, down is not taken. */
    const int on_device = job->up_covers && c->rows && c->w <= LATTICE_GPU_COVERS_MAX_WORDS &&
                          (c->pass == PASS_AUTO || c->pass == PASS_ROWS);
    if (!on_device) FD_TRY(choose_pass(c, job->supports));
    if (!(c->covers = calloc(wc + 1, sizeof *c->covers)) || !(c->ncov = calloc(wc + 1, sizeof *c->ncov)) ||
        !(c->scratch = calloc((size_t)job->threads, sizeof *c->scratch)))
        return fd_fail(FD_ERR_NOMEM, "out of memory for the covers");
    if (on_device) {
        c->down = 0;
        const double t1 = fd_now();
        FD_TRY(covers_on_device(c, job));
        const double t2 = fd_now();
        FD_TRY(par_rows_chunk(job->threads, 0, c->nrest, 16, covers_rest, c, job->prog));
        if (getenv("FD_GPU_VERBOSE"))
            fprintf(stderr, "gpu edges: the host's indexes %.3f s, the device's share %.3f s, the host's %llu %.3f s\n",
                    t1 - t0, t2 - t1, (unsigned long long)c->nrest, fd_now() - t2);
    } else {
        FD_TRY(par_rows_chunk(job->threads, c->wfirst, c->wfirst + wc, 16, covers_range, c, job->prog));
    }
    if (!c->down && !job->route) return FD_OK;
    uint64_t total = 0, e = 0;
    for (uint64_t i = 0; i < wc; i++) total += c->ncov[i];
    if (!(*pairs = malloc((2 * total + 1) * sizeof **pairs))) return fd_fail(FD_ERR_NOMEM, "out of memory for the covers");
    for (uint64_t i = 0; i < wc; i++)
        for (uint32_t q = 0; q < c->ncov[i]; q++, e++) {
            /* Up: (i, an upper cover); down: (a lower cover, i). */
            (*pairs)[2 * e + !c->down] = c->covers[i][q];
            (*pairs)[2 * e + c->down] = c->wfirst + i;
        }
    *np = total;
    return FD_OK;
}

fd_status lattice_covers(const lattice_covers_job *job, uint64_t **cov_off, uint64_t **cov_ids,
                         lattice_covers_pass *pass)
{
    fd_status st = FD_OK;
    cov_ctx c;
    memset(&c, 0, sizeof c);
    c.ctx = job->ctx;
    c.n = job->n;
    c.first = job->first;
    c.wfirst = job->work_first;
    c.min_support = job->min_support;
    const uint64_t count = job->count;
    const int threads = job->threads < 1 ? 1 : job->threads;
    lattice_covers_job j = *job;
    j.threads = threads;
    uint64_t *pairs = NULL, np = 0, *got = NULL, ngot = 0;
    *cov_off = NULL;
    *cov_ids = NULL;
    if (job->first > job->n || count > job->n - job->first || job->work_first > job->n ||
        job->work_count > job->n - job->work_first || (!job->route && (job->work_first != job->first || job->work_count != count)))
        st = fd_fail(FD_ERR_INTERNAL, "--edges: concepts out of range");
    if (st == FD_OK) st = covers_local(&c, &j, &pairs, &np);
    /* Every rank routes, whatever happened here: the router agrees first. */
    if (job->route) {
        st = job->route(job->route_arg, st, pairs, np, &got, &ngot);
        free(pairs);
        pairs = got;
        np = ngot;
    }
    if (st != FD_OK) goto done;
    if (c.down || job->route) {
        st = pairs_to_covers(&c, pairs, np, count, cov_off, cov_ids);
        goto done;
    }
    FD_ALLOC_GOTO(*cov_off, count + 1, st, done);
    for (uint64_t i = 0; i < count; i++) (*cov_off)[i + 1] = (*cov_off)[i] + c.ncov[i];
    FD_ALLOC_GOTO(*cov_ids, (*cov_off)[count] + 1, st, done);
    for (uint64_t i = 0; i < count; i++)
        if (c.ncov[i]) memcpy(*cov_ids + (*cov_off)[i], c.covers[i], c.ncov[i] * sizeof **cov_ids);
done:
    if (pass) *pass = (lattice_covers_pass){c.down, atomic_load(&c.by_rows), job->work_count, c.on_device};
    /* The device's covers are one block; the host's each their own. */
    for (uint64_t i = 0; c.covers && !c.rest && i < job->work_count; i++) free(c.covers[i]);
    for (uint64_t r = 0; c.covers && c.rest && r < c.nrest; r++) free(c.covers[c.rest[r] - c.wfirst]);
    free(c.rest);
    free(c.dev_ids);
    for (int t = 0; c.scratch && t < threads; t++) scratch_free(&c.scratch[t]);
    free(pairs);
    free(c.scratch);
    free(c.covers);
    free(c.ncov);
    free(c.slot);
    free(c.col_ptr);
    free(c.col_obj);
    free(c.rows);
    free(c.ioff);
    free(c.iidx);
    if (st != FD_OK) {
        free(*cov_off);
        free(*cov_ids);
        *cov_off = NULL;
        *cov_ids = NULL;
    }
    return st;
}
