/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA backend of spearman: the rank matrix goes to the rank's GPU once,
 * as int8 rows, and stays there for every pass; each record (4,096 rows
 * against a run of columns) is one kernel launch (src/cuda/spearman_gpu.cu).
 * What comes back is counts, the rho histogram, and the pairs the host
 * must see: those it writes and those whose selection only the exact test
 * of tile.c can settle, which this file hands to spearman_acc_take. */
#include "spearman_backend.h"

#include "../common/bigmem.h"
#include "../common/clock.h"
#include "../common/env.h"
#include "../common/par_rows.h"
#include "../cuda/fdcuda.h"
#include "spearman_gpu.h"
#include "spearman_gpu_missing.h"
#include "spearman_gpu_wide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    spearman_gpu *g;
    spearman_gpu_wide *gw;    /* Kendall's sign vectors wider than 128 bytes (then g is NULL) */
    spearman_gpu_wide *gk;    /* Kendall's --pvalue where g holds the rows: the wide kernel's copy */
    int kendall_ready;        /* the wide kernel has the ties and verdicts (kendall_p_rect) */
    int device, host_threads;
    spearman_gpu_missing *gm; /* --missing pairwise with rows that miss a value, else NULL */
    spearman_parts *parts;    /* the host's share of them, on host_threads (spearman_tile_missing_split) */
    double q_by_m[SPEARMAN_GPU_MAX_N + 1];
    spearman_gpu_out out;
    uint64_t passed; /* --top-k: pairs through the screens (merged on the GPU) */
    double lists_s;  /* --top-k: the seconds taken to hand the lists to the host's heaps */
} cuda_state;

static int cuda_devices(void) { return fd_cuda_device_count(); }
static int cuda_available(void) { return fd_cuda_device_count() > 0; }

/* int8 holds a_k exactly up to n = 128; Kendall's signs by the wide
 * kernel past 128.  Rows that miss values take their own kernel
 * (spearman_gpu_missing.cu) at any n up to 128. */
static int cuda_supports(int mode, const spearman_mat *x, int incomplete)
{
    (void)mode;
    (void)incomplete;
    return x->n <= SPEARMAN_GPU_MAX_N || (x->ties && x->n <= SPEARMAN_GPU_WIDE_MAX_N);
}

/* The rank matrix as int8 rows of kp bytes, zero past n (the packed int16
 * layout of rankmat.h, unpacked), on the rank's host threads: on one it
 * was a serial step of 316 MB between the parallel reader and the copy to
 * the GPU. */
typedef struct {
    const spearman_mat *m;
    uint32_t kp;
    int8_t *a;
} int8_job;

static fd_status int8_rows(void *ctx, uint64_t r0, uint64_t r1, int thread)
{
    (void)thread;
    const int8_job *j = ctx;
    const spearman_mat *m = j->m;
    for (uint64_t r = r0; r < r1; r++) {
        const uint32_t *w = m->packed + (r >> 3) * m->kp * 8 + (r & 7);
        int8_t *row = j->a + r * j->kp;
        for (uint32_t p = 0; p < m->kp; p++) {
            uint32_t v = w[p * 8];
            row[2 * p] = (int8_t)(int16_t)(v & 0xffff);
            if (2 * p + 1 < m->n) row[2 * p + 1] = (int8_t)(int16_t)(v >> 16);
        }
    }
    return FD_OK;
}

static fd_status to_int8_rows(const spearman_mat *m, uint32_t kp, int threads, int8_t **out, size_t *bytes,
                              spearman_gpu_mat *g)
{
    *bytes = m->rows * kp + 1;
    int8_t *a = fd_big_zalloc(*bytes);
    if (!a) return fd_fail(FD_ERR_NOMEM, "out of memory for the int8 rank matrix (%llu rows)",
                           (unsigned long long)m->rows);
    int8_job j = {m, kp, a};
    fd_status st = par_rows_chunk(threads, 0, m->rows, 65536, int8_rows, &j, NULL);
    if (st != FD_OK) {
        fd_big_free(a, *bytes);
        return st;
    }
    *out = a;
    *g = (spearman_gpu_mat){m->rows, a, m->sii, m->inv_root};
    return FD_OK;
}

