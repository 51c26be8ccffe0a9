/* SPDX-License-Identifier: BSD-3-Clause */
#include "rankmat.h"

#include "../common/bigmem.h"
#include "../common/par_rows.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

fd_status smat_create(spearman_mat **out, uint32_t n)
{
    if (n < 3) return fd_fail(FD_ERR_INPUT, "Spearman's p-value needs at least 3 observations per row, not %u", n);
    if (n > 32767) return fd_fail(FD_ERR_INPUT, "%u observations per row is more than the 32,767 supported", n);
    spearman_mat *m = calloc(1, sizeof *m);
    if (!m) return fd_fail(FD_ERR_NOMEM, "out of memory");
    m->n = n;
    m->n_obs = n;
    m->kp = (n + 1) / 2;
    *out = m;
    return FD_OK;
}

fd_status smat_kendall(spearman_mat *m, uint32_t n_obs)
{
    m->n_obs = n_obs;
    m->ties_cap = 1024;
    if (!(m->ties = calloc(m->ties_cap, sizeof *m->ties))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    return FD_OK;
}

static fd_status ties_room(spearman_mat *m, uint64_t rows)
{
    if (rows <= m->ties_cap) return FD_OK;
    uint64_t cap = m->ties_cap;
    while (cap < rows) cap *= 2;
    kendall_ties *t = realloc(m->ties, cap * sizeof *t);
    if (!t) return fd_fail(FD_ERR_NOMEM, "out of memory");
    m->ties = t;
    m->ties_cap = cap;
    return FD_OK;
}

fd_status smat_set_ties(spearman_mat *m, uint64_t r, const kendall_ties *t)
{
    FD_TRY(ties_room(m, r + 1));
    m->ties[r] = *t;
    return FD_OK;
}

void smat_destroy(spearman_mat **pm)
{
    spearman_mat *m = *pm;
    if (!m) return;
    fd_big_free(m->packed, m->packed_bytes);
    fd_big_free(m->sii, m->sii_bytes);
    fd_big_free(m->root, m->root_bytes);
    fd_big_free(m->inv_root, m->root_bytes);
    sha256_future_drop(&m->sha);
    free(m->row_id);
    free(m->incomplete);
    free(m->ties);
    free(m->source);
    for (uint64_t k = 0; m->names && k < m->n_names; k++) free(m->names[k]);
    free(m->names);
    free(m);
    *pm = NULL;
}

/* Index sort of x; insertion sort for the short rows this is made for. */
static void order(const double *x, uint32_t n, uint32_t *idx)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = idx[i] = i, k = i;
        while (k > 0 && x[idx[k - 1]] > x[v]) {
            idx[k] = idx[k - 1];
            k--;
        }
        idx[k] = v;
    }
}

typedef struct {
    double v;
    uint32_t i;
} vi;

static int by_value(const void *p, const void *q)
{
    const vi *a = p, *b = q;
    return a->v < b->v ? -1 : a->v > b->v ? 1 : (a->i > b->i) - (a->i < b->i);
}

/* Count data (small non-negative-or-not integers with many ties) ranks by
 * counting: O(n + range) instead of a sort.  Returns 0 when the row is not
 * integers spanning at most COUNT_RANGE values. */
#define COUNT_RANGE 1024
/* On entry a[k] = x_k - min(x), below range; on return the ranks.  cnt[v]
 * becomes the number of values below v, so the tie group of v occupies
 * sorted positions [cnt[v], cnt[v+1]). */
static void ranks_by_counting(int32_t *a, uint32_t n, uint32_t range)
{
    uint32_t cnt[COUNT_RANGE + 1];
    memset(cnt, 0, (range + 1) * sizeof *cnt);
    for (uint32_t k = 0; k < n; k++) cnt[a[k] + 1]++;
    for (uint32_t v = 1; v <= range; v++) cnt[v] += cnt[v - 1];
    for (uint32_t k = 0; k < n; k++) a[k] = (int32_t)(cnt[a[k]] + cnt[a[k] + 1]) - (int32_t)n;
}

