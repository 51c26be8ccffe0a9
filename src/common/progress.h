/* SPDX-License-Identifier: BSD-3-Clause */
/* Progress of long runs on stderr: on a terminal one line rewritten twice
 * a second; in a log (batch jobs) a line every 30 s (FD_PROGRESS_INTERVAL
 * seconds when set), so short runs print nothing.  --quiet turns it off;
 * then every call is a no-op.  With a known total a line says done/total,
 * the percentage and the time left at the rate so far; without one, the
 * rate.  The counter is read from an atomic that worker threads bump, so
 * workers never block on printing. */
#ifndef FD_PROGRESS_H
#define FD_PROGRESS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct {
    const char *what;            /* noun printed after the count, e.g. "concepts" */
    uint64_t total;              /* what the count will reach; 0: unknown */
    _Atomic uint64_t count;      /* bumped by workers */
    int active;
    int tty;                     /* stderr is a terminal */
    double last;                 /* when the last log line was printed */
    double interval;             /* seconds between log lines */
    int stop;
    double t0;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} fd_progress;

/* Starts the printer thread unless quiet.  total: what the count reaches
 * when done (an upper bound will do: bcp's sweep limit), 0 when unknown. */
void fd_progress_start(fd_progress *p, const char *what, uint64_t total, int quiet);
/* The line for count c of total after el seconds, as printed (tests). */
void fd_progress_format(char *buf, size_t cap, const char *what, uint64_t c, uint64_t total, double el);
static inline void fd_progress_add(fd_progress *p, uint64_t n)
{
    atomic_fetch_add_explicit(&p->count, n, memory_order_relaxed);
}
/* Stops the printer and clears its line. Safe to call when not started. */
void fd_progress_stop(fd_progress *p);

#endif
