/* SPDX-License-Identifier: BSD-3-Clause */
/* --plot without cairo in the build (see dpc_plot.h). */
#include "dpc_plot.h"

fd_status dpc_plot_ready(void)
{
    return fd_fail(FD_ERR_UNAVAILABLE, "--plot: this fcbo-dist was built without cairo; install libcairo2-dev and "
                                       "rebuild");
}

fd_status dpc_plot_write(const char *path, const dpc_points *p, const double *rho, const double *delta,
                         const int32_t *labels, const int32_t *core, const int64_t *centers, uint32_t k,
                         double gamma_thr)
{
    (void)p, (void)rho, (void)delta, (void)labels, (void)core, (void)centers, (void)k, (void)gamma_thr;
    return fd_fail(FD_ERR_UNAVAILABLE, "%s: this fcbo-dist was built without cairo; install libcairo2-dev and rebuild",
                   path);
}
