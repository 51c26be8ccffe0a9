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

struct fd_writeback {
    int fd; /* our own descriptor: HDF5's may close before the thread stops */
    int stop;
    pthread_mutex_t m;
    pthread_cond_t c;
    pthread_t thread;
};

static void *writeback_run(void *arg)
{
    fd_writeback *w = arg;
    pthread_mutex_lock(&w->m);
    while (!w->stop) {
        const struct timespec until = fd_deadline_in(PERIOD_NS);
        pthread_cond_timedwait(&w->c, &w->m, &until);
        if (w->stop) break;
        pthread_mutex_unlock(&w->m);
        /* Submits what is dirty and not yet under writeback; never waits
         * for the disk.  A failure (a file system without it) only means
         * the rename does the work: nothing to report. */
        sync_file_range(w->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        pthread_mutex_lock(&w->m);
    }
    pthread_mutex_unlock(&w->m);
    return NULL;
}

fd_writeback *fd_writeback_start(const char *tmp, const char *final)
{
    struct stat sb;
    if (fd_env_switched("FD_WRITEBACK") || lstat(final, &sb) != 0 || !S_ISREG(sb.st_mode)) return NULL;
    fd_writeback *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->fd = open(tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (w->fd < 0) goto fail;
    if (pthread_mutex_init(&w->m, NULL) != 0) goto fail_fd;
    if (pthread_cond_init(&w->c, NULL) != 0) goto fail_m;
    if (pthread_create(&w->thread, NULL, writeback_run, w) != 0) goto fail_c;
    return w;
fail_c:
    pthread_cond_destroy(&w->c);
fail_m:
    pthread_mutex_destroy(&w->m);
fail_fd:
    close(w->fd);
fail:
    free(w);
    return NULL;
}

void fd_writeback_stop(fd_writeback *w)
{
    if (!w) return;
    pthread_mutex_lock(&w->m);
    w->stop = 1;
    pthread_cond_signal(&w->c);
    pthread_mutex_unlock(&w->m);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->c);
    pthread_mutex_destroy(&w->m);
    close(w->fd);
    free(w);
}
