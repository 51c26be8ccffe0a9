/* Pieces of dpc against independent computations:
 *  - dpc_exp_neg (the exp both backends share) against glibc's exp: within
 *    1 ulp on random arguments over the whole range, subnormal results
 *    included, and exact at 0 and past the underflow;
 *  - the grid's shape: every point's cell inside it, and two points closer
 *    than the cell side never more than one cell apart (what the passes'
 *    reach relies on), with the slack dpc_grid_slack reports;
 *  - d_c from --neighbors on the grid against the scan of every point
 *    (FD_DPC_GRID=off), bit for bit, on uniform, clustered, duplicated
 *    and outlying points of 1 to 3 coordinates;
 *  - dpc_label_chains: each point takes its first centre's label up the
 *    chain (against a walk written here), and a cycle of parents or one
 *    out of range is an error, not a hang. */
#include "dpc/dpc.h"
#include "dpc/dpc_exp.h"
#include "dpc/grid.h"
#include "common/clock.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double ulps(double a, double b)
{
    if (a == b) return 0;
    double u = nextafter(b, INFINITY) - b;
    if (u == 0) u = 0x1p-1074;
    return fabs(a - b) / u;
}

static void test_exp(void)
{
    fd_rng rng = {5};
    double worst = 0, at = 0;
    for (int i = 0; i < 2000000; i++) {
        /* Scales from tiny arguments to the subnormal range. */
        const double scale[] = {1e-9, 1, 40, 700, 745.1};
        const double x = -fd_rng_unif(&rng) * scale[i % 5];
        const double e = ulps(dpc_exp_neg(x), exp(x));
        if (e > worst) worst = e, at = x;
    }
    CHECK(worst <= 1, "%g ulp at x = %.17g", worst, at);
    CHECK(dpc_exp_neg(0.0) == 1 && dpc_exp_neg(-0.0) == 1, "exp(0)");
    CHECK(dpc_exp_neg(-746) == 0 && dpc_exp_neg(-INFINITY) == 0, "past the underflow");
    CHECK(dpc_exp_neg(-745.1) == exp(-745.1), "the smallest subnormal: %g", dpc_exp_neg(-745.1));
}

static void test_grid(void)
{
    fd_rng rng = {9};
    for (int rep = 0; rep < 30; rep++) {
        dpc_points p = {0};
        p.n = 2000 + (uint64_t)(fd_rng_unif(&rng) * 3000);
        p.d = 1 + (uint32_t)(rep % 3);
        p.x = malloc(p.n * p.d * sizeof *p.x);
        /* Far from the origin at times, so that x - lo rounds. */
        const double off = rep % 2 ? 1e6 : 0, span = rep % 4 < 2 ? 1 : 1000;
        const double h = span * (0.001 + fd_rng_unif(&rng) * 0.05);
        /* The second half: twins of the first, just under h away along
         * one coordinate. */
        const uint64_t half = p.n / 2;
        for (uint64_t i = 0; i < half * p.d; i++) p.x[i] = off + fd_rng_unif(&rng) * span;
        for (uint64_t i = half; i < p.n; i++)
            for (uint32_t k = 0; k < p.d; k++) {
                const double t = p.x[(i - half) * p.d + k];
                p.x[i * p.d + k] = k == (i % p.d) ? t + (i % 2 ? 1 : -1) * h * 0.999999 : t;
            }
        dpc_grid g;
        if (dpc_grid_build(&g, &p, h) != FD_OK) {
            CHECK(0, "dpc_grid_build");
            free(p.x);
            continue;
        }
        const double slack = dpc_grid_slack(&g);
        CHECK(g.h >= h && slack > 0 && slack < 1e-6, "h %g for %g, slack %g", g.h, h, slack);
        int far = 0, outside = 0, close = 0;
        for (uint64_t i = 0; i < p.n; i++) {
            int64_t ci[DPC_GRID_MAX_D];
            dpc_grid_coords(&g, i, ci);
            for (uint32_t k = 0; k < p.d; k++) outside += ci[k] < 0 || ci[k] >= g.dim[k];
            /* Its twin (the first half), and its neighbours in index order. */
            for (uint64_t q = 0; q < 50; q++) {
                const uint64_t j = q == 0 ? i + half : i + q;
                if (j >= p.n || (q == 0 && i >= half)) continue;
                double d2 = 0;
                for (uint32_t k = 0; k < p.d; k++) {
                    const double t = p.x[i * p.d + k] - p.x[j * p.d + k];
                    d2 += t * t;
                }
                if (d2 >= h * h) continue;
                close += q == 0;
                int64_t cj[DPC_GRID_MAX_D];
                dpc_grid_coords(&g, j, cj);
                for (uint32_t k = 0; k < p.d; k++) far += llabs(ci[k] - cj[k]) > 1;
            }
        }
        CHECK(close == (int)half, "%d of %llu twins closer than h", close, (unsigned long long)half);
        CHECK(!outside && !far, "d = %u: %d coordinates outside, %d pairs closer than h two cells apart", p.d, outside,
              far);
        dpc_grid_free(&g);
        free(p.x);
    }
}

