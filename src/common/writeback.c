/* SPDX-License-Identifier: BSD-3-Clause */
/* Early writeback of a file about to replace another (see writeback.h). */
#include "writeback.h"

#include "clock.h"
#include "env.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Between two submissions: the writers fill the page cache at 1-3 GB/s,
 * so one period's pages (tens of MB) are what the rename is left with. */
#define PERIOD_NS 10000000L

/* One thread for every file of the process (as Redis's bio.c keeps a
 * background thread for its closes and fsyncs), started with the first and
 * idle, with no timer, while none is open.  A thread a file made a
 * lattice run with a segment a record (--checkpoint-seconds 1e-9, 242
 * segments) start and join 240 threads; the run was 1.7 % slower with
 * FD_WRITEBACK on after this change, 4.7 % before, within what calls vary
 * by (bench/results/checkpoint.csv, dev VM, 2026-12-07): the gain is in
 * threads, not measured in time. */
struct fd_writeback {
    int fd;   /* our own descriptor: HDF5's may close before the file stops */
    int busy; /* under lock: the thread is submitting its pages */
    fd_writeback *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER; /* a file came */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* a file's submission ended */
static fd_writeback *files;                            /* under lock */
static int started;                                    /* under lock: the thread runs */

static void *writeback_run(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        if (!files) {
            pthread_cond_wait(&wake, &lock);
            continue;
        }
        const struct timespec until = fd_deadline_in(PERIOD_NS);
        pthread_cond_timedwait(&wake, &lock, &until);
        /* Each file's submission outside the lock, so that a slow one
         * (a busy disk, a network file system) holds up no other thread's
         * start or stop; its own stop waits for it (busy), which keeps it,
         * and so its next, in the list meanwhile.  SYNC_FILE_RANGE_WRITE
         * submits what is dirty and not yet under writeback, never waiting
         * for the disk.  A failure (a file system without it) only means
         * the rename does the work: nothing to report. */
        for (fd_writeback *w = files; w; w = w->next) {
            w->busy = 1;
            pthread_mutex_unlock(&lock);
            sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
            pthread_mutex_lock(&lock);
            w->busy = 0;
            pthread_cond_broadcast(&done);
        }
    }
    return NULL;
}

fd_writeback *fd_writeback_start(const char *tmp, const char *final)
{
    struct stat sb;
    if (fd_env_switched("FD_WRITEBACK") || lstat(final, &sb) != 0 || !S_ISREG(sb.st_mode)) return NULL;
    fd_writeback *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (w->fd < 0) {
        free(w);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    if (!started) {
        pthread_t t;
        pthread_attr_t at;
        /* Detached: it waits for files until the process ends. */
        started = pthread_attr_init(&at) == 0 && pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
                  pthread_create(&t, &at, writeback_run, NULL) == 0;
        pthread_attr_destroy(&at);
    }
    if (started) {
        w->next = files;
        files = w;
        pthread_cond_signal(&wake); /* from waiting for a file to its period */
    }
    pthread_mutex_unlock(&lock);
    if (!started) {
        close(w->fd);
        free(w);
        return NULL;
    }
    return w;
}

void fd_writeback_stop(fd_writeback *w)
{
    if (!w) return;
    pthread_mutex_lock(&lock);
    while (w->busy) pthread_cond_wait(&done, &lock);
    for (fd_writeback **p = &files; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            break;
        }
    pthread_mutex_unlock(&lock);
    close(w->fd);
    free(w);
}
