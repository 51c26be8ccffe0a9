/* SPDX-License-Identifier: BSD-3-Clause */
/* The device context made early (see device_warm.h). */
#include "device_warm.h"

#include "placement.h"

static void *warm_run(void *arg)
{
    const fd_warm *w = arg;
    w->warm(w->device);
    return NULL;
}

fd_status fd_warm_start(fd_warm *w, const fd_mpi *m, const fd_device_ops *dev)
{
    w->warm = dev->warm_device;
    w->device = -1;
    w->started = 0;
    if (!dev->devices) return FD_OK;
    FD_TRY(fd_place_device(m, dev->devices(), &w->device));
    /* no thread (none to be had, or no warm): the context is made when
     * the workload opens the device */
    if (w->warm) w->started = pthread_create(&w->thread, NULL, warm_run, w) == 0;
    return FD_OK;
}

void fd_warm_join(fd_warm *w)
{
    if (w->started) pthread_join(w->thread, NULL);
    w->started = 0;
}
