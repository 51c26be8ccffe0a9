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

#endif
