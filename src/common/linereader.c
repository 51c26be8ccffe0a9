/* SPDX-License-Identifier: BSD-3-Clause */
#include "linereader.h"

#include "inputfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BLOCK (4u << 20)

fd_status fd_lines_open(fd_lines *r, const char *path)
{
    FD_TRY(fd_input_check(path));
    memset(r, 0, sizeof *r);
    r->path = path;
    r->f = fopen(path, "rb");
    if (!r->f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    /* No bigger than the file needs (small files are read often: tests,
     * the fuzzer); past that, blocks of BLOCK. */
    struct stat sb;
    r->cap = BLOCK + 1;
    if (fstat(fileno(r->f), &sb) == 0 && S_ISREG(sb.st_mode) && (uint64_t)sb.st_size < BLOCK)
        r->cap = (size_t)sb.st_size + 2;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        fclose(r->f);
        r->f = NULL;
        return fd_fail(FD_ERR_NOMEM, "%s: out of memory for the read buffer", path);
    }
    const fd_status st = sha256_init(&r->sha);
    if (st != FD_OK) fd_lines_close(r);
    return st;
}

/* Moves the unread tail to the front and appends a block; grows the buffer
 * when one line is longer than it. */
static int refill(fd_lines *r)
{
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (r->cap - r->len < (r->cap - 1) / 2 + 1) { /* less than half free: double */
        size_t ncap = r->cap * 2;
        char *nb = realloc(r->buf, ncap);
        if (!nb) {
            fd_fail(FD_ERR_NOMEM, "%s:%zu: out of memory for a line of %zu bytes", r->path, r->lineno + 1, r->len);
            return -1;
        }
        r->buf = nb;
        r->cap = ncap;
    }
    size_t got = fread(r->buf + r->len, 1, r->cap - 1 - r->len, r->f);
    if (got == 0) {
        if (ferror(r->f)) {
            fd_fail(FD_ERR_INPUT, "%s: read error: %s", r->path, strerror(errno));
            return -1;
        }
        r->eof = 1;
        return 0;
    }
    sha256_update(&r->sha, r->buf + r->len, got);
    r->len += got;
    r->bytes += got;
    return 1;
}

int fd_lines_next(fd_lines *r, char **line, size_t *n)
{
    size_t scan = r->pos;
    for (;;) {
        char *nl = scan < r->len ? memchr(r->buf + scan, '\n', r->len - scan) : NULL;
        if (nl || (r->eof && r->pos < r->len)) {
            size_t end = nl ? (size_t)(nl - r->buf) : r->len;
            size_t start = r->pos;
            r->pos = nl ? end + 1 : r->len;
            if (end > start && r->buf[end - 1] == '\r') end--;
            r->buf[end] = 0; /* the buffer always has one spare byte */
            /* A UTF-8 byte order mark (spreadsheets write one) is not
             * part of the first line. */
            if (r->lineno == 0 && end - start >= 3 && !memcmp(r->buf + start, "\xef\xbb\xbf", 3)) start += 3;
            *line = r->buf + start;
            *n = end - start;
            r->lineno++;
            return 1;
        }
        if (r->eof) return 0;
        size_t have = r->len - r->pos;
        /* Bounded: a file without line ends cannot take all memory. */
        if (have > FD_LINE_MAX) {
            fd_fail(FD_ERR_INPUT, "%s:%zu: a line longer than %u MiB: not a text file of lines", r->path,
                    r->lineno + 1, FD_LINE_MAX >> 20);
            return -1;
        }
        int rc = refill(r);
        if (rc < 0) return -1;
        scan = r->pos + have;
    }
}

fd_status fd_lines_finish(fd_lines *r, char hex[65])
{
    while (!r->eof) {
        r->pos = r->len; /* discard: only the digest is wanted */
        if (refill(r) < 0) return FD_ERR_INPUT;
    }
    return sha256_final_hex(&r->sha, hex);
}

void fd_lines_close(fd_lines *r)
{
    sha256_drop(&r->sha);
    if (r->f) fclose(r->f);
    free(r->buf);
    r->f = NULL;
    r->buf = NULL;
}
