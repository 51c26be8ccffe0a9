/* The FCbO engine against brute force: on random contexts of up to 14
 * attributes, the closure of every attribute subset gives the exact set of
 * (intent, support) pairs.  Checked for 1..4 threads, several minimum
 * supports, both extent representations (bitsets and lists) and several
 * task splits: the concept set must never change.  Wide contexts (hundreds
 * of attributes, so the closure's sparse-row paths run) are checked the
 * other way round: with at most 12 objects, the closure of every object
 * subset gives every concept. */
#include "common/clock.h"
#include "lattice/lattice.h"
#include "testutil.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t *v;
    size_t n, cap;
    int dup_ids;   /* an intent with ids not strictly ascending */
    int wide;      /* ids past 63: keep a hash of the intent with the support */
} collector;

/* A concept of a wide context as one number: FNV-1a of its intent ids,
 * then its support. */
static uint64_t wide_key(const uint32_t *ids, uint64_t n, uint32_t support)
{
    uint64_t h = 1469598103934665603ull;
    for (uint64_t k = 0; k < n; k++) h = (h ^ ids[k]) * 1099511628211ull;
    return (h ^ support) * 1099511628211ull;
}

static fd_status collect(void *self, const concept_batch *b)
{
    collector *c = self;
    uint64_t s = 0;
    for (uint64_t i = 0; i < b->n; i++) {
        uint64_t mask = 0;
        for (uint64_t k = s; k < b->int_end[i]; k++) {
            if (k > s && b->int_ids[k] <= b->int_ids[k - 1]) c->dup_ids = 1;
            if (!c->wide) mask |= 1ull << b->int_ids[k];
        }
        FD_TRY(fd_grow((void **)&c->v, &c->cap, c->n + 1, sizeof *c->v));
        c->v[c->n++] = c->wide ? wide_key(b->int_ids + s, b->int_end[i] - s, b->supp[i])
                               : mask | (uint64_t)b->supp[i] << 32;
        s = b->int_end[i];
    }
    return FD_OK;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Every closed attribute set with its support, sorted. */
static size_t brute_force(const uint32_t *rows, uint32_t n_obj, uint32_t m, uint32_t min_support, uint64_t *out)
{
    size_t k = 0;
    uint32_t all = m == 32 ? ~0u : (1u << m) - 1;
    for (uint32_t S = 0; S <= all; S++) {
        uint32_t ext = 0, intent = all;
        for (uint32_t o = 0; o < n_obj; o++)
            if ((rows[o] & S) == S) { ext++; intent &= rows[o]; }
        if (intent == S && ext >= min_support) out[k++] = (uint64_t)S | (uint64_t)ext << 32;
        if (S == all) break;
    }
    qsort(out, k, sizeof *out, cmp_u64);
    return k;
}

static fca_context *random_context(fd_rng *rng, uint32_t n_obj, uint32_t m, double density, uint32_t *rows)
{
    fca_context *c = NULL;
    if (fca_context_create(&c, n_obj, m, (uint64_t)n_obj * m) != FD_OK) return NULL;
    uint64_t nnz = 0;
    for (uint32_t o = 0; o < n_obj; o++) {
        rows[o] = 0;
        for (uint32_t a = 0; a < m; a++)
            if (fd_rng_unif(rng) < density) {
                rows[o] |= 1u << a;
                c->row_idx[nnz++] = a;
            }
        c->row_ptr[o + 1] = nnz;
    }
    for (uint32_t a = 0; a < m; a++) c->attr_names[a] = strdup("a");
    return c;
}

/* The context's layout for run_fcbo: the dense bitsets or the sparse
 * lists (fcbo.h); every comparison runs with both. */
static int g_layout = FCBO_LAYOUT_DENSE;

/* A device that starts late (lattice_opts.device_ready): ready at the
 * every-th question, which the host's threads ask between nodes; 0: the
 * device is open from the start.  run_fcbo's driver path records the
 * opens and the concepts the host ran. */
typedef struct {
    atomic_uint asked, opens, runs;
    unsigned every;
    uint64_t host_concepts;
} late_device;
static late_device g_late;

/* The device's run (the CPU's, counted). */
static fd_status late_run(const fcbo_prep *p, const lattice_opts *o, concept_sink *sink, task_source *src,
                          fcbo_stats *stats)
{
    atomic_fetch_add(&g_late.runs, 1);
    return lattice_cpu_ops.run(p, o, sink, src, stats);
}

static int late_ready(void *arg)
{
    late_device *d = arg;
    return atomic_fetch_add(&d->asked, 1) + 1 >= d->every;
}

static fd_status late_open(void *arg)
{
    late_device *d = arg;
    atomic_fetch_add(&d->opens, 1);
    return FD_OK;
}

/* no_failed: the split writes tasks without failed sets, as it does for
 * GPU backends; the concepts must not change. */
static size_t run_fcbo(const fca_context *ctx, uint32_t min_support, int threads, uint32_t list_max, size_t split,
                       int no_failed, collector *col)
{
    fcbo_prep *p = NULL;
    concept_sink sink;
    fcbo_stats stats = {0};
    col->n = 0;
    col->dup_ids = 0;
    if (fcbo_prep_create(&p, ctx, min_support, g_layout) != FD_OK) return (size_t)-1;
    if (fcbo_prep_set_list_max(p, list_max) != FD_OK) return (size_t)-1;
    concept_sink_init(&sink, 0, NULL);
    concept_sink_add(&sink, (concept_writer){collect, col});
    fd_status st;
    if (split) {
        /* Split explicitly to a given number of tasks, then run them. */
        task_list tasks;
        fcbo_ws *w = NULL;
        list_source ls;
        task_list_init(&tasks);
        lattice_opts o = {.min_support = min_support, .threads = threads, .quiet = 1};
        st = fcbo_root(p, &tasks);
        if (no_failed) {
            /* Rank 0's split for GPU ranks: the threads share each node. */
            if (st == FD_OK) st = lattice_split(p, &o, 1, &sink, &tasks, split, &stats);
        } else {
            if (st == FD_OK) st = fcbo_ws_create(&w, p, &sink);
            if (st == FD_OK) st = fcbo_split(w, &tasks, split);
            if (st == FD_OK) st = fcbo_ws_flush(w);
            fcbo_ws_destroy(&w);
        }
        list_source_init(&ls, &tasks);
        task_source src = list_source_as(&ls);
        if (st == FD_OK) st = lattice_cpu_ops.run(p, &o, &sink, &src, &stats);
        task_list_free(&tasks);
    } else {
        lattice_opts o = {.min_support = min_support, .threads = threads, .quiet = 1};
        /* The driver's path for a device backend (one consumer, tasks
         * without failed sets), with the CPU doing the work. */
        struct lattice_ops ops = lattice_cpu_ops;
        if (no_failed) ops.device_tasks = 8;
        if (g_late.every) {
            atomic_store(&g_late.asked, 0);
            atomic_store(&g_late.opens, 0);
            atomic_store(&g_late.runs, 0);
            ops.run = late_run;
            o.device_ready = late_ready;
            o.device_open = late_open;
            o.device_arg = &g_late;
        }
        st = lattice_enumerate(p, &o, &ops, &sink, &stats);
        g_late.host_concepts = stats.host_concepts;
    }
    concept_sink_destroy(&sink);
    fcbo_prep_destroy(&p);
    if (st != FD_OK) return (size_t)-1;
    qsort(col->v, col->n, sizeof *col->v, cmp_u64);
    return col->n;
}

/* Every concept of a context of n_obj <= 12 objects, as wide_key, sorted:
 * each object subset's intent, and that intent's extent. */
static size_t brute_force_wide(const uint64_t *rows, uint32_t n_obj, uint32_t m, uint32_t aw, uint64_t *out)
{
    size_t k = 0;
    uint64_t B[16];
    uint32_t ids[1024];
    unsigned char *seen = calloc((size_t)1 << n_obj, 1);
    for (uint32_t X = 0; X < (1u << n_obj); X++) {
        for (uint32_t w = 0; w < aw; w++) B[w] = w + 1 < aw || m % 64 == 0 ? ~0ull : (1ull << (m % 64)) - 1;
        for (uint32_t o = 0; o < n_obj; o++)
            if (X >> o & 1)
                for (uint32_t w = 0; w < aw; w++) B[w] &= rows[(size_t)o * aw + w];
        uint32_t ext = 0;
        for (uint32_t o = 0; o < n_obj; o++) {
            int has = 1;
            for (uint32_t w = 0; w < aw; w++) has &= (rows[(size_t)o * aw + w] & B[w]) == B[w];
            ext |= (uint32_t)has << o;
        }
        if (seen[ext]) continue; /* the same concept from another subset */
        seen[ext] = 1;
        uint32_t n = 0;
        for (uint32_t a = 0; a < m; a++)
            if (B[a / 64] >> (a % 64) & 1) ids[n++] = a;
        out[k++] = wide_key(ids, n, (uint32_t)__builtin_popcount(ext));
    }
    free(seen);
    qsort(out, k, sizeof *out, cmp_u64);
    return k;
}

static void test_wide(void)
{
    fd_rng rng = {20261130};
    uint64_t *expect = malloc(sizeof(uint64_t) << 12), rows[12 * 16];
    collector col = {.wide = 1};
    const uint32_t widths[] = {300, 520, 1000};
    const double dens[] = {0.05, 0.3, 0.7};
    for (size_t wi = 0; wi < 3; wi++)
        for (size_t di = 0; di < 3; di++)
            for (uint32_t n_obj = 4; n_obj <= 12; n_obj += 4) {
                const uint32_t m = widths[wi], aw = (m + 63) / 64;
                fca_context *c = NULL;
                CHECK(fca_context_create(&c, n_obj, m, (uint64_t)n_obj * m) == FD_OK, "context");
                if (!c) continue;
                uint64_t nnz = 0;
                memset(rows, 0, sizeof rows);
                for (uint32_t o = 0; o < n_obj; o++) {
                    for (uint32_t a = 0; a < m; a++)
                        if (fd_rng_unif(&rng) < dens[di]) {
                            rows[(size_t)o * aw + a / 64] |= 1ull << (a % 64);
                            c->row_idx[nnz++] = a;
                        }
                    c->row_ptr[o + 1] = nnz;
                }
                for (uint32_t a = 0; a < m; a++) c->attr_names[a] = strdup("a");
                size_t ne = brute_force_wide(rows, n_obj, m, aw, expect);
                for (int lm = 0; lm < 4; lm++) {
                    g_layout = lm < 2 ? FCBO_LAYOUT_DENSE : FCBO_LAYOUT_SPARSE;
                    size_t got = run_fcbo(c, 0, 1 + lm % 2, lm % 2 ? UINT32_MAX : 0, 0, 0, &col);
                    CHECK(got == ne && !memcmp(col.v, expect, ne * sizeof *expect),
                          "wide: %u objects x %u attributes, density %.2f, lists %s, %s layout: %zu concepts, brute "
                          "force %zu",
                          n_obj, m, dens[di], lm % 2 ? "always" : "never", lm < 2 ? "dense" : "sparse", got, ne);
                    CHECK(!col.dup_ids, "intent ids not ascending");
                }
                fca_context_destroy(&c);
            }
    free(col.v);
    free(expect);
}

/* fcbo_run_until's pause: yes at the every-th question (1: at once). */
typedef struct {
    uint32_t every, asked;
} pause_plan;

static int pause_at(void *arg)
{
    pause_plan *pp = arg;
    return ++pp->asked % pp->every == 0;
}

/* A lone worker that keeps pausing: the root runs until the plan says
 * stop, then every task it left runs the same way, until none is left.
 * With every = 1 each run stops before its first child, so each node of
 * the tree becomes a task of its own.  Returns the concepts (sorted, in
 * col) and the closures computed, or -1. */
static long long run_paused(const fca_context *ctx, uint32_t min_support, uint32_t list_max, uint32_t every,
                            collector *col, uint64_t *runs)
{
    fcbo_prep *p = NULL;
    fcbo_ws *w = NULL;
    concept_sink sink;
    task_list todo, left;
    col->n = 0;
    col->dup_ids = 0;
    task_list_init(&todo);
    task_list_init(&left);
    if (fcbo_prep_create(&p, ctx, min_support, g_layout) != FD_OK) return -1;
    if (fcbo_prep_set_list_max(p, list_max) != FD_OK) return -1;
    concept_sink_init(&sink, 0, NULL);
    concept_sink_add(&sink, (concept_writer){collect, col});
    fd_status st = fcbo_root(p, &todo);
    if (st == FD_OK) st = fcbo_ws_create(&w, p, &sink);
    pause_plan plan = {every, 0};
    *runs = 0;
    /* todo as a stack whose top is its end: a run's frontier is pushed in
     * reverse, so that its first task runs next, as the search would. */
    while (st == FD_OK && todo.n) {
        task_list_clear(&left);
        size_t words = fcbo_task_words(task_at(&todo, todo.n - 1));
        uint64_t *t = malloc(words * sizeof *t);
        if (!t) { st = FD_ERR_NOMEM; break; }
        memcpy(t, task_at(&todo, todo.n - 1), words * sizeof *t);
        todo.n--;
        todo.nwords = todo.off[todo.n];
        st = fcbo_run_until(w, t, pause_at, &plan, &left);
        free(t);
        (*runs)++;
        for (size_t i = left.n; st == FD_OK && i-- > 0;) st = task_list_push(&todo, task_at(&left, i));
    }
    long long closures = w ? (long long)fcbo_ws_stats(w)->closures : -1;
    if (st == FD_OK) st = fcbo_ws_flush(w);
    fcbo_ws_destroy(&w);
    task_list_free(&todo);
    task_list_free(&left);
    concept_sink_destroy(&sink);
    fcbo_prep_destroy(&p);
    if (st != FD_OK) return -1;
    qsort(col->v, col->n, sizeof *col->v, cmp_u64);
    return closures;
}

/* Pausing never changes the tree: the same concepts and the same number
 * of closures (the failed sets travel with the tasks) as one straight
 * run, whether the worker stops at every node, every other question or
 * rarely. */
static void test_pause(void)
{
    fd_rng rng = {20261206};
    uint32_t rows[200];
    uint64_t *expect = malloc(sizeof(uint64_t) << 14);
    collector col = {0};
    int cases = 0;
    for (int rep = 0; rep < 12; rep++) {
        uint32_t m = 4 + (uint32_t)(fd_rng_next(&rng) % 11);
        uint32_t n_obj = 5 + (uint32_t)(fd_rng_next(&rng) % 150);
        double dens = 0.2 + 0.6 * fd_rng_unif(&rng);
        fca_context *ctx = random_context(&rng, n_obj, m, dens, rows);
        CHECK(ctx != NULL, "context");
        if (!ctx) continue;
        const uint32_t supports[] = {0, 2, n_obj / 5 + 1};
        for (size_t si = 0; si < 3; si++) {
            size_t ne = brute_force(rows, n_obj, m, supports[si], expect);
            for (int lay = 0; lay < 2; lay++)
                for (int lm = 0; lm < 2; lm++) {
                    g_layout = lay ? FCBO_LAYOUT_SPARSE : FCBO_LAYOUT_DENSE;
                    const uint32_t list_max = lm ? UINT32_MAX : 0;
                    uint64_t runs1 = 0, runs;
                    long long straight = run_paused(ctx, supports[si], list_max, UINT32_MAX, &col, &runs1);
                    CHECK(straight >= 0 && runs1 <= 1 && col.n == ne && !memcmp(col.v, expect, ne * 8),
                          "straight run: %zu concepts, brute force %zu", col.n, ne);
                    const uint32_t plans[] = {1, 2, 3, 5};
                    for (size_t pi = 0; pi < 4; pi++) {
                        long long c = run_paused(ctx, supports[si], list_max, plans[pi], &col, &runs);
                        cases++;
                        CHECK(c == straight && col.n == ne && !memcmp(col.v, expect, ne * 8) && !col.dup_ids,
                              "objects %u attributes %u min_support %u %s layout lists %s, pausing at every %u-th "
                              "question (%llu runs): %zu concepts (brute force %zu), %lld closures (straight %lld)",
                              n_obj, m, supports[si], lay ? "sparse" : "dense", lm ? "always" : "never", plans[pi],
                              (unsigned long long)runs, col.n, ne, c, straight);
                        /* Stopping at every node makes each node a run. */
                        if (pi == 0) CHECK(runs == ne, "every node a run: %llu runs for %zu concepts", (unsigned long long)runs, ne);
                    }
                }
        }
        fca_context_destroy(&ctx);
    }
    g_layout = FCBO_LAYOUT_DENSE;
    printf("%d paused enumerations compared with brute force\n", cases);
    free(col.v);
    free(expect);
}

/* One device rank whose device is still starting: the host's threads
 * split the root and run subtrees until it is ready, and the device (the
 * CPU backend standing in) takes the rest.  The concepts are brute
 * force's whenever it becomes ready: at the first question (the host
 * only splits), after a few nodes, or never (the host does everything);
 * the device is opened and run once, or never if the host leaves it
 * nothing. */
static void test_host_start(void)
{
    fd_rng rng = {20261207};
    uint32_t rows[200];
    uint64_t *expect = malloc(sizeof(uint64_t) << 14);
    collector col = {0};
    int cases = 0, host_ran = 0, host_all = 0, unopened = 0;
    for (int rep = 0; rep < 10; rep++) {
        uint32_t m = 4 + (uint32_t)(fd_rng_next(&rng) % 11);
        uint32_t n_obj = 5 + (uint32_t)(fd_rng_next(&rng) % 150);
        fca_context *ctx = random_context(&rng, n_obj, m, 0.2 + 0.6 * fd_rng_unif(&rng), rows);
        CHECK(ctx != NULL, "context");
        if (!ctx) continue;
        const uint32_t supports[] = {0, 2, n_obj / 5 + 1};
        for (size_t si = 0; si < 3; si++) {
            size_t ne = brute_force(rows, n_obj, m, supports[si], expect);
            const unsigned every[] = {1, 2, 5, 40, UINT32_MAX};
            for (int threads = 2; threads <= 4; threads += 2)
                for (size_t ei = 0; ei < sizeof every / sizeof *every; ei++)
                    for (int lay = 0; lay < 2; lay++) {
                        g_layout = lay ? FCBO_LAYOUT_SPARSE : FCBO_LAYOUT_DENSE;
                        g_late.every = every[ei];
                        size_t got = run_fcbo(ctx, supports[si], threads, UINT32_MAX, 0, 1, &col);
                        cases++;
                        CHECK(got == ne && !memcmp(col.v, expect, ne * sizeof *expect) && !col.dup_ids,
                              "objects %u attributes %u min_support %u threads %d, the device ready at question "
                              "%u, %s layout: %zu concepts, brute force %zu",
                              n_obj, m, supports[si], threads, every[ei], lay ? "sparse" : "dense", got, ne);
                        /* Opened once, and run, unless the host left it
                         * nothing; never when it never becomes ready. */
                        const unsigned opens = atomic_load(&g_late.opens), runs = atomic_load(&g_late.runs);
                        CHECK(opens == runs && (opens == 1 || (opens == 0 && g_late.host_concepts == ne)) &&
                                  (every[ei] != UINT32_MAX || opens == 0),
                              "the device opened %u times and run %u times, the host ran %llu of %zu concepts", opens,
                              runs, (unsigned long long)g_late.host_concepts, ne);
                        unopened += opens == 0;
                        /* Ready at the first question: the host takes no subtree. */
                        if (every[ei] == 1)
                            CHECK(g_late.host_concepts == 0, "the host ran %llu concepts with the device ready",
                                  (unsigned long long)g_late.host_concepts);
                        host_ran += g_late.host_concepts > 0;
                        host_all += every[ei] == UINT32_MAX && ne && g_late.host_concepts == ne;
                    }
        }
        fca_context_destroy(&ctx);
    }
    g_late.every = 0;
    g_layout = FCBO_LAYOUT_DENSE;
    /* The cases above must reach the host's run, and its whole-tree end. */
    CHECK(host_ran > cases / 4 && host_all > 0 && unopened >= host_all && unopened < cases,
          "the host ran subtrees in %d of %d cases, all of them in %d; the device unopened in %d", host_ran, cases,
          host_all, unopened);
    printf("%d enumerations with a device starting late compared with brute force\n", cases);
    free(col.v);
    free(expect);
}

int main(void)
{
    fd_rng rng = {20261129};
    const double dens[] = {0.1, 0.3, 0.5, 0.7, 0.9};
    uint64_t *expect = malloc(sizeof(uint64_t) << 14);
    uint32_t rows[200];
    collector col = {0};
    int cases = 0;
    for (int rep = 0; rep < 6; rep++)
        for (size_t di = 0; di < sizeof dens / sizeof *dens; di++) {
            uint32_t m = 3 + (uint32_t)(fd_rng_next(&rng) % 12);       /* 3..14 attributes */
            uint32_t n_obj = 1 + (uint32_t)(fd_rng_next(&rng) % 150);  /* 1..150 objects */
            fca_context *ctx = random_context(&rng, n_obj, m, dens[di], rows);
            CHECK(ctx != NULL, "context");
            if (!ctx) continue;
            const uint32_t supports[] = {0, 1, 2, n_obj / 4 + 1, n_obj, n_obj + 1};
            for (size_t si = 0; si < sizeof supports / sizeof *supports; si++) {
                size_t ne = brute_force(rows, n_obj, m, supports[si], expect);
                for (int threads = 1; threads <= 4; threads++)
                    for (int lm = 0; lm < 2; lm++) {
                        uint32_t list_max = lm ? UINT32_MAX : 0;
                        size_t split = (size_t)(threads - 1) * 7; /* 0: the driver's own split */
                        for (int nf = 0; nf <= 3; nf++) {
                            g_layout = nf < 2 ? FCBO_LAYOUT_DENSE : FCBO_LAYOUT_SPARSE;
                            size_t got = run_fcbo(ctx, supports[si], threads, list_max, split, nf % 2, &col);
                            cases++;
                            CHECK(got == ne && !memcmp(col.v, expect, ne * sizeof *expect),
                                  "objects %u attributes %u density %.1f min_support %u threads %d lists %s split "
                                  "%zu%s, %s layout: %zu concepts, brute force %zu",
                                  n_obj, m, dens[di], supports[si], threads, lm ? "always" : "never", split,
                                  nf % 2 ? " without failed sets" : "", nf < 2 ? "dense" : "sparse", got, ne);
                            CHECK(!col.dup_ids, "intent ids not ascending");
                        }
                    }
            }
            fca_context_destroy(&ctx);
        }
    printf("%d enumerations compared with brute force\n", cases);
    test_wide();
    test_pause();
    test_host_start();
    free(col.v);
    free(expect);
    return t_report();
}