/* The kernel's tuning knobs (docs/performance.md): FD_GPU_STRIP, column
 * tiles per thread block, from 1 to 65536; FD_GPU_SCREEN, band, max or
 * auto; FD_GPU_RECORDS, the pair buffer's first size (the tests make it
 * small to take the path that grows it).  Anything else is refused. */
static fd_status tuning_from_env(spearman_gpu_tuning *tu)
{
    static const char *const screens[] = {"band", "max", "auto", NULL};
    static const int screen_of[] = {SPEARMAN_GPU_SCREEN_BAND, SPEARMAN_GPU_SCREEN_MAX, SPEARMAN_GPU_SCREEN_AUTO};
    uint64_t v;
    int w;
    FD_TRY(fd_env_count("FD_GPU_STRIP", 1, 65536, SPEARMAN_GPU_STRIP, "column tiles", &v));
    tu->strip = (uint32_t)v;
    FD_TRY(fd_env_count("FD_GPU_RECORDS", 1, 1ull << 32, SPEARMAN_GPU_RECORDS, "pairs", &tu->records));
    FD_TRY(fd_env_word("FD_GPU_SCREEN", screens, 2, &w));
    tu->screen = screen_of[w];
    return FD_OK;
}

static void cuda_close(void *state)
{
    cuda_state *c = state;
    if (!c) return;
    if (c->g && getenv("FD_GPU_VERBOSE")) {
        spearman_gpu_stats s;
        spearman_gpu_get_stats(c->g, &s);
        char fdr[96] = "";
        if (s.launches_fdr)
            snprintf(fdr, sizeof fdr, " (%u in the %llu launches of --fdr's pass 1)", s.strip_fdr,
                     (unsigned long long)s.launches_fdr);
        fprintf(stderr,
                "gpu: %llu launches (%llu repeated for a larger pair buffer, %llu with the max screen), %.4f s from "
                "launch to results, a strip of %u column tiles a block%s, %llu half warp tiles took a closer look\n",
                (unsigned long long)s.launches, (unsigned long long)s.reruns, (unsigned long long)s.launches_max,
                s.kernel_seconds, s.strip, fdr, (unsigned long long)s.closer);
        if (c->passed)
            fprintf(stderr, "gpu: --top-k: %llu pairs through the screens into the lists on the GPU, %.4f s to hand "
                            "the lists to the heaps\n",
                    (unsigned long long)c->passed, c->lists_s);
    }
    if (c->gm && getenv("FD_GPU_VERBOSE")) {
        double sec;
        uint64_t launches;
        spearman_gpu_missing_stats(c->gm, &sec, &launches);
        fprintf(stderr, "gpu: --missing pairwise: %llu launches, %.4f s from launch to results\n",
                (unsigned long long)launches, sec);
    }
    if (c->gw && getenv("FD_GPU_VERBOSE")) {
        double sec;
        uint64_t launches;
        spearman_gpu_wide_stats(c->gw, &sec, &launches);
        fprintf(stderr, "gpu: wide sign vectors: %llu launches, %.4f s from launch to results\n",
                (unsigned long long)launches, sec);
    }
    spearman_gpu_missing_destroy(&c->gm);
    spearman_parts_free(&c->parts);
    spearman_gpu_wide_destroy(&c->gw);
    spearman_gpu_wide_destroy(&c->gk);
    spearman_gpu_destroy(&c->g);
    free(c);
}

/* The rows of m that miss a value, for the GPU (spearman_gpu_missing.h);
 * the caller frees *rows and *values. */
static fd_status incomplete_rows(const spearman_mat *m, spearman_gpu_incomplete *in, uint32_t **rows, int16_t **values)
{
    uint64_t count = 0;
    for (uint64_t r = 0; r < m->rows; r++) count += smat_incomplete(m, r);
    *rows = malloc((count ? count : 1) * sizeof **rows);
    *values = malloc((count ? count : 1) * m->n * sizeof **values);
    if (!*rows || !*values) return fd_fail(FD_ERR_NOMEM, "out of memory for the rows with missing values");
    uint64_t k = 0;
    for (uint64_t r = 0; r < m->rows; r++)
        if (smat_incomplete(m, r)) {
            (*rows)[k] = (uint32_t)r;
            for (uint32_t c = 0; c < m->n; c++) (*values)[k * m->n + c] = (int16_t)smat_a(m, r, c);
            k++;
        }
    *in = (spearman_gpu_incomplete){count, *rows, *values};
    return FD_OK;
}

