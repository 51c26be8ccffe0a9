/* The pieces of spearman against independent computations:
 *  - average ranks against a brute-force count (ties included);
 *  - the SIMD kernel against the scalar int64 kernel: the same S for every
 *    pair, the same selection, the same histogram, at sizes that reach the
 *    int32 limit the SIMD path relies on (n = 1290, rows with no ties);
 *  - the --top-k heaps against a sort of all partners: grown past their
 *    first size, fed every pair or only a shuffled superset of the top k
 *    (as the GPU's per-row screen feeds them), ties broken by j;
 *  - p-values against values from scipy, and x_crit as the exact boundary;
 *  - --missing pairwise's --fdr: a range of p as a range of x for the
 *    complete rows' pairs (spearman_sel_p), a p's bin (spearman_pbin);
 *  - the GPU epilogue's certain decisions (spearman_decide.h, float bounds
 *    and double) against the exact test, at and around the boundary, and
 *    its bins of x for --fdr (from double, and from float within the
 *    kernel's rounding) against the host's, around the bin edges;
 *  - the histogram's factor k_i (spearman_hist.h): 1.5 2^23 k_i a float,
 *    as the GPU's fused product needs, and k_i within 2^-22 + 2^-24 of 1000 times
 *    1/sqrt(S_ii); the bin against 1000 rho in double. */
#include "spearman/pvalue.h"
#include "spearman/spearman_decide.h"
#include "spearman/rankmat.h"
#include "spearman/tile.h"
#include "common/clock.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_ranks(void)
{
    fd_rng rng = {7};
    for (int rep = 0; rep < 200; rep++) {
        uint32_t n = 3 + (uint32_t)(fd_rng_unif(&rng) * 150);
        double x[160];
        int32_t a[160];
        /* integers (the counting path), wide integers and fractions (the
         * sorting path), all with ties */
        for (uint32_t k = 0; k < n; k++) {
            x[k] = floor(fd_rng_unif(&rng) * (rep % 5 + 1));
            if (rep % 3 == 1) x[k] *= 1000;
            if (rep % 3 == 2) x[k] += 0.5;
        }
        spearman_rank(x, n, a);
        if (rep % 3 != 2) { /* integers: the integer entry point must agree */
            uint64_t v[160];
            int32_t b[160];
            double scratch[160];
            for (uint32_t k = 0; k < n; k++) v[k] = (uint64_t)x[k];
            spearman_rank_uint(v, n, b, scratch);
            CHECK(!memcmp(a, b, n * sizeof *a), "spearman_rank_uint agrees, n = %u", n);
        }
        int ok = 1;
        for (uint32_t k = 0; k < n; k++) {
            /* 2 rank = 2 (#less) + (#equal) + 1 */
            int less = 0, eq = 0;
            for (uint32_t m = 0; m < n; m++) less += x[m] < x[k], eq += x[m] == x[k];
            ok &= a[k] == 2 * less + eq + 1 - (int32_t)(n + 1);
        }
        CHECK(ok, "average ranks, n = %u", n);
    }
}

static spearman_mat *random_mat(uint64_t rows, uint32_t n, uint64_t seed, int ties)
{
    spearman_mat *m = NULL;
    fd_rng rng = {seed};
    double *x = malloc(n * sizeof *x);
    smat_create(&m, n);
    for (uint64_t r = 0; r < rows; r++) {
        for (uint32_t k = 0; k < n; k++) x[k] = ties ? floor(fd_rng_unif(&rng) * 4) : fd_rng_unif(&rng);
        if (r % 9 == 4) for (uint32_t k = 0; k < n; k++) x[k] = 1;        /* constant */
        if (r % 11 == 5) for (uint32_t k = 0; k < n; k++) x[k] = k;       /* extreme: +-max S */
        if (r % 13 == 6) for (uint32_t k = 0; k < n; k++) x[k] = -(double)k;
        smat_push(m, x, r);
    }
    smat_finish(m, 1);
    free(x);
    return m;
}

static int cmp_pair(const void *p, const void *q)
{
    const spair *a = p, *b = q;
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    if (a->j != b->j) return a->j < b->j ? -1 : 1;
    return (a->s > b->s) - (a->s < b->s);
}

