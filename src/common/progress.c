/* SPDX-License-Identifier: BSD-3-Clause */
#include "progress.h"

#include "clock.h"
#include "env.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Seconds between progress lines in a log (stderr not a terminal);
 * FD_PROGRESS_INTERVAL overrides it (seconds, > 0). */
#define LOG_INTERVAL 30.0

static double log_interval(void)
{
    double v;
    /* main refused a bad value before any work (fd_env_check) */
    return fd_env_seconds("FD_PROGRESS_INTERVAL", LOG_INTERVAL, &v) == FD_OK ? v : LOG_INTERVAL;
}

void fd_progress_format(char *buf, size_t cap, const char *what, uint64_t c, uint64_t total, double el)
{
    const double rate = el > 0 ? (double)c / el : 0;
    if (total == 0) {
        snprintf(buf, cap, "%llu %s, %.3g/s, %.1f s", (unsigned long long)c, what, rate, el);
        return;
    }
    const uint64_t done = c < total ? c : total;
    const double pct = 100.0 * (double)done / (double)total;
    if (rate > 0)
        snprintf(buf, cap, "%llu/%llu %s (%.1f%%), %.3g/s, %.1f s, ETA %.0f s", (unsigned long long)done,
                 (unsigned long long)total, what, pct, rate, el, (double)(total - done) / rate);
    else
        snprintf(buf, cap, "%llu/%llu %s (%.1f%%), %.1f s", (unsigned long long)done, (unsigned long long)total, what,
                 pct, el);
}

static void print_line(fd_progress *p)
{
    double el = fd_now() - p->t0;
    uint64_t c = atomic_load_explicit(&p->count, memory_order_relaxed);
    char line[256];
    if (!p->tty && el - p->last < p->interval) return;
    fd_progress_format(line, sizeof line, p->what, c, p->total, el);
    if (p->tty) {
        fprintf(stderr, "\r\033[K%s", line);
    } else {
        p->last = el;
        fprintf(stderr, "progress: %s\n", line);
    }
    fflush(stderr);
}

static void *loop(void *arg)
{
    fd_progress *p = arg;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        const long tick = p->tty || p->interval >= 0.5 ? 500000000L : (long)(p->interval * 1e9);
        const struct timespec ts = fd_deadline_in(tick);
        int rc = pthread_cond_timedwait(&p->cond, &p->lock, &ts);
        if (rc == ETIMEDOUT && !p->stop) print_line(p);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

void fd_progress_start(fd_progress *p, const char *what, uint64_t total, int quiet)
{
    memset(p, 0, sizeof *p);
    p->what = what;
    p->total = total;
    atomic_init(&p->count, 0);
    p->t0 = fd_now();
    if (quiet) return;
    p->tty = isatty(STDERR_FILENO);
    p->interval = log_interval();
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    /* Progress is a convenience: if the thread cannot start, run without it. */
    if (pthread_create(&p->thread, NULL, loop, p) == 0) p->active = 1;
}

void fd_progress_stop(fd_progress *p)
{
    if (!p->active) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    if (p->tty) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    p->active = 0;
}
