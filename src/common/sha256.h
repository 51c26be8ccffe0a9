/* SPDX-License-Identifier: BSD-3-Clause */
/* SHA-256 (FIPS 180-4, computed by OpenSSL's libcrypto), used to
 * fingerprint input files in output metadata, and the machinery around
 * it: a file's hash on a thread of its own, and the digest of large arrays
 * in memory on many threads. */
#ifndef FD_SHA256_H
#define FD_SHA256_H

#include "status.h"

#include <stddef.h>
#include <stdint.h>

/* A running digest: init makes it (FD_ERR_NOMEM when OpenSSL cannot),
 * update feeds it, a final call gives the digest and frees it, drop frees
 * one abandoned.  A failure of update is reported by the final call. */
typedef struct sha256_ctx {
    struct evp_md_ctx_st *md; /* OpenSSL's EVP_MD_CTX */
    int failed;
} sha256_ctx;

fd_status sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex[65]. */
fd_status sha256_final_hex(sha256_ctx *c, char hex[65]);
/* The 32 bytes of the digest. */
fd_status sha256_final(sha256_ctx *c, uint8_t out[32]);
void sha256_drop(sha256_ctx *c);
/* The hex digest of n bytes at data, in one call. */
fd_status sha256_hex_of(const void *data, size_t n, char hex[65]);

/* The SHA-256 of a whole file (FD_ERR_INPUT when it cannot be opened,
 * FD_ERR_IO on a read error). */
fd_status sha256_file(const char *path, char hex[65]);

/* sha256_file on a thread of its own, so that a reader parsing the same
 * file need not wait for the hash batch by batch (one thread hashes about
 * 1 GB/s, the longest part of reading a .npy on 16 cores).  The file is
 * read twice, the second time from the page cache; a file changed while
 * it is read can give a hash of other bytes than those parsed.  sha256_file_wait joins it and gives
 * its result; with hex NULL it stops it early (an error path) and gives
 * FD_OK.  Either way *job is freed and set to NULL; NULL is a no-op.  If
 * the thread cannot start, wait hashes the file itself. */
typedef struct sha256_job sha256_job;
fd_status sha256_file_start(sha256_job **job, const char *path);
fd_status sha256_file_wait(sha256_job **job, char hex[65]);

/* A file's hash as a reader hands it on: hex, or (job not NULL) still
 * being computed by sha256_file_start, so that whoever needs the hash joins
 * it then and not at the end of the read (a spearman run needs it only
 * when it commits its output: on 16 cores the hash of a 1.2 GB .npy took
 * longer than reading and ranking it).  get joins a job once (later calls
 * give the same result) and leaves the digits in hex; drop stops a job
 * still running.  Zeroed: no hash yet. */
typedef struct sha256_future {
    sha256_job *job;
    fd_status st;
    char hex[65];
} sha256_future;
fd_status sha256_future_get(sha256_future *f);
void sha256_future_drop(sha256_future *f);

/* The digest of data held in memory, hashed on `threads` threads: the
 * SHA-256 of a header (the spans' count and lengths) followed by the
 * SHA-256 of each 4 MiB piece of each span in turn.  Not the SHA-256 of the
 * bytes, but as strong a fingerprint of them, the same for any number of
 * threads; for identifying a large array quickly (spearman's ranks), not
 * for comparing with other tools. */
typedef struct {
    const void *data;
    size_t bytes;
} sha256_span;
fd_status sha256_spans_hex(const sha256_span *spans, int nspans, int threads, char hex[65]);
/* v as 8 little-endian bytes: what goes into a digest that must be the
 * same on every machine. */
void sha256_le64(uint8_t out[8], uint64_t v);

#endif