static void test_kernels(void)
{
    static const uint32_t ns[] = {3, 7, 30, 31, 64, 128, 129, 500, 1290};
    for (size_t t = 0; t < sizeof ns / sizeof *ns; t++) {
        uint32_t n = ns[t];
        uint64_t rows = n > 500 ? 40 : 77;
        spearman_mat *x = random_mat(rows, n, n, n % 2), *y = random_mat(rows - 5, n, n + 1, 0);
        for (int mode = 0; mode < 3; mode++) {
            spearman_sel sel;
            spearman_sel_init(&sel, mode == 0 ? 'p' : mode == 1 ? 'r' : 'a', mode == 0 ? 0.2 : 0.1, n);
            for (int cross = 0; cross < 2; cross++) {
                const spearman_mat *yy = cross ? y : x;
                spearman_acc a = {0}, b = {0};
                a.hist = calloc(SPEARMAN_HIST_BINS, sizeof *a.hist);
                b.hist = calloc(SPEARMAN_HIST_BINS, sizeof *b.hist);
                a.out = malloc(16 * sizeof *a.out); a.capout = 16;
                b.out = malloc(16 * sizeof *b.out); b.capout = 16;
                /* Tiles of 24 rows (3 groups of 8; the last one partial),
                 * diagonal and off-diagonal, as the job cuts them. */
                for (uint64_t i0 = 0; i0 < x->rows; i0 += 24)
                    for (uint64_t j0 = cross ? 0 : i0; j0 < yy->rows; j0 += 24) {
                        uint64_t i1 = i0 + 24 < x->rows ? i0 + 24 : x->rows, j1 = j0 + 24 < yy->rows ? j0 + 24 : yy->rows;
                        int up = !cross && j0 == i0;
                        spearman_tile(x, yy, i0, i1, j0, j1, up, &sel, &a);
                        spearman_tile_scalar(x, yy, i0, i1, j0, j1, up, &sel, &b);
                    }
                qsort(a.out, a.nout, sizeof *a.out, cmp_pair);
                qsort(b.out, b.nout, sizeof *b.out, cmp_pair);
                CHECK(a.pairs == b.pairs && a.selected == b.selected && a.nout == b.nout &&
                          !memcmp(a.out, b.out, a.nout * sizeof *a.out) &&
                          !memcmp(a.hist, b.hist, SPEARMAN_HIST_BINS * sizeof *a.hist),
                      "kernels agree: n=%u mode=%d cross=%d (pairs %llu/%llu, selected %llu/%llu)", n, mode, cross,
                      (unsigned long long)a.pairs, (unsigned long long)b.pairs, (unsigned long long)a.selected,
                      (unsigned long long)b.selected);
                /* every S against a direct sum */
                int ok = 1;
                for (size_t k = 0; k < b.nout; k++) {
                    int64_t s = 0;
                    for (uint32_t c = 0; c < n; c++) s += (int64_t)smat_a(x, b.out[k].i, c) * smat_a(yy, b.out[k].j, c);
                    ok &= s == b.out[k].s && (cross || b.out[k].j > b.out[k].i);
                }
                CHECK(ok, "S of emitted pairs, n=%u", n);
                if (mode == 2) {
                    uint64_t valid = 0;
                    for (uint64_t i = 0; i < x->rows; i++)
                        for (uint64_t j = cross ? 0 : i + 1; j < yy->rows; j++) valid += x->sii[i] && yy->sii[j];
                    CHECK(b.pairs == valid && b.selected == valid, "all pairs of varying rows, n=%u", n);
                }
                free(a.hist); free(b.hist); free(a.out); free(b.out);
            }
        }
        smat_destroy(&x);
        smat_destroy(&y);
    }
}

/* Partners of one row, strongest first: |S| / sqrt(S_jj) larger (exactly,
 * in __int128), then j smaller. */
static const spearman_mat *sort_y;
static int cmp_strength(const void *p, const void *q)
{
    const spair *a = p, *b = q;
    __int128 l = (__int128)a->s * a->s * sort_y->sii[b->j], r = (__int128)b->s * b->s * sort_y->sii[a->j];
    if (l != r) return l > r ? -1 : 1;
    return a->j < b->j ? -1 : a->j > b->j;
}

static int64_t direct_s(const spearman_mat *x, const spearman_mat *y, uint64_t i, uint64_t j)
{
    int64_t s = 0;
    for (uint32_t c = 0; c < x->n; c++) s += (int64_t)smat_a(x, i, c) * smat_a(y, j, c);
    return s;
}