static int rank_by_counting(const double *x, uint32_t n, int32_t *a)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (uint32_t k = 0; k < n; k++) {
        if (!(x[k] >= -1e15 && x[k] <= 1e15)) return 0;
        int64_t v = (int64_t)x[k];
        if ((double)v != x[k]) return 0;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    if (hi - lo >= COUNT_RANGE) return 0;
    for (uint32_t k = 0; k < n; k++) a[k] = (int32_t)((int64_t)x[k] - lo);
    ranks_by_counting(a, n, (uint32_t)(hi - lo) + 1);
    return 1;
}

void spearman_rank_uint(const uint64_t *v, uint32_t n, int32_t *a, double *scratch)
{
    uint64_t lo = v[0], hi = v[0];
    for (uint32_t k = 1; k < n; k++) {
        lo = v[k] < lo ? v[k] : lo;
        hi = v[k] > hi ? v[k] : hi;
    }
    if (hi - lo >= COUNT_RANGE) {
        for (uint32_t k = 0; k < n; k++) scratch[k] = (double)v[k];
        spearman_rank(scratch, n, a);
        return;
    }
    for (uint32_t k = 0; k < n; k++) a[k] = (int32_t)(v[k] - lo);
    ranks_by_counting(a, n, (uint32_t)(hi - lo) + 1);
}

void spearman_rank(const double *x, uint32_t n, int32_t *a)
{
    if (rank_by_counting(x, n, a)) return;
    uint32_t small[64], *idx = small;
    vi *big = NULL;
    if (n <= 64) {
        order(x, n, idx);
    } else {
        big = malloc(n * sizeof *big);
        idx = malloc(n * sizeof *idx);
        if (!big || !idx) abort(); /* n <= 32767: a few hundred KB */
        for (uint32_t i = 0; i < n; i++) big[i] = (vi){x[i], i};
        qsort(big, n, sizeof *big, by_value);
        for (uint32_t i = 0; i < n; i++) idx[i] = big[i].i;
    }
    /* A tie group at sorted positions [s, e) has average rank (s+1+e)/2,
     * so a = 2 rank - (n+1) = s + e - n. */
    for (uint32_t s = 0; s < n;) {
        uint32_t e = s + 1;
        while (e < n && x[idx[e]] == x[idx[s]]) e++;
        for (uint32_t k = s; k < e; k++) a[idx[k]] = (int32_t)(s + e) - (int32_t)n;
        s = e;
    }
    if (big) {
        free(big);
        free(idx);
    }
}

static fd_status grow_to(spearman_mat *m, uint64_t cap);

static fd_status grow(spearman_mat *m)
{
    uint64_t g = m->rows >> 3;
    if (g < m->cap_groups) return FD_OK;
    return grow_to(m, m->cap_groups ? m->cap_groups * 2 : 1024);
}

fd_status smat_reserve(spearman_mat *m, uint64_t rows)
{
    uint64_t groups = (rows + 7) / 8;
    return groups > m->cap_groups ? grow_to(m, groups) : FD_OK;
}

static fd_status grow_to(spearman_mat *m, uint64_t cap)
{
    const size_t pb = (size_t)cap * m->kp * 8 * sizeof *m->packed, sb = (size_t)cap * 8 * sizeof *m->sii;
    uint32_t *p = fd_big_grow(m->packed, m->packed_bytes, pb);
    if (p) {
        m->packed = p;
        m->packed_bytes = pb;
    }
    int64_t *s = fd_big_grow(m->sii, m->sii_bytes, sb);
    if (s) {
        m->sii = s;
        m->sii_bytes = sb;
    }
    if (!p || !s) return fd_fail(FD_ERR_NOMEM, "out of memory for %llu rows", (unsigned long long)(cap * 8));
    m->cap_groups = cap;
    return FD_OK;
}