/* The walk over a cube or a ring of cells against every cell of the grid
 * tested one by one (within r in every coordinate; at r in some, for a
 * ring), in index order: grids of 1 to 3 coordinates, of 1 to 9 cells a
 * side, every centre, r from 0 past the grid's size. */
static void test_cell_walk(void)
{
    fd_rng rng = {20261207};
    long walks = 0, bad = 0;
    for (int rep = 0; rep < 60; rep++) {
        dpc_grid g;
        memset(&g, 0, sizeof g);
        g.d = 1 + (uint32_t)(rep % 3);
        g.ncells = 1;
        for (uint32_t k = 0; k < g.d; k++) {
            g.dim[k] = 1 + (int64_t)(fd_rng_unif(&rng) * 9);
            g.ncells *= (uint64_t)g.dim[k];
        }
        uint64_t want[1000], got[1000];
        for (uint64_t cc = 0; cc < g.ncells; cc++) {
            int64_t c[DPC_GRID_MAX_D] = {0};
            uint64_t v = cc;
            for (uint32_t k = 0; k < g.d; k++) {
                c[k] = (int64_t)(v % (uint64_t)g.dim[k]);
                v /= (uint64_t)g.dim[k];
            }
            for (int64_t r = 0; r <= 10; r++)
                for (int ring = 0; ring < 2; ring++) {
                    size_t nw = 0, ng = 0;
                    for (uint64_t cell = 0; cell < g.ncells; cell++) {
                        uint64_t u = cell;
                        int in = 1, edge = 0;
                        for (uint32_t k = 0; k < g.d; k++) {
                            const int64_t off = (int64_t)(u % (uint64_t)g.dim[k]) - c[k];
                            u /= (uint64_t)g.dim[k];
                            in &= off >= -r && off <= r;
                            edge |= off == r || off == -r;
                        }
                        if (in && (!ring || edge)) want[nw++] = cell;
                    }
                    dpc_cell_walk w;
                    uint64_t cell;
                    int coords_ok = 1;
                    dpc_walk_init(&w, &g, c, r, ring);
                    while (ng < 1000 && dpc_walk_next(&w, &cell)) {
                        got[ng++] = cell;
                        coords_ok &= dpc_grid_cell(&g, w.at) == cell;
                    }
                    walks++;
                    if (ng != nw || memcmp(want, got, nw * sizeof *want) != 0 || !coords_ok) {
                        if (bad++ < 5)
                            CHECK(0, "walk d=%u dims %lld x %lld x %lld, centre cell %llu, r %lld, ring %d: %zu cells, want %zu",
                                  g.d, (long long)g.dim[0], (long long)(g.d > 1 ? g.dim[1] : 1),
                                  (long long)(g.d > 2 ? g.dim[2] : 1), (unsigned long long)cc, (long long)r, ring, ng, nw);
                    }
                }
        }
    }
    CHECK(bad == 0 && walks > 10000, "%ld of %ld walks differ", bad, walks);
}

/* Point sets just past DPC_DC_GRID_MIN: uniform; in 8 tight clusters;
 * with a third of them copies of others; with one point far away (the
 * uniform guess of the threshold is then far too wide). */