static fd_status missing_open(cuda_state *c, const spearman_mat *x, const spearman_mat *y, uint64_t records)
{
    spearman_gpu_incomplete ix, iy;
    uint32_t *rx = NULL, *ry = NULL;
    int16_t *vx = NULL, *vy = NULL;
    fd_status st = incomplete_rows(x, &ix, &rx, &vx);
    if (st == FD_OK && y != x) st = incomplete_rows(y, &iy, &ry, &vy);
    if (st == FD_OK) st = spearman_gpu_missing_create(&c->gm, c->g, x->n, &ix, y != x ? &iy : NULL, records);
    free(rx);
    free(vx);
    free(ry);
    free(vy);
    return st;
}

/* --missing pairwise: the rectangle's pairs with a row that misses a
 * value.  On the GPU for a threshold (--pvalue, --rho, --count-only);
 * --top-k's heaps and --fdr's keys (each pair's p) take them on the host,
 * as the CPU backend does, on the host's threads: on one, --fdr at
 * 100,000 x 16 took 59.9 s against the CPU backend's 6.3 s on 16
 * (bench/results/spearman-methods.csv, H100 host, f64e067). */
static fd_status missing_rect(cuda_state *c, const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1,
                              uint64_t j0, uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc)
{
    if (acc->topk || acc->xhist || sel->kendall || (sel->mode != 'p' && sel->mode != 'r' && sel->mode != 'a'))
        return spearman_tile_missing_split(&c->parts, c->host_threads, x, y, i0, i1, j0, j1, upper, sel, acc);
    for (uint32_t m = 0; m <= x->n; m++) c->q_by_m[m] = sel->by_n && m >= 3 ? sel->by_n[m].q : sel->q;
    const spearman_gpu_missing_sel gs = {
        .mode = sel->mode, .q_by_m = c->q_by_m, .hist = acc->hist != NULL, .emit = acc->out != NULL};
    spearman_gpu_missing_out o;
    FD_TRY(spearman_gpu_missing_rect(c->gm, i0, i1, j0, j1, upper, &gs, &o));
    acc->pairs += o.pairs;
    acc->selected += o.selected;
    if (acc->hist && o.hist)
        for (int b = 0; b < SPEARMAN_HIST_BINS; b++) acc->hist[b] += o.hist[b];
    for (uint64_t k = 0; k < o.nrec; k++) {
        const spearman_gpu_mpair *q = &o.rec[k];
        spearman_acc_take_sums(sel, acc, q->i, q->j, q->m, q->s, q->sii, q->sjj, q->keep);
    }
    return FD_OK;
}

static fd_status cuda_open(void **state, const spearman_mat *x, const spearman_mat *y, int device, int host_threads)
{
    fd_status st = FD_OK;
    /* rows of the int8 tensor-core kernel, or of the wide one */
    const int wide = x->n > SPEARMAN_GPU_MAX_N;
    const uint32_t kp = wide ? (x->n + 63) / 64 * 64 : (x->n + 31) / 32 * 32;
    int8_t *ax = NULL, *ay = NULL;
    size_t bx = 0, by = 0;
    spearman_gpu_tuning tu;
    spearman_gpu_mat gx, gy;
    cuda_state *c = calloc(1, sizeof *c);
    if (!c) return fd_fail(FD_ERR_NOMEM, "out of memory");
    c->device = device;
    c->host_threads = host_threads;
    const double t0 = fd_now();
    FD_TRY_GOTO(to_int8_rows(x, kp, host_threads, &ax, &bx, &gx), st, done);
    if (y != x) FD_TRY_GOTO(to_int8_rows(y, kp, host_threads, &ay, &by, &gy), st, done);
    const double t_int8 = fd_now() - t0;
    FD_TRY_GOTO(tuning_from_env(&tu), st, done);
    fd_cuda_set_oom_hint("every GPU holds the whole rank matrix (32 bytes a row) and a strip of tiles: set "
                         "FD_GPU_STRIP lower (column tiles a block), or use --backend cpu");
    if (wide) {
        FD_TRY_GOTO(spearman_gpu_wide_create(&c->gw, device, kp, &gx, y != x ? &gy : NULL, tu.records), st, done);
        goto done;
    }
    FD_TRY_GOTO(spearman_gpu_create(&c->g, device, kp ? kp : 32, &tu, &gx, y != x ? &gy : NULL), st, done);
    if (x->incomplete || (y != x && y->incomplete)) FD_TRY_GOTO(missing_open(c, x, y, tu.records), st, done);
    if (getenv("FD_GPU_VERBOSE")) {
        spearman_gpu_stats s;
        spearman_gpu_get_stats(c->g, &s);
        fprintf(stderr, "gpu: open %.4f s: int8 rows %.4f s, device setup %.4f s (of which the upload %.4f s)\n",
                fd_now() - t0, t_int8, s.setup_seconds, s.upload_seconds);
    }
done:
    fd_big_free(ax, bx);
    fd_big_free(ay, by);
    if (st != FD_OK) {
        cuda_close(c);
        c = NULL;
    }
    *state = c;
    return st;
}

