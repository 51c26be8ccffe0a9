/* SHA-256 (FIPS 180-4), used to fingerprint input files in output metadata. */
#ifndef FD_SHA256_H
#define FD_SHA256_H

#include "status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t nbuf;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex[65]. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);

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

#endif
