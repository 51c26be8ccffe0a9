/* SPDX-License-Identifier: BSD-3-Clause */
#include "bigmem.h"

#include "env.h"
#include "par_rows.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define BIG_MIN ((size_t)-1) /* every array on the checked heap */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BIG_MIN ((size_t)-1)
#endif
#endif
#ifndef BIG_MIN
#define BIG_MIN ((size_t)2 << 20)
#endif

static void *map_zero(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    /* a hint: without huge pages it still works */
    if (!fd_env_switched("FD_HUGEPAGES")) (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

void *fd_big_zalloc(size_t bytes)
{
    return bytes < BIG_MIN ? calloc(bytes ? bytes : 1, 1) : map_zero(bytes);
}

void *fd_big_grow(void *p, size_t old, size_t bytes)
{
    if (!p) return fd_big_zalloc(bytes);
    if (bytes <= old) return p;
    if (bytes < BIG_MIN) {
        char *q = realloc(p, bytes);
        if (q) memset(q + old, 0, bytes - old);
        return q;
    }
    if (old >= BIG_MIN) { /* the pages mremap adds are fresh, so zero */
        void *q = mremap(p, old, bytes, MREMAP_MAYMOVE);
        if (q == MAP_FAILED) return NULL;
        (void)madvise(q, bytes, MADV_HUGEPAGE);
        return q;
    }
    void *q = map_zero(bytes);
    if (!q) return NULL;
    memcpy(q, p, old);
    free(p);
    return q;
}

static fd_status touch_pages(void *ctx, uint64_t i0, uint64_t i1, int thread)
{
    volatile char *p = ctx;
    (void)thread;
    for (uint64_t i = i0; i < i1; i++) p[i << 12] = 0;
    return FD_OK;
}

void *fd_big_zalloc_touched(size_t bytes, int threads)
{
    void *p = fd_big_zalloc(bytes);
    if (p && bytes >> 12) (void)par_rows(threads, 0, bytes >> 12, touch_pages, p, NULL); /* a hint: a failure only slows */
    return p;
}

void fd_big_hint(void *p, size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    /* Two tests, not one: BIG_MIN is what the sanitizer builds raise to
     * "never" (their checked heap is left alone, as by fd_big_zalloc);
     * 2 x 2 MiB is the least that always holds one whole aligned huge
     * page, whatever BIG_MIN is. */
    if (!p || bytes < BIG_MIN || bytes < 2 * huge || fd_env_switched("FD_HUGEPAGES")) return;
    const uintptr_t a = ((uintptr_t)p + huge - 1) & ~(uintptr_t)(huge - 1),
                    b = ((uintptr_t)p + bytes) & ~(uintptr_t)(huge - 1);
    if (b > a) (void)madvise((void *)a, b - a, MADV_HUGEPAGE); /* a failure only slows */
}

void fd_big_free(void *p, size_t bytes)
{
    if (!p) return;
    if (bytes < BIG_MIN) free(p);
    else munmap(p, bytes);
}