/* The rows of [i0, i1) that vary and are also columns of [j0, j1): the
 * pairs i == j the kernel counts, which --top-k does not. */
static uint64_t diagonal_pairs(const spearman_mat *x, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1)
{
    uint64_t n = 0;
    for (uint64_t r = i0 > j0 ? i0 : j0; r < i1 && r < j1; r++) n += x->sii[r] != 0;
    return n;
}

/* --top-k on the GPU: each row's list of its strongest partners is kept
 * on the device (spearman_gpu_topk_reset), and the GPU screens each pair
 * against its row's weakest entry.  The columns go in runs that double,
 * first k + 1 of them: after the first run most lists are full, and after
 * each run their thresholds have risen, so for random data a run lets
 * about k pairs per row through (each partner of the run beats the k-th
 * of the columns before it with odds k / columns done); rows whose lists
 * are not full yet get every pair.  What passes is merged into the lists
 * on the device between the runs, and at the end the lists go into the
 * host's heaps (tile.c), which write them.  The result is the CPU
 * backend's: the screen only ever lets through too much, and the merge
 * orders partners exactly as spearman_topk_offer does. */
static fd_status cuda_topk(cuda_state *c, const spearman_mat *x, uint64_t i0, uint64_t i1, uint64_t j0, uint64_t j1,
                           spearman_acc *acc)
{
    spearman_topk *t = acc->topk;
    spearman_gpu_out *o = &c->out;
    if (i1 > x->rows) i1 = x->rows;
    if (i0 >= i1) return FD_OK;
    const uint32_t rows = (uint32_t)(i1 - i0), k = t->k;
    FD_TRY(spearman_gpu_topk_reset(c->g, i0, rows, k, t->same));
    uint64_t width = (uint64_t)k + 1;
    for (uint64_t a = j0; a < j1;) {
        const uint64_t b = j1 - a > width ? a + width : j1;
        const spearman_gpu_sel gs = {.mode = 'k'};
        FD_TRY(spearman_gpu_rect(c->g, i0, i1, a, b, 0, &gs, o));
        acc->pairs += o->pairs - (t->same ? diagonal_pairs(x, i0, i1, a, b) : 0);
        c->passed += o->nrec;
        width = b - j0;
        a = b;
    }
    const double t0 = fd_now();
    const uint32_t *n;
    const spearman_gpu_topk_ent *e;
    FD_TRY(spearman_gpu_topk_lists(c->g, &n, &e));
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t q = 0; q < n[r]; q++) {
            const spearman_gpu_topk_ent *p = &e[(uint64_t)r * k + q];
            spearman_topk_offer(t, x, i0 + r, p->j, p->s, p->sjj);
        }
    c->lists_s += fd_now() - t0;
    return FD_OK;
}

/* The pairs of rows that miss no value (the others have S_ii = 0 there,
 * as constant rows). */
/* What the host adds of a launch's results: the counts, the histograms,
 * and the pairs that came back (decided here where the GPU did not). */