static void test_topk(void)
{
    fd_rng rng = {11};
    spearman_mat *x = random_mat(300, 30, 5, 1);
    const uint64_t i0 = 40, i1 = 300;
    static const uint32_t ks[] = {1, 5, 21, 290}; /* 290: more than a row has partners */
    for (size_t kk = 0; kk < sizeof ks / sizeof *ks; kk++) {
        const uint32_t k = ks[kk];
        for (int feed = 0; feed < 2; feed++) {
            spearman_topk t;
            CHECK(spearman_topk_init(&t, k, 8) == FD_OK, "topk init");
            CHECK(spearman_topk_reset(&t, i0, (uint32_t)(i1 - i0), 1) == FD_OK && t.cap >= i1 - i0,
                  "the heaps grow to a record of %llu rows", (unsigned long long)(i1 - i0));
            spearman_acc acc = {0};
            acc.out = malloc(16 * sizeof *acc.out);
            acc.capout = 16;
            spair *all = malloc(x->rows * sizeof *all), *want = malloc((size_t)(i1 - i0) * k * sizeof *want);
            size_t nwant = 0;
            sort_y = x;
            for (uint64_t i = i0; i < i1; i++) {
                size_t n = 0;
                if (x->sii[i])
                    for (uint64_t j = 0; j < x->rows; j++)
                        if (j != i && x->sii[j]) all[n++] = (spair){i, j, direct_s(x, x, i, j)};
                qsort(all, n, sizeof *all, cmp_strength);
                const size_t top = n < k ? n : k;
                memcpy(want + nwant, all, top * sizeof *all);
                nwant += top;
                /* feed 1: the top k, the pairs tied with the k-th, a
                 * random third of the rest, and the row itself, shuffled */
                size_t m = 0;
                for (size_t e = 0; e < n; e++)
                    if (!feed || e < top || cmp_strength(&all[e], &all[top - 1]) == 0 || fd_rng_unif(&rng) < 0.3)
                        all[m++] = all[e];
                if (feed) {
                    all[m++] = (spair){i, i, x->sii[i]};
                    for (size_t e = m; e > 1; e--) {
                        size_t r = (size_t)(fd_rng_unif(&rng) * e);
                        spair tmp = all[e - 1];
                        all[e - 1] = all[r];
                        all[r] = tmp;
                    }
                }
                for (size_t e = 0; e < m; e++) spearman_topk_offer(&t, x, all[e].i, all[e].j, all[e].s, x->sii[all[e].j]);
            }
            spearman_topk_emit(&t, &acc);
            CHECK(!acc.failed && acc.nout == nwant && acc.selected == nwant &&
                      !memcmp(acc.out, want, nwant * sizeof *want),
                  "--top-k %u heaps (%s) = the sorted partners: %zu of %zu entries", k,
                  feed ? "a shuffled superset" : "every pair", acc.nout, nwant);
            free(all);
            free(want);
            free(acc.out);
            spearman_topk_free(&t);
        }
    }
    smat_destroy(&x);
}

static void test_pvalues(void)
{
    /* scipy: 2 * stats.t.sf(|t|, dof) with t from rho (see pvalue.h) */
    static const struct { int dof; double rho, p; } ref[] = {
        {1, 0.5, 0.6666666666666666},   {5, 0.5, 0.2531699951003227},  {5, 0.9, 0.005751515181902885},
        {28, 0.361, 0.050004705745366584}, {28, 0.9, 1.3166060700263861e-11}, {198, 0.1, 0.15886970489441143}};
    for (size_t k = 0; k < sizeof ref / sizeof *ref; k++) {
        double p = spearman_p_of_x(1 - ref[k].rho * ref[k].rho, ref[k].dof);
        CHECK(fabs(p - ref[k].p) <= 1e-9 * ref[k].p, "p(dof=%d, rho=%g) = %.17g, scipy %.17g", ref[k].dof, ref[k].rho,
              p, ref[k].p);
    }
    static const double alphas[] = {0.05, 1e-4, 1e-12, 0.5};
    for (size_t a = 0; a < 4; a++)
        for (int dof = 1; dof < 300; dof += 37) {
            double x = spearman_x_crit(alphas[a], dof);
            CHECK(spearman_p_of_x(x, dof) <= alphas[a] && spearman_p_of_x(nextafter(x, 2), dof) > alphas[a],
                  "x_crit is the boundary: alpha %g dof %d", alphas[a], dof);
            /* and x_from the other one (spearman_sel_p's lower end) */
            x = spearman_x_from(alphas[a], dof);
            CHECK(spearman_p_of_x(x, dof) >= alphas[a] && spearman_p_of_x(nextafter(x, -1), dof) < alphas[a],
                  "x_from is the boundary: alpha %g dof %d", alphas[a], dof);
        }
    CHECK(spearman_x_from(0, 5) == 0 && spearman_x_from(1.5, 5) > 1, "x_from's ends");
}