fd_status smat_drop(spearman_mat *m)
{
    /* From the first dropped row on, kept rows need their input numbers. */
    if (!m->row_id) {
        m->row_id = malloc((m->cap_groups ? m->cap_groups * 8 : 8) * sizeof *m->row_id);
        if (!m->row_id) return fd_fail(FD_ERR_NOMEM, "out of memory");
        for (uint64_t r = 0; r < m->rows; r++) m->row_id[r] = r;
    }
    m->dropped++;
    return FD_OK;
}

/* Row r's packed values and S_ii: its own words only (a group's 8 rows
 * interleave word by word), so that threads may write different rows. */
static void put_row(spearman_mat *m, uint64_t r, const int32_t *a)
{
    uint32_t *base = m->packed + (r >> 3) * m->kp * 8 + (r & 7);
    int64_t s = 0;
    for (uint32_t k = 0; k < m->n; k++) s += (int64_t)a[k] * a[k];
    for (uint32_t p = 0; p < m->kp; p++) {
        uint32_t lo = (uint16_t)(int16_t)a[2 * p], hi = 2 * p + 1 < m->n ? (uint16_t)(int16_t)a[2 * p + 1] : 0;
        base[p * 8] = lo | hi << 16;
    }
    m->sii[r] = s;
}

fd_status smat_push_ranked(spearman_mat *m, const int32_t *a, uint64_t input_row)
{
    uint64_t old_cap = m->cap_groups;
    FD_TRY(grow(m));
    if (m->row_id && m->cap_groups != old_cap) {
        uint64_t *p = realloc(m->row_id, m->cap_groups * 8 * sizeof *p);
        if (!p) return fd_fail(FD_ERR_NOMEM, "out of memory");
        m->row_id = p;
    }
    put_row(m, m->rows, a);
    if (m->row_id) m->row_id[m->rows] = input_row;
    m->rows++;
    return FD_OK;
}

fd_status smat_place_begin(spearman_mat *m, uint64_t rows)
{
    if (m->rows || m->row_id) return fd_fail(FD_ERR_INTERNAL, "smat_place_begin after rows were pushed");
    FD_TRY(smat_reserve(m, rows));
    if (m->ties) FD_TRY(ties_room(m, rows));
    m->rows = rows;
    return FD_OK;
}

void smat_place_ranked(spearman_mat *m, const int32_t *a, uint64_t r) { put_row(m, r, a); }

fd_status smat_push(spearman_mat *m, const double *x, uint64_t input_row)
{
    int32_t abuf[128], *a = abuf;
    if (m->n > 128 && !(a = malloc(m->n * sizeof *a))) return fd_fail(FD_ERR_NOMEM, "out of memory");
    spearman_rank(x, m->n, a);
    fd_status st = smat_push_ranked(m, a, input_row);
    if (a != abuf) free(a);
    return st;
}

/* Room for row r's flag in m->incomplete (zeroed as it grows). */
static fd_status incomplete_room(spearman_mat *m, uint64_t r)
{
    if (r < m->incomplete_cap) return FD_OK;
    uint64_t cap = m->incomplete_cap ? m->incomplete_cap : 1024;
    while (cap <= r) cap *= 2;
    uint8_t *p = realloc(m->incomplete, cap);
    if (!p) return fd_fail(FD_ERR_NOMEM, "out of memory");
    memset(p + m->incomplete_cap, 0, cap - m->incomplete_cap);
    m->incomplete = p;
    m->incomplete_cap = cap;
    return FD_OK;
}

