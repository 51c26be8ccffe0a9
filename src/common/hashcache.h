/* SPDX-License-Identifier: BSD-3-Clause */
/* The input's SHA-256 kept between runs, keyed by what the file system
 * says of the file, so that a run on an unchanged large input does not
 * hash it again (one thread hashes about 1.1 GB/s: 0.7 s of an 800 MB
 * tensor whose read takes 0.05 s; bench/results/bcp-gpu-history.txt).
 * The digest written into a result stays the file's whole SHA-256, as
 * sha256sum gives it.
 *
 * An entry is one small file per input, FD_HASH_CACHE_DIR/sha256/DEV-INO,
 * holding the file's size, modification and change times (to the
 * nanosecond) and its digest.  It is used only when all of them equal the
 * file's now.  The change time (ctime) cannot be set by a program: any
 * write, truncation or rename of the file moves it.  So that a write in
 * the same tick of the file system's clock as the one before the hash
 * cannot go unseen, a digest is kept only when the file's change time is
 * HASHCACHE_SETTLED_S seconds before the hash ended, and the file did not
 * change during the hash.  The same idea, and the same guard, as git's
 * index and DVC's state database.
 *
 * The cache is an optimisation: any failure (no HOME, a read-only
 * directory, a malformed or foreign entry) is a miss, never an error, and
 * records no message.  A malformed entry is replaced.  FD_HASH_CACHE=off
 * turns it off; files below FD_HASH_CACHE_MIN bytes (64 MiB) are never
 * cached (their hash is hidden behind the read). */
#ifndef FD_HASHCACHE_H
#define FD_HASHCACHE_H

#include <stdint.h>
#include <sys/stat.h>

/* A file changed less than this before its hash ended is not cached. */
#define HASHCACHE_SETTLED_S 2

/* Whether the cache is on and the file (as fstat described it) is large
 * enough for it. */
int hashcache_wanted(const struct stat *st);
/* 1 and hex[65] filled when the cache holds a digest of exactly this
 * file; else 0. */
int hashcache_get(const struct stat *st, char hex[65]);
/* Keeps hex for the file that before (fstat before the hash) and after
 * (fstat after it) describe, when they agree and the file had settled;
 * silently does nothing otherwise. */
void hashcache_put(const struct stat *before, const struct stat *after, const char hex[65]);

#endif