/* One pair (s, sii, sjj) through the GPU's decisions, against spearman_keep. */
static void decide_one(const spearman_sel *sel, int32_t s, int64_t sii, int64_t sjj, uint64_t count[3])
{
    const int keep = spearman_keep(sel, s, sii, sjj);
    const int d = spearman_decide(sel->mode, sel->q, sel->x_lo, sel->x_hi, s, sii, sjj);
    count[d]++;
    CHECK(d == SPEARMAN_UNDECIDED || (d == SPEARMAN_KEEP) == keep,
          "mode %c q=%.17g: decided %d, exact %d (s=%d, sii=%lld, sjj=%lld)", sel->mode, sel->q, d, keep, (int)s,
          (long long)sii, (long long)sjj);
    /* The kernel's float bounds, with its operations: pre and post times
     * sqrt(S_ii) as stored (rankmat.c), then times sqrt(S_jj). */
    const float ri = (float)sqrt((double)sii), rj = (float)sqrt((double)sjj), fs = fabsf((float)s);
    if (!(fs >= (sel->pre * ri) * rj)) CHECK(!keep, "below the prefilter but kept (s=%d)", (int)s);
    if (sel->mode != 'x' && spearman_post_usable(sel->mode, sel->q) && fs >= (spearman_post(sel->q) * ri) * rj)
        CHECK(keep, "past the keep bound but not kept: mode %c q=%.17g s=%d sii=%lld sjj=%lld", sel->mode, sel->q,
              (int)s, (long long)sii, (long long)sjj);
}

static void test_decide(void)
{
    fd_rng rng = {42};
    uint64_t count[3] = {0, 0, 0};
    const uint32_t ns[] = {7, 30, 64, 128};
    for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
        const uint32_t n = ns[ni];
        /* S_ii of real rank rows: from all distinct values (n(n^2-1)/3)
         * down to heavy ties. */
        int64_t siis[16];
        for (int k = 0; k < 16; k++) {
            double x[128];
            int32_t a[128];
            for (uint32_t c = 0; c < n; c++) x[c] = k == 0 ? c : floor(fd_rng_unif(&rng) * (k % 6 + 2));
            spearman_rank(x, n, a);
            int64_t v = 0;
            for (uint32_t c = 0; c < n; c++) v += (int64_t)a[c] * a[c];
            siis[k] = v ? v : 2;
        }
        spearman_sel sels[12];
        int m = 0;
        const double alphas[] = {0.05, 1e-6, 1e-12, 0.5};
        const double rhos[] = {0.5, 0.4123, 0.9, 0.25};
        for (int k = 0; k < 4; k++) spearman_sel_init(&sels[m++], 'p', alphas[k], n);
        for (int k = 0; k < 4; k++) spearman_sel_init(&sels[m++], 'r', rhos[k], n);
        spearman_sel_x(&sels[m++], 0.1, 0.75, n);
        spearman_sel_x(&sels[m++], 0, 0.5, n);
        spearman_sel_x(&sels[m++], 0.25, 1, n);
        spearman_sel_init(&sels[m++], 'a', 0, n);
        for (int k = 0; k < m; k++)
            for (int i = 0; i < 16; i++)
                for (int j = 0; j < 16; j++) {
                    const int64_t sii = siis[i], sjj = siis[j];
                    const double lim = sqrt((double)sii * (double)sjj);
                    /* At and around each boundary: |rho| = sqrt(q), and for
                     * mode x both ends of the range. */
                    double bounds[3] = {sqrt(sels[k].q), sels[k].mode == 'x' ? sqrt(fmax(0, 1 - sels[k].x_lo)) : 0, 0};
                    for (int b = 0; b < 2; b++) {
                        const int32_t s0 = (int32_t)llround(bounds[b] * lim);
                        for (int32_t ds = -2; ds <= 2; ds++)
                            for (int sign = -1; sign <= 1; sign += 2)
                                if (fabs((double)(s0 + ds)) <= lim) decide_one(&sels[k], sign * (s0 + ds), sii, sjj, count);
                    }
                    for (int r = 0; r < 8; r++) {
                        const int32_t s = (int32_t)llround((2 * fd_rng_unif(&rng) - 1) * lim);
                        decide_one(&sels[k], s, sii, sjj, count);
                    }
                }
    }
    /* The test means something only if each outcome occurred. */
    CHECK(count[SPEARMAN_KEEP] && count[SPEARMAN_DROP] && count[SPEARMAN_UNDECIDED],
          "outcomes: %llu kept, %llu dropped, %llu undecided", (unsigned long long)count[SPEARMAN_KEEP],
          (unsigned long long)count[SPEARMAN_DROP], (unsigned long long)count[SPEARMAN_UNDECIDED]);
}

