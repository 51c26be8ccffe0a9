/* SPDX-License-Identifier: BSD-3-Clause */
/* The device context made early (see device_warm.h). */
#include "device_warm.h"

#include "placement.h"

static void *warm_run(void *arg)
{
    fd_warm *w = arg;
    if (w->device >= 0 || w->index < w->devices()) w->warm(w->index);
    atomic_store(&w->done, 1);
    return NULL;
}

fd_status fd_warm_start(fd_warm *w, const fd_mpi *m, const fd_device_ops *dev, int place_now)
{
    w->warm = dev->warm_device;
    w->devices = dev->devices;
    w->device = w->index = -1;
    w->started = 0;
    atomic_init(&w->done, 0);
    if (!dev->devices) return FD_OK;
    if (place_now) {
        FD_TRY(fd_place_device(m, dev->devices(), &w->device));
        w->index = w->device;
    } else {
        FD_TRY(fd_place_device_index(m, &w->index));
    }
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

int fd_warm_ready(fd_warm *w) { return !w->started || atomic_load(&w->done); }