static void take_out(const spearman_mat *x, const spearman_mat *y, const spearman_sel *sel, spearman_acc *acc,
                     const spearman_gpu_out *o)
{
    if (o->emit_dropped) acc->keep_over = 1;
    acc->pairs += o->pairs;
    acc->selected += o->selected;
    if (acc->hist && o->hist)
        for (int b = 0; b < SPEARMAN_HIST_BINS; b++) acc->hist[b] += o->hist[b];
    if (acc->xhist && o->xhist)
        for (uint32_t b = 0; b < acc->xbins; b++) acc->xhist[b] += o->xhist[b];
    for (uint64_t k = 0; k < o->nrec; k++) {
        const spearman_gpu_pair *q = &o->rec[k];
        spearman_acc_take(x, y, sel, acc, q->i, q->j, q->s, (int)q->keep);
    }
}

static spearman_gpu_sel gpu_sel(const spearman_sel *sel, const spearman_acc *acc)
{
    /* Keeping pairs in pass 1, a launch emits no more than the room left. */
    const uint64_t room = acc->keep_cap > acc->nout ? acc->keep_cap - acc->nout : 1;
    return (spearman_gpu_sel){.mode = sel->mode,
                              .q = sel->q,
                              .x_lo = sel->x_lo,
                              .x_hi = sel->x_hi,
                              .pre = sel->pre,
                              .hist = acc->hist != NULL,
                              .emit = acc->out != NULL,
                              .xbins = acc->xhist ? acc->xbins : 0,
                              .xscale = acc->xscale,
                              .emit_cap = acc->keep_cap ? room : 0};
}

/* The pairs of rows that miss no value (the others have S_ii = 0 there,
 * as constant rows). */
static fd_status cuda_pairs(cuda_state *c, const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1,
                            uint64_t j0, uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc)
{
    const spearman_gpu_sel gs = gpu_sel(sel, acc);
    FD_TRY(spearman_gpu_rect(c->g, i0, i1, j0, j1, upper, &gs, &c->out));
    take_out(x, y, sel, acc, &c->out);
    return FD_OK;
}

/* --top-k of Kendall's wide sign vectors: the host's heaps (tile.c) take
 * the pairs that reach their row's weakest partner, in runs of columns
 * that double from k + 1, the thresholds rising after each run (as
 * cuda_topk's device lists do). */
static fd_status wide_topk(cuda_state *c, const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1,
                           uint64_t j0, uint64_t j1, spearman_acc *acc)
{
    spearman_topk *t = acc->topk;
    if (i1 > x->rows) i1 = x->rows;
    if (i0 >= i1) return FD_OK;
    const spearman_gpu_sel gs = {.mode = 'k'};
    uint64_t width = (uint64_t)t->k + 1;
    for (uint64_t a = j0; a < j1;) {
        const uint64_t b = j1 - a > width ? a + width : j1;
        FD_TRY(spearman_gpu_wide_rect(c->gw, i0, i1, a, b, 0, &gs, t->thr + (i0 - t->i0), &c->out));
        acc->pairs += c->out.pairs - (t->same ? diagonal_pairs(x, i0, i1, a, b) : 0);
        for (uint64_t k = 0; k < c->out.nrec; k++) {
            const spearman_gpu_pair *q = &c->out.rec[k];
            if (!(t->same && q->i == q->j)) spearman_topk_offer(t, x, q->i, q->j, q->s, y->sii[q->j]);
        }
        width = b - j0;
        a = b;
    }
    return FD_OK;
}

/* The wide kernel's copy of the sign vectors where the int8 kernel holds
 * them (rows of up to 16 observations): Kendall's --pvalue runs on the
 * wide kernel at every width. */
static fd_status wide_copy(cuda_state *c, const spearman_mat *x, const spearman_mat *y)
{
    fd_status st = FD_OK;
    const uint32_t kp = (x->n + 63) / 64 * 64;
    int8_t *ax = NULL, *ay = NULL;
    size_t bx = 0, by = 0;
    spearman_gpu_mat gx, gy;
    spearman_gpu_tuning tu;
    FD_TRY(tuning_from_env(&tu));
    FD_TRY_GOTO(to_int8_rows(x, kp, c->host_threads, &ax, &bx, &gx), st, done);
    if (y != x) FD_TRY_GOTO(to_int8_rows(y, kp, c->host_threads, &ay, &by, &gy), st, done);
    st = spearman_gpu_wide_create(&c->gk, c->device, kp, &gx, y != x ? &gy : NULL, tu.records);
done:
    fd_big_free(ax, bx);
    fd_big_free(ay, by);
    return st;
}