static void test_hist(void)
{
    fd_rng rng = {11};
    int bad_exact = 0, bad_near = 0, bad_bin = 0;
    for (int rep = 0; rep < 200000; rep++) {
        /* every S_ii of small n (ties make any integer possible), then random ones */
        const double sii = rep < 100000 ? (double)(rep + 1) : floor(fd_rng_unif(&rng) * 1e9) + 1;
        const float inv = (float)(1.0 / sqrt(sii));
        const float k = spearman_hist_factor(inv);
        const double ck = 12582912.0 * (double)k;
        bad_exact += (double)(float)ck != ck;
        bad_near += fabs((double)k / (1000.0 * (double)inv) - 1) > ldexp(1, -22) + ldexp(1, -24); /* two roundings */
        /* a pair of this row with a random S and S_jj: the bin is floor of
         * 1000 rho, but for rho within 1e-6 of an edge */
        const double sjj = floor(fd_rng_unif(&rng) * 1e6) + 1;
        const double lim = floor(sqrt(sii * sjj));
        const int32_t s = (int32_t)fmin(floor((fd_rng_unif(&rng) * 2 - 1) * lim), 2e6);
        const double u = 1000.0 * s / sqrt(sii * sjj);
        const int b = spearman_hist_bin(s, k, (float)(1.0 / sqrt(sjj)));
        if (fabs(u - floor(u + 0.5)) > 1e-3) bad_bin += b != (int)fmin(fmax(floor(u) + 1000, 0), 1999);
    }
    CHECK(bad_exact == 0, "histogram factor: 1.5 2^23 k_i not a float %d times", bad_exact);
    CHECK(bad_near == 0, "histogram factor: k_i off 1000/sqrt(S_ii) by more than 2^-22 + 2^-24 %d times", bad_near);
    CHECK(bad_bin == 0, "histogram bin: off floor(1000 rho) + 1000 %d times", bad_bin);
}

/* --fdr's bin of x on the GPU (spearman_decide_xbin) against
 * spearman_xbin of pair_x, the host's: equal wherever the GPU claims one,
 * around the bin edges too, and left to the host only rarely. */
static void test_xbin(void)
{
    fd_rng rng = {5};
    uint64_t decided = 0, left = 0, random_left = 0, random_all = 0, fdecided = 0, ftried = 0;
    const uint32_t ns[] = {7, 30, 64, 128};
    const double alphas[] = {0.05, 1e-4, 0.5, 1};
    for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++)
        for (size_t ai = 0; ai < sizeof alphas / sizeof *alphas; ai++) {
            const uint32_t n = ns[ni];
            spearman_acc acc = {0};
            acc.xbins = 1u << 16;
            acc.xscale = acc.xbins / (alphas[ai] < 1 ? spearman_x_crit(alphas[ai], (int)n - 2) : 1.0);
            for (int rep = 0; rep < 20000; rep++) {
                /* S_ii of rank rows with ties: any integer up to n(n^2-1)/3 */
                const int64_t top = (int64_t)n * ((int64_t)n * n - 1) / 3;
                const int64_t sii = 2 + (int64_t)(fd_rng_unif(&rng) * (double)(top - 1));
                const int64_t sjj = 2 + (int64_t)(fd_rng_unif(&rng) * (double)(top - 1));
                const double p = (double)sii * (double)sjj, lim = floor(sqrt(p));
                int32_t cand[4];
                cand[0] = (int32_t)llround((2 * fd_rng_unif(&rng) - 1) * lim);
                /* the S nearest an edge between two bins, and its neighbours */
                const double edge = floor(fd_rng_unif(&rng) * acc.xbins) / acc.xscale;
                const int32_t s0 = (int32_t)llround(sqrt(fmax(0, p * (1 - edge))));
                for (int d = -1; d <= 1; d++) cand[2 + d] = s0 + d;
                for (int c = 0; c < 4; c++) {
                    const int32_t s = cand[c];
                    if ((double)s * s > p) continue;
                    const int b = spearman_decide_xbin(s, sii, sjj, acc.xscale, (int)acc.xbins);
                    const int want = spearman_xbin(&acc, pair_x(s, sii, sjj));
                    /* from float: |rho| as the kernel forms it, and moved
                     * by the 3e-7 of itself that the bound allows */
                    const float ri = (float)(1 / sqrt((double)sii)), rj = (float)(1 / sqrt((double)sjj));
                    const float a0 = ((float)abs(s) * ri) * rj;
                    const float as[3] = {a0, a0 * (1 - 3e-7f), a0 * (1 + 3e-7f)};
                    /* and 1000 |rho|, as the histogram's u, within its 5e-7 */
                    const double u0 = 1000 * fabs((double)s) / sqrt((double)sii * (double)sjj);
                    const float us[3] = {(float)u0, (float)(u0 * (1 - 5e-7)), (float)(u0 * (1 + 5e-7))};
                    for (int m = 0; m < 6; m++) {
                        const float xs = (float)acc.xscale;
                        const int bf = m < 3 ? spearman_decide_xbin_f(as[m], xs, xs, (int)acc.xbins, 3e-7f)
                                             : spearman_decide_xbin_f(us[m - 3], xs, (float)(acc.xscale * 1e-6),
                                                                      (int)acc.xbins, 5e-7f);
                        ftried++;
                        if (bf < 0) continue;
                        fdecided++;
                        CHECK(bf == want, "x bin from float (%s): %d, host %d (s=%d sii=%lld sjj=%lld xscale=%.17g)",
                              m < 3 ? "rho" : "u", bf, want, (int)s, (long long)sii, (long long)sjj, acc.xscale);
                    }
                    /* At --fdr 1, xscale is 2^16 and small S_ii S_jj
                     * put x xscale on integers often: no rarity there. */
                    if (c == 0 && alphas[ai] < 1) random_all++, random_left += b < 0;
                    if (b < 0) {
                        left++;
                        continue;
                    }
                    decided++;
                    CHECK(b == want, "x bin: GPU %d, host %d (s=%d sii=%lld sjj=%lld xscale=%.17g)", b, want, (int)s,
                          (long long)sii, (long long)sjj, acc.xscale);
                }
            }
        }
    /* x = 1/2 exactly (S = 2, S_ii S_jj = 8) lies on the edge of bin 2^15
     * at xscale 2^16: the host's bin is not certain there. */
    CHECK(spearman_decide_xbin(2, 2, 4, 65536.0, 65536) == -1, "an exact bin edge left to the host");
    /* float settles most (a margin grown wide would fail here) */
    CHECK(fdecided * 10 > ftried * 8, "x bins from float: %llu of %llu", (unsigned long long)fdecided,
          (unsigned long long)ftried);
    CHECK(decided > 600000 && random_left * 100000 < random_all,
          "x bins: %llu decided, %llu left to the host (%llu of %llu random pairs)", (unsigned long long)decided,
          (unsigned long long)left, (unsigned long long)random_left, (unsigned long long)random_all);
}

