/* SPDX-License-Identifier: BSD-3-Clause */
/* The device context made early (see device_warm.h). */
#include "device_warm.h"

#include "placement.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { WARM_RUNNING, WARM_DONE, WARM_ABANDONED };

struct fd_warm_state {
    void (*warm)(int device); /* makes the context, reports nothing */
    int (*devices)(void);     /* counts them (place_now off: on the thread) */
    int placed, index;
    atomic_int state;         /* WARM_*: who frees it, the job or the thread */
    pthread_t thread;
};

/* Abandoned start-ups not yet finished (fd_warm_exit). */
static atomic_int abandoned_running;

static void *warm_run(void *arg)
{
    fd_warm_state *s = arg;
    if (s->placed || s->index < s->devices()) s->warm(s->index);
    if (atomic_exchange(&s->state, WARM_DONE) == WARM_ABANDONED) {
        free(s);
        atomic_fetch_sub(&abandoned_running, 1);
    }
    return NULL;
}

fd_status fd_warm_start(fd_warm *w, const fd_mpi *m, const fd_device_ops *dev, int place_now)
{
    w->device = w->index = -1;
    w->s = NULL;
    if (!dev->devices) return FD_OK;
    if (place_now) {
        FD_TRY(fd_place_device(m, dev->devices(), &w->device));
        w->index = w->device;
    } else {
        FD_TRY(fd_place_device_index(m, &w->index));
    }
    /* no thread (none to be had, or no warm): the context is made when
     * the workload opens the device */
    if (!dev->warm_device) return FD_OK;
    fd_warm_state *s = malloc(sizeof *s);
    if (!s) return FD_OK;
    s->warm = dev->warm_device;
    s->devices = dev->devices;
    s->placed = w->device >= 0;
    s->index = w->index;
    atomic_init(&s->state, WARM_RUNNING);
    if (pthread_create(&s->thread, NULL, warm_run, s) == 0) w->s = s;
    else free(s);
    return FD_OK;
}

void fd_warm_join(fd_warm *w)
{
    if (!w->s) return;
    pthread_join(w->s->thread, NULL);
    free(w->s);
    w->s = NULL;
}

int fd_warm_ready(fd_warm *w) { return !w->s || atomic_load(&w->s->state) == WARM_DONE; }

void fd_warm_abandon(fd_warm *w)
{
    if (!w->s) return;
    fd_warm_state *s = w->s;
    w->s = NULL;
    atomic_fetch_add(&abandoned_running, 1);
    if (atomic_exchange(&s->state, WARM_ABANDONED) == WARM_DONE) {
        /* It finished meanwhile: nothing runs beside the end. */
        pthread_join(s->thread, NULL);
        free(s);
        atomic_fetch_sub(&abandoned_running, 1);
    } else {
        pthread_detach(s->thread);
    }
}

int fd_warm_exit(int code)
{
    if (atomic_load(&abandoned_running) == 0) return code;
    fflush(stdout);
    fflush(stderr);
    _exit(code);
}
