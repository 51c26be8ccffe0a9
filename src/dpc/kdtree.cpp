/* SPDX-License-Identifier: BSD-3-Clause */
/* dpc's kd-tree (kdtree.h): nanoflann's KDTreeSingleIndexAdaptor
 * (BSD-2-Clause, libnanoflann-dev), with our own metric and result sets
 * so that results stay exact.
 *
 * nanoflann prunes a subtree when its box distance, kept incrementally
 * (one coordinate's term replaced at each level), is above the result
 * set's worstDist().  Those box distances round; our sets answer a bound
 * widened by a relative 1e-9 plus an absolute 2^-40 of the squared
 * diagonal of the points' bounding box (the incremental sum's error is
 * a few ulps of that diagonal per level, and a tree is under 64 levels),
 * then the next double up, so that a point at exactly the bound (a tie)
 * still reaches addPoint.  Each point offered is then judged on its
 * dpc_d2, as the brute-force passes judge it.  This file is compiled
 * without fused multiply-adds, as dpc.c is (CMakeLists.txt). */
#include "kdtree.h"

#include "../common/env.h"

#include <nanoflann.hpp>

#include <cmath>
#include <cstdint>
#include <new>

namespace {

struct cloud {
    const dpc_points *p;
    size_t kdtree_get_point_count() const { return p->n; }
    double kdtree_get_pt(uint32_t i, size_t k) const { return p->x[(size_t)i * p->d + k]; }
    template <class B> bool kdtree_get_bbox(B &) const { return false; }
};

/* dpc_d2 for the leaves; one coordinate's term for the boxes. */
struct d2_metric {
    using ElementType = double;
    using DistanceType = double;
    const cloud &c;
    explicit d2_metric(const cloud &c_) : c(c_) {}
    double evalMetric(const double *a, uint32_t j, size_t) const
    {
        return dpc_d2(a, c.p->x + (size_t)j * c.p->d, c.p->d);
    }
    template <class U, class V> double accum_dist(U a, V b, size_t) const
    {
        const double t = a - b;
        return t * t;
    }
};

using tree_t = nanoflann::KDTreeSingleIndexAdaptor<d2_metric, cloud, -1, uint32_t>;

/* Points per leaf: 16 to 32 ran within a few per cent of each other on
 * 16-D blobs (bench/dpc-dims.sh); fewer costs more box arithmetic. */
constexpr size_t LEAF = 16;

/* The result sets' common part: the widened bound of a squared distance. */
struct bound {
    double abs_slack;
    double widen(double t2) const
    {
        return t2 == INFINITY ? t2 : std::nextafter(t2 + t2 * 1e-9 + abs_slack, INFINITY);
    }
};

struct count_set : bound {
    uint64_t i, n = 0;
    double t2, worst;
    count_set(double s, uint64_t i_, double t2_) : bound{s}, i(i_), t2(t2_), worst(widen(t2_)) {}
    void init() {}
    size_t size() const { return n; }
    bool full() const { return true; }
    double worstDist() const { return worst; }
    bool addPoint(double d, uint32_t j)
    {
        n += d < t2 && j != i;
        return true;
    }
};

struct visit_set : bound {
    uint64_t i;
    double t2, worst;
    dpc_kdtree_visit fn;
    void *ctx;
    visit_set(double s, uint64_t i_, double t2_, dpc_kdtree_visit f, void *c)
        : bound{s}, i(i_), t2(t2_), worst(widen(t2_)), fn(f), ctx(c) {}
    void init() {}
    size_t size() const { return 0; }
    bool full() const { return true; }
    double worstDist() const { return worst; }
    bool addPoint(double d, uint32_t j)
    {
        if (d < t2 && j != i) fn(ctx, i, j);
        return true;
    }
};

/* The bound shrinks with the best denser point found so far; points that
 * are not denser are passed over, so a local density peak searches far. */
struct denser_set : bound {
    uint64_t i;
    const double *rho;
    double ri, best = INFINITY, worst = INFINITY;
    int64_t bj = -1;
    denser_set(double s, uint64_t i_, const double *r) : bound{s}, i(i_), rho(r), ri(r[i_]) {}
    void init() {}
    size_t size() const { return bj >= 0; }
    bool full() const { return bj >= 0; }
    double worstDist() const { return worst; }
    bool addPoint(double d, uint32_t j)
    {
        const double rj = rho[j];
        if (!(rj > ri || (rj == ri && j < i))) return true;
        if (d < best || (d == best && (int64_t)j < bj)) {
            best = d;
            bj = j;
            worst = widen(d);
        }
        return true;
    }
};

} // namespace

struct dpc_kdtree {
    cloud c;
    double abs_slack;
    tree_t *tree;
};

extern "C" int dpc_kdtree_usable(const dpc_points *p)
{
    return p->d >= 4 && p->d <= DPC_TREE_MAX_D && p->n < UINT32_MAX && !fd_env_switched("FD_DPC_GRID");
}

extern "C" dpc_kdtree *dpc_kdtree_build(const dpc_points *p)
{
    dpc_kdtree *t = new (std::nothrow) dpc_kdtree{{p}, 0, nullptr};
    if (!t) return nullptr;
    double diag = 0;
    for (uint32_t k = 0; k < p->d; k++) {
        double lo = INFINITY, hi = -INFINITY;
        for (uint64_t j = 0; j < p->n; j++) {
            const double v = p->x[j * p->d + k];
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        diag += (hi - lo) * (hi - lo);
    }
    t->abs_slack = std::ldexp(diag, -40);
    try {
        t->tree = new tree_t(p->d, t->c, nanoflann::KDTreeSingleIndexAdaptorParams(LEAF));
    } catch (...) { /* std::bad_alloc: nanoflann allocates nothing else */
        delete t;
        return nullptr;
    }
    return t;
}

extern "C" void dpc_kdtree_free(dpc_kdtree *t)
{
    if (!t) return;
    delete t->tree;
    delete t;
}

/* A search allocates nanoflann's per-query vector of d doubles: -1 when
 * that fails (no exception crosses into C). */
template <class S> static int search(const dpc_kdtree *t, uint64_t i, S &set)
{
    try {
        t->tree->findNeighbors(set, t->c.p->x + i * t->c.p->d, nanoflann::SearchParams());
    } catch (...) {
        return -1;
    }
    return 0;
}

extern "C" int dpc_kdtree_count(const dpc_kdtree *t, uint64_t i, double t2, uint64_t *n)
{
    count_set s(t->abs_slack, i, t2);
    const int rc = search(t, i, s);
    *n = s.n;
    return rc;
}

extern "C" int dpc_kdtree_within(const dpc_kdtree *t, uint64_t i, double t2, dpc_kdtree_visit fn, void *ctx)
{
    visit_set s(t->abs_slack, i, t2, fn, ctx);
    return search(t, i, s);
}

extern "C" int dpc_kdtree_nearest_denser(const dpc_kdtree *t, uint64_t i, const double *rho, int64_t *j, double *d2)
{
    denser_set s(t->abs_slack, i, rho);
    const int rc = search(t, i, s);
    *j = s.bj;
    *d2 = s.best;
    return rc;
}