/* smat_digest, what ranks compare and checkpoints record: the same for
 * the same ranks (on any number of threads, and from values that differ
 * but rank alike), another for one row ranked otherwise or for other input
 * row numbers. */
static fd_status digest_of(uint64_t rows, int change, double scale, int drop, int threads, char hex[65])
{
    spearman_mat *m = NULL;
    double x[30];
    fd_rng rng = {11};
    FD_TRY(smat_create(&m, 30));
    fd_status st = FD_OK;
    for (uint64_t r = 0; r < rows && st == FD_OK; r++) {
        for (int k = 0; k < 30; k++) x[k] = floor(fd_rng_unif(&rng) * 6) * scale;
        if (change && r == rows / 2) x[change % 30] += 100;
        if (drop && r == 3) st = smat_drop(m);
        if (st == FD_OK) st = smat_push(m, x, r + (drop && r >= 3));
    }
    if (st == FD_OK) st = smat_finish(m, threads);
    if (st == FD_OK) st = smat_digest(m, threads);
    if (st == FD_OK) memcpy(hex, m->digest, 65);
    smat_destroy(&m);
    return st;
}

/* Rows placed (smat_place_ranked, in any order) make the matrix pushing
 * them in order makes: the same digest, S_ii and constant rows. */
static void test_place(void)
{
    const uint64_t rows = 5003;
    spearman_mat *a = random_mat(rows, 30, 5, 1), *b = NULL;
    int32_t r[30];
    CHECK(smat_create(&b, 30) == FD_OK && smat_place_begin(b, rows) == FD_OK, "smat_place_begin");
    for (uint64_t k = 0; k < rows; k++) {
        const uint64_t i = (k * 7919) % rows; /* every row once, out of order */
        for (uint32_t c = 0; c < 30; c++) r[c] = smat_a(a, i, c);
        smat_place_ranked(b, r, i);
    }
    /* b's roots on 3 threads, in chunks smaller than its rows, a's on 1 */
    CHECK(smat_finish(b, 3) == FD_OK && smat_digest(a, 2) == FD_OK && smat_digest(b, 3) == FD_OK, "digests");
    CHECK(!strcmp(a->digest, b->digest) && a->constant == b->constant && a->constant > 0 &&
              !memcmp(a->sii, b->sii, rows * sizeof *a->sii) &&
              !memcmp(a->root, b->root, (rows + 8) * sizeof *a->root) &&
              !memcmp(a->inv_root, b->inv_root, (rows + 8) * sizeof *a->inv_root),
          "placed rows: digest %s against %s, %llu constant against %llu", b->digest, a->digest,
          (unsigned long long)b->constant, (unsigned long long)a->constant);
    CHECK(smat_place_begin(a, rows) == FD_ERR_INTERNAL, "smat_place_begin after pushes");
    fd_errclear();
    smat_destroy(&a);
    smat_destroy(&b);
}

