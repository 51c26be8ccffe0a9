/* SPDX-License-Identifier: BSD-3-Clause */
/* Wall clock and the small deterministic RNG used by generators and tests. */
#ifndef FD_CLOCK_H
#define FD_CLOCK_H

#include <math.h>
#include <stdint.h>
#include <time.h>

static inline double fd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The CLOCK_REALTIME time ns nanoseconds from now (ns < 1 s): the
 * deadline pthread_cond_timedwait takes with a default condition. */
static inline struct timespec fd_deadline_in(long ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += ns;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* splitmix64: a full-period 64-bit generator; one state word, good enough
 * for synthetic data and fully reproducible across platforms. */
typedef struct { uint64_t s; } fd_rng;

static inline uint64_t fd_rng_next(fd_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform double in [0, 1). */
static inline double fd_rng_unif(fd_rng *r) { return (double)(fd_rng_next(r) >> 11) * 0x1.0p-53; }

/* A standard normal, Box-Muller: one from two uniforms. */
static inline double fd_rng_normal(fd_rng *r)
{
    const double u = 1 - fd_rng_unif(r), v = fd_rng_unif(r);
    return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

#endif