/* Kendall's --pvalue and --fdr: each pair's verdict is tile.c's exact
 * test (kendall_p_le, or its p in a range), and its --fdr bin tile.c's,
 * on the GPU where double settles them (spearman_gpu_wide.cu,
 * kendall_decide), by the host for the pairs that come back undecided.
 * The verdicts and p of two rows without ties depend on |S| alone:
 * tabled here once, by kendall_p_le and kendall_p_tab themselves. */
static fd_status kendall_p_rect(cuda_state *c, const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1,
                                uint64_t j0, uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc)
{
    if (!c->gw && !c->gk) FD_TRY(wide_copy(c, x, y));
    spearman_gpu_wide *w = c->gw ? c->gw : c->gk;
    if (!c->kendall_ready) {
        const uint32_t N = kendall_width(x->n_obs);
        unsigned char *keep = malloc((size_t)N + 1);
        double *p = malloc(((size_t)N + 1) * sizeof *p);
        fd_status st = keep && p ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
        const kendall_ties none = {0, 0, 0};
        for (uint32_t a = 0; st == FD_OK && a <= N; a++) {
            keep[a] = (unsigned char)kendall_p_le(sel->kendall, a, &none, &none);
            p[a] = kendall_p_tab(sel->kendall, a, &none, &none);
        }
        const spearman_gpu_kendall k = {x->n_obs, sel->kendall->z2, keep, p, x->ties, y != x ? y->ties : NULL};
        if (st == FD_OK) st = spearman_gpu_wide_kendall(w, &k);
        free(keep);
        free(p);
        FD_TRY(st);
        c->kendall_ready = 1;
    }
    const spearman_gpu_sel gs = gpu_sel(sel, acc);
    FD_TRY(spearman_gpu_wide_rect(w, i0, i1, j0, j1, upper, &gs, NULL, &c->out));
    take_out(x, y, sel, acc, &c->out);
    return FD_OK;
}

/* Kendall's wide sign vectors: --rho, --count-only and --top-k
 * (--pvalue and --fdr go to kendall_p_rect first). */
static fd_status wide_rect(cuda_state *c, const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1,
                           uint64_t j0, uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc)
{
    if (acc->topk) return wide_topk(c, x, y, i0, i1, j0, j1, acc);
    const spearman_gpu_sel gs = gpu_sel(sel, acc);
    if (acc->xhist || sel->kendall)
        return fd_fail(FD_ERR_INTERNAL, "wide_rect: Kendall's p is kendall_p_rect's");
    FD_TRY(spearman_gpu_wide_rect(c->gw, i0, i1, j0, j1, upper, &gs, NULL, &c->out));
    take_out(x, y, sel, acc, &c->out);
    return FD_OK;
}

static fd_status cuda_rect(void *state, const spearman_mat *x, const spearman_mat *y, uint64_t i0, uint64_t i1,
                           uint64_t j0, uint64_t j1, int upper, const spearman_sel *sel, spearman_acc *acc)
{
    cuda_state *c = state;
    if (sel->kendall && !acc->topk) return kendall_p_rect(c, x, y, i0, i1, j0, j1, upper, sel, acc);
    if (c->gw) return wide_rect(c, x, y, i0, i1, j0, j1, upper, sel, acc);
    if (acc->topk) FD_TRY(cuda_topk(c, x, i0, i1, j0, j1, acc));
    else FD_TRY(cuda_pairs(c, x, y, i0, i1, j0, j1, upper, sel, acc));
    return c->gm ? missing_rect(c, x, y, i0, i1, j0, j1, upper, sel, acc) : FD_OK;
}

/* 16 blocks of rows (4,096) per record and the whole record in one launch
 * (--top-k: in runs of columns, cuda_topk):
 * a launch then holds millions of pairs, so its fixed cost (about 30 us:
 * launch, counters back, synchronisation) stays small. */
const struct spearman_ops spearman_cuda_ops = {
    .dev = {.name = "cuda", .available = cuda_available, .devices = cuda_devices, .open_device = fd_cuda_open,
            .warm_device = fd_cuda_warm},
    .record_blocks = 16,
    .rect_blocks = 0,
    .open = cuda_open,
    .close = cuda_close,
    .supports = cuda_supports,
    .rect = cuda_rect,
};