static void test_digest(void)
{
    const uint64_t rows = 70001; /* several 4 MiB pieces of ranks, a partial group of 8 */
    char base[65] = "", h[65] = "";
    CHECK(digest_of(rows, 0, 1, 0, 1, base) == FD_OK && strlen(base) == 64, "digest: %s", base);
    CHECK(digest_of(rows, 0, 1, 0, 5, h) == FD_OK && !strcmp(h, base), "digest on 5 threads: %s, on 1: %s", h, base);
    CHECK(digest_of(rows, 0, 2.5, 0, 2, h) == FD_OK && !strcmp(h, base), "digest of values scaled: %s", h);
    CHECK(digest_of(rows, 7, 1, 0, 2, h) == FD_OK && strcmp(h, base) != 0, "digest: a row ranked otherwise, the same");
    CHECK(digest_of(rows, 0, 1, 1, 2, h) == FD_OK && strcmp(h, base) != 0, "digest: other row numbers, the same");
    CHECK(digest_of(rows - 1, 0, 1, 0, 2, h) == FD_OK && strcmp(h, base) != 0, "digest: a row fewer, the same");
}

/* --fdr under --missing pairwise: spearman_sel_p selects a complete
 * pair by x exactly where its p lies in the range (but for a p within
 * rounding of an end), and spearman_pbin puts a p in the bin between
 * whose edges' p it lies. */
static void test_sel_p(void)
{
    fd_rng rng = {11};
    const uint32_t n = 20;
    const int dof = (int)n - 2;
    uint64_t differ = 0, inside = 0;
    for (int rep = 0; rep < 200; rep++) {
        double lo = rep % 4 == 0 ? -1 : pow(10, -8 * fd_rng_unif(&rng)), hi = pow(10, -6 * fd_rng_unif(&rng));
        if (lo > hi) {
            const double t = lo;
            lo = hi;
            hi = t;
        }
        spearman_sel sel;
        spearman_sel_init(&sel, 'p', 0.05, n);
        sel.pkey = 1;
        spearman_sel_p(&sel, lo, hi, n);
        CHECK(sel.mode == 'x' && sel.p_lo == lo && sel.p_hi == hi, "sel_p keeps the range of p");
        for (int k = 0; k < 500; k++) {
            const int64_t sii = 1000 + (int64_t)(fd_rng_unif(&rng) * 2000), sjj = 1000 + (int64_t)(fd_rng_unif(&rng) * 2000);
            const int32_t s = (int32_t)((2 * fd_rng_unif(&rng) - 1) * sqrt((double)sii * (double)sjj));
            const double p = spearman_p_of_x(pair_x(s, sii, sjj), dof);
            const int want = p >= lo && p <= hi, got = spearman_keep(&sel, s, sii, sjj);
            inside += want;
            if (want != got && fabs(p - lo) > 1e-12 * p && fabs(p - hi) > 1e-12 * p) differ++;
        }
    }
    CHECK(differ == 0 && inside > 1000, "sel_p by x against p: %llu differ (%llu inside)", (unsigned long long)differ,
          (unsigned long long)inside);
    spearman_acc acc = {0};
    acc.xbins = 1024;
    acc.xscale = acc.xbins / spearman_x_crit(0.05, dof);
    double edge[1025];
    for (uint32_t b = 0; b <= acc.xbins; b++) edge[b] = spearman_p_of_x(fmin(1, b / acc.xscale), dof);
    acc.pedge = edge;
    uint64_t bad = 0;
    for (int k = 0; k < 20000; k++) {
        const double p = k < 1025 ? edge[k % 1025] : 0.05 * fd_rng_unif(&rng);
        const int b = spearman_pbin(&acc, p);
        bad += !(b >= 0 && b < (int)acc.xbins && (edge[b] <= p || b == 0) && (b == (int)acc.xbins - 1 || edge[b + 1] > p));
    }
    CHECK(bad == 0, "pbin: %llu p outside their bin's edges", (unsigned long long)bad);
}

