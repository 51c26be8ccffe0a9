/* The CPU backend of bcp (see bcp_backend.h): the MTTKRP without the
 * full Khatri-Rao product of all the other modes: the products of the
 * modes before n (L rows) and after n (K rows) apart, then, for each
 * (l, i), the row Y[l, i, :] against the after-product, scaled by the
 * before-product's row l.  Rows of M on threads; plain loops (no BLAS,
 * which the GPU machine does not have). */
#include "version.h" /* FD_HAVE_CUDA */

#include "bcp_backend.h"

#include "../common/backend.h"
#include "../common/dispatch.h"
#include "../common/par_rows.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    double *kl, *kr; /* Khatri-Rao products of the modes before and after n */
} cpu_state;

static fd_status cpu_open(void **state, const bcp_tensor *t, uint32_t R, int device)
{
    (void)device;
    uint64_t kl = 1, kr = 1;
    for (uint32_t n = 0; n < t->order; n++) {
        kl = bcp_span(t, 0, n) > kl ? bcp_span(t, 0, n) : kl;
        kr = bcp_span(t, n + 1, t->order) > kr ? bcp_span(t, n + 1, t->order) : kr;
    }
    cpu_state *s = calloc(1, sizeof *s);
    if (s) {
        s->kl = malloc(kl * R * sizeof *s->kl);
        s->kr = malloc(kr * R * sizeof *s->kr);
    }
    if (!s || !s->kl || !s->kr) {
        if (s) {
            free(s->kl);
            free(s->kr);
        }
        free(s);
        return fd_fail(FD_ERR_NOMEM, "out of memory for the Khatri-Rao products (%llu and %llu rows)",
                       (unsigned long long)kl, (unsigned long long)kr);
    }
    *state = s;
    return FD_OK;
}

static void cpu_close(void *state)
{
    cpu_state *s = state;
    if (!s) return;
    free(s->kl);
    free(s->kr);
    free(s);
}

/* The Khatri-Rao product of A[a], ..., A[b - 1] (the block's rows) in C
 * order (row index i_a ... i_{b-1}, the last fastest): rows x R, built in
 * place from the last rows back, so that no row is overwritten before it
 * is read. */
static void khatri_rao(const bcp_tensor *t, const double *const *Af, uint32_t R, uint32_t a, uint32_t b, double *out)
{
    uint64_t rows = 1;
    for (uint32_t r = 0; r < R; r++) out[r] = 1;
    for (uint32_t n = a; n < b; n++) {
        const uint64_t I = t->dims[n];
        const double *A = Af[n];
        for (uint64_t q = rows; q-- > 0;) {
            double row[256];
            memcpy(row, out + q * R, R * sizeof *row);
            for (uint64_t i = I; i-- > 0;)
                for (uint32_t r = 0; r < R; r++) out[(q * I + i) * R + r] = row[r] * A[i * R + r];
        }
        rows *= I;
    }
}

typedef struct {
    const cpu_state *s;
    const bcp_tensor *t;
    uint32_t n, R;
    double *M;
} rows_ctx;

/* Rows [i0, i1) of M: each sums over l in order, so the result does not
 * depend on the threads. */
FD_HOT static fd_status mttkrp_rows(void *arg, uint64_t i0, uint64_t i1, int thread)
{
    const rows_ctx *c = arg;
    const bcp_tensor *t = c->t;
    const uint32_t R = c->R, n = c->n;
    const uint64_t L = bcp_span(t, 0, n), I = t->dims[n], K = bcp_span(t, n + 1, t->order);
    double tmp[256];
    (void)thread;
    for (uint64_t i = i0; i < i1; i++)
        for (uint32_t r = 0; r < R; r++) c->M[i * R + r] = 0;
    for (uint64_t l = 0; l < L; l++)
        for (uint64_t i = i0; i < i1; i++) {
            const double *y = t->x + (l * I + i) * K;
            for (uint32_t r = 0; r < R; r++) tmp[r] = 0;
            for (uint64_t k = 0; k < K; k++) {
                const double v = y[k], *kr = c->s->kr + k * R;
                for (uint32_t r = 0; r < R; r++) tmp[r] += v * kr[r];
            }
            for (uint32_t r = 0; r < R; r++) c->M[i * R + r] += c->s->kl[l * R + r] * tmp[r];
        }
    return FD_OK;
}

static fd_status cpu_mttkrp(void *state, const bcp_tensor *t, uint32_t n, const double *const *A, uint32_t R,
                            int threads, double *M)
{
    cpu_state *s = state;
    khatri_rao(t, A, R, 0, n, s->kl);
    khatri_rao(t, A, R, n + 1, t->order, s->kr);
    rows_ctx c = {s, t, n, R, M};
    if (threads < 1) threads = 1;
    /* A mode has few rows, each much work: about four chunks a thread. */
    const uint64_t chunk = t->dims[n] / (4 * (uint64_t)threads);
    return par_rows_chunk(threads, 0, t->dims[n], chunk, mttkrp_rows, &c, NULL);
}

static int cpu_available(void) { return 1; }

const struct bcp_ops bcp_cpu_ops = {"cpu", NULL, NULL, cpu_open, cpu_close, cpu_mttkrp};

#if FD_HAVE_CUDA
static int cuda_available(void) { return bcp_cuda_ops.devices() > 0; }
#endif

static const fd_backend backends[] = {
    {"cpu", cpu_available, &bcp_cpu_ops},
#if FD_HAVE_CUDA
    {"cuda", cuda_available, &bcp_cuda_ops},
#endif
};

fd_status bcp_backend_get(const char *name, const struct bcp_ops **ops)
{
    const void *p = NULL;
    FD_TRY(fd_backend_get(backends, sizeof backends / sizeof *backends, "bcp", name, &p));
    *ops = p;
    return FD_OK;
}