static void test_dc_grid(void)
{
    fd_rng rng = {20261205};
    for (int rep = 0; rep < 6; rep++) {
        dpc_points p = {0};
        const int kind = rep % 4;
        p.n = DPC_DC_GRID_MIN + 1000 + (uint64_t)(fd_rng_unif(&rng) * 2000);
        p.d = 1 + (uint32_t)(rep % 3);
        p.x = malloc(p.n * p.d * sizeof *p.x);
        p.xt = malloc(p.n * p.d * sizeof *p.xt);
        double ctr[8][3];
        for (int c = 0; c < 8; c++)
            for (int k = 0; k < 3; k++) ctr[c][k] = 100 * fd_rng_unif(&rng);
        for (uint64_t i = 0; i < p.n; i++) {
            const int c = (int)(fd_rng_next(&rng) % 8);
            for (uint32_t k = 0; k < p.d; k++) {
                double v = 100 * fd_rng_unif(&rng);
                if (kind == 1) v = ctr[c][k] + 0.01 * (fd_rng_unif(&rng) + fd_rng_unif(&rng) - 1);
                p.x[i * p.d + k] = v;
            }
            if (kind == 2 && i > 10 && fd_rng_unif(&rng) < 0.33) {
                const uint64_t src = fd_rng_next(&rng) % i;
                for (uint32_t k = 0; k < p.d; k++) p.x[i * p.d + k] = p.x[src * p.d + k];
            }
        }
        if (kind == 3)
            for (uint32_t k = 0; k < p.d; k++) p.x[k] = 1e7;
        for (uint64_t i = 0; i < p.n; i++)
            for (uint32_t k = 0; k < p.d; k++) p.xt[(size_t)k * p.n + i] = p.x[i * p.d + k];
        const double kk = rep % 2 ? 30 : 4.5;
        double grid = NAN, scan = NAN;
        unsetenv("FD_DPC_GRID");
        const fd_status a = dpc_dc_neighbors(&p, kk, 7, 2, &grid);
        setenv("FD_DPC_GRID", "off", 1);
        const fd_status b = dpc_dc_neighbors(&p, kk, 7, 2, &scan);
        unsetenv("FD_DPC_GRID");
        CHECK(a == FD_OK && b == FD_OK && grid == scan,
              "d_c, %s points, d = %u, n = %llu, %g neighbours: grid %.17g (status %d), scan %.17g (status %d)",
              (const char *[]){"uniform", "clustered", "duplicated", "outlying"}[kind], p.d, (unsigned long long)p.n,
              kk, grid, (int)a, scan, (int)b);
        free(p.x);
        free(p.xt);
    }
}

static void test_label_chains(void)
{
    enum { N = 2000 };
    static int64_t parent[N];
    static int32_t labels[N], want[N];
    fd_rng rng = {3};
    /* a forest by density order: a point's parent is an earlier point;
     * points 0, 7 and 100 are centres */
    for (int i = 0; i < N; i++) parent[i] = i ? (int64_t)(fd_rng_unif(&rng) * i) : -1;
    for (int i = 0; i < N; i++) labels[i] = i == 0 ? 1 : i == 7 ? 2 : i == 100 ? 3 : 0;
    for (int i = 0; i < N; i++) {
        int j = i;
        while (j != 0 && j != 7 && j != 100) j = (int)parent[j];
        want[i] = j == 0 ? 1 : j == 7 ? 2 : 3;
    }
    CHECK(dpc_label_chains(N, parent, labels) == FD_OK, "label_chains on a forest");
    int bad = 0;
    for (int i = 0; i < N; i++) bad += labels[i] != want[i];
    CHECK(bad == 0, "label_chains: %d labels differ from the walk", bad);
    /* a cycle 5 -> 6 -> 5 beside the centres, and a parent out of range */
    for (int i = 0; i < N; i++) labels[i] = i == 0 ? 1 : 0;
    parent[5] = 6;
    parent[6] = 5;
    fd_status st = dpc_label_chains(N, parent, labels);
    CHECK(st == FD_ERR_INTERNAL, "label_chains: a cycle gives %d", (int)st);
    for (int i = 0; i < N; i++) labels[i] = i == 0 ? 1 : 0;
    parent[5] = N;
    parent[6] = 0;
    st = dpc_label_chains(N, parent, labels);
    CHECK(st == FD_ERR_INTERNAL, "label_chains: a parent out of range gives %d", (int)st);
    fd_errclear();
}

int main(void)
{
    test_exp();
    test_grid();
    test_cell_walk();
    test_dc_grid();
    test_label_chains();
    return t_report();
}