/* spearman_tile_missing_split (a GPU backend's host share of --missing
 * pairwise on several threads) against spearman_tile_missing on one:
 * the same counts, histograms (of rho, and of x for --fdr) and pairs in
 * the same order, for 1 to 5 threads, within x and across to y, with
 * buffers that grow (16 pairs at first). */
static spearman_mat *random_missing(uint64_t rows, uint32_t n, uint64_t seed)
{
    spearman_mat *m = NULL;
    fd_rng rng = {seed};
    double *x = malloc(n * sizeof *x);
    smat_create(&m, n);
    for (uint64_t r = 0; r < rows; r++) {
        for (uint32_t k = 0; k < n; k++) x[k] = floor(fd_rng_unif(&rng) * 6);
        if (r % 3 == 1)
            for (uint32_t k = 0; k < n; k++)
                if (fd_rng_unif(&rng) < 0.25) x[k] = NAN;
        smat_push_missing(m, x, r);
    }
    smat_finish(m, 1);
    free(x);
    return m;
}

static void test_missing_split(void)
{
    const uint32_t n = 12, rows = 150;
    spearman_mat *x = random_missing(rows, n, 5), *y = random_missing(rows - 7, n, 6);
    spearman_sel sel, *table = NULL;
    spearman_sel_init(&sel, 'p', 0.2, n);
    CHECK(spearman_sel_by_n(&sel, 'p', 0.2, n, &table) == FD_OK, "by_n table");
    spearman_parts *parts = NULL;
    for (int cross = 0; cross < 2; cross++)
        for (int threads = 1; threads <= 5; threads++) {
            const spearman_mat *yy = cross ? y : x;
            spearman_acc a = {0}, b = {0};
            a.hist = calloc(SPEARMAN_HIST_BINS, sizeof *a.hist);
            b.hist = calloc(SPEARMAN_HIST_BINS, sizeof *b.hist);
            a.xbins = b.xbins = 256;
            a.xscale = b.xscale = 256 / spearman_x_crit(0.2, (int)n - 2);
            double edge[257];
            for (uint32_t e = 0; e <= 256; e++) edge[e] = spearman_p_of_x(fmin(1, e / a.xscale), (int)n - 2);
            a.pedge = b.pedge = edge;
            a.xhist = calloc(256, sizeof *a.xhist);
            b.xhist = calloc(256, sizeof *b.xhist);
            a.out = malloc(16 * sizeof *a.out); a.capout = 16;
            b.out = malloc(16 * sizeof *b.out); b.capout = 16;
            for (uint64_t i0 = 0; i0 < x->rows; i0 += 37) {
                const uint64_t i1 = i0 + 37 < x->rows ? i0 + 37 : x->rows;
                const uint64_t j0 = cross ? 0 : i0;
                spearman_tile_missing(x, yy, i0, i1, j0, yy->rows, !cross, &sel, &a);
                CHECK(spearman_tile_missing_split(&parts, threads, x, yy, i0, i1, j0, yy->rows, !cross, &sel, &b) ==
                          FD_OK, "split runs");
            }
            uint64_t xsum = 0;
            for (int e = 0; e < 256; e++) xsum += a.xhist[e];
            CHECK(a.pairs > 1000 && a.selected > 100 && a.nout == a.selected && xsum > 100,
                  "the case has pairs (%llu, %llu)",
                  (unsigned long long)a.pairs, (unsigned long long)a.selected);
            CHECK(a.pairs == b.pairs && a.selected == b.selected && a.nout == b.nout && !a.failed && !b.failed &&
                      !memcmp(a.out, b.out, a.nout * sizeof *a.out) &&
                      !memcmp(a.hist, b.hist, SPEARMAN_HIST_BINS * sizeof *a.hist) &&
                      !memcmp(a.xhist, b.xhist, 256 * sizeof *a.xhist),
                  "missing pairs on %d threads as on one, cross=%d (pairs %llu/%llu, selected %llu/%llu)", threads,
                  cross, (unsigned long long)a.pairs, (unsigned long long)b.pairs, (unsigned long long)a.selected,
                  (unsigned long long)b.selected);
            free(a.hist); free(b.hist); free(a.xhist); free(b.xhist); free(a.out); free(b.out);
        }
    spearman_parts_free(&parts);
    free(table);
    smat_destroy(&x);
    smat_destroy(&y);
}

int main(void)
{
    test_ranks();
    test_kernels();
    test_topk();
    test_pvalues();
    test_decide();
    test_hist();
    test_xbin();
    test_sel_p();
    test_missing_split();
    test_digest();
    test_place();
    return t_report();
}
