/* SPDX-License-Identifier: BSD-3-Clause */
/* Large arrays that start zero (the rank matrix, its GPU copy): fresh
 * anonymous pages, which the kernel zeroes, so no memset pass over them,
 * marked for transparent huge pages (MADV_HUGEPAGE, a hint), so that the
 * first touch costs a page fault per 2 MiB instead of per 4 KiB.  On the
 * dev VM the memset of a .npy reader's rank matrix and its page faults
 * were a fifth of reading and ranking it (perf), all on the main thread.
 * Below 2 MiB, and under AddressSanitizer (which checks heap blocks, not
 * mappings), plain calloc, realloc and free.  The caller keeps each
 * array's size in bytes. */
#ifndef FD_BIGMEM_H
#define FD_BIGMEM_H

#include <stddef.h>

/* bytes of zeros, or NULL. */
void *fd_big_zalloc(size_t bytes);
/* p (old bytes, or NULL) grown to bytes, its contents kept and the rest
 * zero; NULL on failure, p then unchanged and still owned. */
void *fd_big_grow(void *p, size_t old, size_t bytes);
void fd_big_free(void *p, size_t bytes);
/* The huge-page hint for an array malloc made (freed by free): the whole
 * 2 MiB pages inside it, when it is that large.  For arrays a reader
 * fills by pread on threads, whose 4 KiB first touches were most of the
 * read of a .npy from the page cache. */
void fd_big_hint(void *p, size_t bytes);
/* fd_big_zalloc, its pages first touched on `threads` threads
 * (par_rows): for an array a device copy or one thread's pass fills
 * next, which would otherwise take each page fault on that one thread
 * (dpc's results at 10^7 points: copies from the GPU 190 -> 22 ms). */
void *fd_big_zalloc_touched(size_t bytes, int threads);

#endif