fd_status smat_push_missing(spearman_mat *m, const double *x, uint64_t input_row)
{
    uint32_t have = 0;
    for (uint32_t k = 0; k < m->n; k++) have += !isnan(x[k]);
    if (have == m->n) return smat_push(m, x, input_row);
    fd_status st = FD_OK;
    double *v = malloc((have + 1) * sizeof *v);
    int32_t *r = malloc((have + 1) * sizeof *r), *a = malloc(m->n * sizeof *a);
    if (!v || !r || !a) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st == FD_OK) {
        uint32_t q = 0;
        for (uint32_t k = 0; k < m->n; k++)
            if (!isnan(x[k])) v[q++] = x[k];
        if (have) spearman_rank(v, have, r);
        q = 0;
        for (uint32_t k = 0; k < m->n; k++) a[k] = isnan(x[k]) ? SMAT_MISSING : r[q++];
        const uint64_t row = m->rows;
        st = incomplete_room(m, row);
        if (st == FD_OK) st = smat_push_ranked(m, a, input_row);
        if (st == FD_OK) {
            m->sii[row] = 0; /* the kernels' sign to pass over the row */
            m->incomplete[row] = 1;
            m->n_incomplete++;
        }
    }
    free(v);
    free(r);
    free(a);
    return st;
}

/* Re-ranks v[0 .. m), values in [-(n-1), n-1] (a row's a_k), among
 * themselves, as ranks_by_counting does; cnt: 2n zeroed counters. */
static void rerank(int32_t *v, uint32_t m, uint32_t n, uint32_t *cnt)
{
    const int32_t off = (int32_t)n - 1;
    for (uint32_t k = 0; k < m; k++) cnt[v[k] + off + 1]++;
    for (uint32_t b = 1; b < 2 * n; b++) cnt[b] += cnt[b - 1];
    for (uint32_t k = 0; k < m; k++) v[k] = (int32_t)(cnt[v[k] + off] + cnt[v[k] + off + 1]) - (int32_t)m;
}

/* Columns up to which smat_pair_sums works on the stack. */
#define PAIR_STACK_N 512
/* Values removed from a row up to which it is re-ranked by adjustment
 * (O(m d)) rather than by counting (O(m + n)). */
#define PAIR_ADJUST 8

/* v[0 .. m), a row's doubled centred ranks over its own values, re-ranked
 * over those values less the d values in gone: a tie group's a = s + e -
 * size (s below it, e at or below it), so each removed value below a
 * takes 2 off, one equal to it 1, and the size's drop adds d. */
static void rerank_without(int32_t *v, uint32_t m, const int32_t *gone, uint32_t d)
{
    for (uint32_t k = 0; k < m; k++) {
        int32_t a = v[k] + (int32_t)d;
        for (uint32_t q = 0; q < d; q++) a -= (gone[q] < v[k]) + (gone[q] <= v[k]);
        v[k] = a;
    }
}

uint32_t smat_pair_sums(const spearman_mat *x, const spearman_mat *y, uint64_t i, uint64_t j, int64_t *s, int64_t *sii,
                        int64_t *sjj)
{
    const uint32_t n = x->n;
    int32_t stack[4 * PAIR_STACK_N], *buf = stack;
    /* beyond it a few hundred KB at most (n <= 32767); no way to report
     * a failure from inside a tile, as in spearman_rank */
    if (n > PAIR_STACK_N && !(buf = malloc(4 * (size_t)n * sizeof *buf))) abort();
    int32_t *ai = buf, *aj = buf + n, gx[PAIR_ADJUST], gy[PAIR_ADJUST];
    uint32_t *cnt = (uint32_t *)(buf + 2 * n), m = 0, dx = 0, dy = 0;
    /* The columns both have; the values each has where the other has
     * none, which leave its ranks. */
    for (uint32_t k = 0; k < n; k++) {
        const int32_t a = smat_a(x, i, k), b = smat_a(y, j, k);
        if (a == SMAT_MISSING || b == SMAT_MISSING) {
            if (a != SMAT_MISSING && dx++ < PAIR_ADJUST) gx[dx - 1] = a;
            if (b != SMAT_MISSING && dy++ < PAIR_ADJUST) gy[dy - 1] = b;
            continue;
        }
        ai[m] = a;
        aj[m++] = b;
    }
    int64_t sum = 0, qi = 0, qj = 0;
    if (m > 0) {
        /* A row that lost nothing keeps its ranks (they are over its own
         * values, which are the pair's columns). */
        if (dx > PAIR_ADJUST) {
            memset(cnt, 0, 2 * (size_t)n * sizeof *cnt);
            rerank(ai, m, n, cnt);
        } else if (dx > 0) {
            rerank_without(ai, m, gx, dx);
        }
        if (dy > PAIR_ADJUST) {
            memset(cnt, 0, 2 * (size_t)n * sizeof *cnt);
            rerank(aj, m, n, cnt);
        } else if (dy > 0) {
            rerank_without(aj, m, gy, dy);
        }
        for (uint32_t k = 0; k < m; k++) {
            sum += (int64_t)ai[k] * aj[k];
            qi += (int64_t)ai[k] * ai[k];
            qj += (int64_t)aj[k] * aj[k];
        }
    }
    if (buf != stack) free(buf);
    *s = sum;
    *sii = qi;
    *sjj = qj;
    return m;
}

