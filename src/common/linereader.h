/* SPDX-License-Identifier: BSD-3-Clause */
/* Streaming line reader: reads a file in large blocks, hands out one line
 * at a time (without its '\n' or '\r\n') and fingerprints every byte with
 * SHA-256 on the way, so an input is read exactly once. */
#ifndef FD_LINEREADER_H
#define FD_LINEREADER_H

#include "sha256.h"
#include "status.h"

#include <stdint.h>
#include <stdio.h>

/* The longest line any text reader takes (FIMI, .cxt, CSV contexts and
 * text matrices): a file without line ends is refused once a line is this
 * long, rather than read into memory whole. */
#define FD_LINE_MAX (64u << 20)

typedef struct {
    FILE *f;
    const char *path;
    char *buf;
    size_t cap, len, pos;
    int eof;
    size_t lineno;       /* 1-based number of the line last returned */
    uint64_t bytes;      /* bytes read so far */
    sha256_ctx sha;
} fd_lines;

/* Opens path; a missing or unreadable file is FD_ERR_INPUT with the
 * system's reason. */
fd_status fd_lines_open(fd_lines *r, const char *path);
/* Next line in *line (NUL-terminated, writable until the next call) and its
 * length in *n.  Returns 1 for a line, 0 at end of file, -1 on a read error
 * (recorded with fd_fail). */
int fd_lines_next(fd_lines *r, char **line, size_t *n);
/* Reads the rest (to finish the SHA-256) and writes the hex digest. */
fd_status fd_lines_finish(fd_lines *r, char hex[65]);
void fd_lines_close(fd_lines *r);

#endif
