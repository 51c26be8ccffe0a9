/* SPDX-License-Identifier: BSD-3-Clause */
#include "bcp_predict.h"

#include "../io/matrix_collect.h"
#include "../io/matrix_sink.h"
#include "bcp_masked.h" /* bcp_model_entry */

#include <stdlib.h>
#include <string.h>

fd_status bcp_entries_read(const char *spec, uint32_t order, const uint64_t *dims, int threads, bcp_entries *out)
{
    fd_matrix_all a;
    fd_status st = FD_OK;
    memset(out, 0, sizeof *out);
    FD_TRY(fd_matrix_collect(spec, FD_HEADER_AUTO, 0, threads, 0, &a));
    if (a.rows == 0) {
        st = fd_fail(FD_ERR_INPUT, "--predict-at %s: no entries", spec);
        goto done;
    }
    if (a.n != order) {
        st = fd_fail(FD_ERR_INPUT, "--predict-at %s: %u columns, one a mode of the tensor's %u", spec, a.n, order);
        goto done;
    }
    FD_ALLOC_GOTO(out->idx, a.rows * order, st, done);
    for (uint64_t k = 0; k < a.rows; k++)
        for (uint32_t n = 0; n < order; n++) {
            const double v = a.all[k * order + n];
            /* v < dims[n] in doubles first: the cast of a huge value would be undefined. */
            if (!(v >= 0 && v < (double)dims[n] && v == (double)(uint64_t)v)) {
                st = fd_fail(FD_ERR_INPUT, "--predict-at %s: row %llu, column %u: %.17g is not an index of mode %u "
                                           "(0 to %llu)",
                             spec, (unsigned long long)k + 1, n + 1, v, n + 1, (unsigned long long)dims[n] - 1);
                goto done;
            }
            out->idx[k * order + n] = (uint64_t)v;
        }
    out->n = a.rows;
    out->order = order;
done:
    fd_matrix_all_free(&a);
    if (st != FD_OK) bcp_entries_free(out);
    return st;
}

void bcp_entries_free(bcp_entries *e)
{
    free(e->idx);
    memset(e, 0, sizeof *e);
}

void bcp_entries_predict(const bcp_model *m, const bcp_entries *e, double *v)
{
    for (uint64_t k = 0; k < e->n; k++) v[k] = bcp_model_entry(m, e->idx + k * e->order);
}