/* The roots of rows [r0, r1) (past m->rows: padding, 0), and the
 * constant rows among them counted into the shared total. */
typedef struct {
    spearman_mat *m;
    _Atomic uint64_t constant;
} roots_job;

static fd_status roots_rows(void *ctx, uint64_t r0, uint64_t r1, int thread)
{
    (void)thread;
    roots_job *j = ctx;
    spearman_mat *m = j->m;
    uint64_t constant = 0;
    for (uint64_t r = r0; r < r1; r++) {
        double s = r < m->rows ? (double)m->sii[r] : 0;
        constant += r < m->rows && s == 0 && !smat_incomplete(m, r);
        m->root[r] = (float)sqrt(s);
        m->inv_root[r] = s > 0 ? (float)(1 / sqrt(s)) : 0.0f;
    }
    atomic_fetch_add(&j->constant, constant);
    return FD_OK;
}

fd_status smat_finish(spearman_mat *m, int threads)
{
    fd_big_free(m->root, m->root_bytes);
    fd_big_free(m->inv_root, m->root_bytes);
    m->root_bytes = (m->rows + 8) * sizeof *m->root;
    m->root = fd_big_zalloc(m->root_bytes);
    m->inv_root = fd_big_zalloc(m->root_bytes);
    if (!m->root || !m->inv_root) return fd_fail(FD_ERR_NOMEM, "out of memory");
    /* constant rows counted here, since placed rows arrive in no order;
     * in parallel, as its serial loop (a square root and a division a row,
     * and the first touch of the roots' pages) came after the reading */
    roots_job j = {m, 0};
    const uint64_t all = m->rows + 8, per = all / (8 * (uint64_t)(threads > 0 ? threads : 1));
    FD_TRY(par_rows_chunk(threads, 0, all, per > 1024 ? per : 1024, roots_rows, &j, NULL));
    m->constant = atomic_load(&j.constant);
    return FD_OK;
}

fd_status smat_sha256(spearman_mat *m) { return sha256_future_get(&m->sha); }

fd_status smat_digest(spearman_mat *m, int threads)
{
    /* the shape, little-endian whatever the machine */
    uint8_t head[24];
    sha256_le64(head, m->rows);
    sha256_le64(head + 8, m->n);
    sha256_le64(head + 16, m->row_id != NULL);
    const sha256_span spans[3] = {
        {head, sizeof head},
        {m->packed, (size_t)((m->rows + 7) >> 3) * m->kp * 8 * sizeof *m->packed},
        {m->row_id, m->row_id ? (size_t)m->rows * sizeof *m->row_id : 0},
    };
    return sha256_spans_hex(spans, 3, threads, m->digest);
}
