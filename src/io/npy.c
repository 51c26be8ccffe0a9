/* SPDX-License-Identifier: BSD-3-Clause */
/* The .npy header (see npy.h). */
#include "npy.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* The digits after the type letter of descr ('<f8' -> 8). */
static uint32_t elem_size(const char *descr)
{
    if (strlen(descr) < 3 || !strchr("<>|=", descr[0])) return 0;
    uint32_t v = 0;
    for (const char *p = descr + 2; *p; p++) {
        if (*p < '0' || *p > '9' || v > 1000) return 0;
        v = v * 10 + (uint32_t)(*p - '0');
    }
    return v;
}

fd_status npy_read_header(FILE *f, const char *path, npy_header *h)
{
    char hdr[65536];
    unsigned char pre[12];
    memset(h, 0, sizeof *h);
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
        return fd_fail(FD_ERR_INPUT, "%s: not a NumPy .npy file", path);
    size_t hlen = pre[8] | (size_t)pre[9] << 8;
    if (pre[6] >= 2) { /* versions 2 and 3: a 4-byte length */
        if (fread(pre + 10, 1, 2, f) != 2) return fd_fail(FD_ERR_INPUT, "%s: truncated header", path);
        hlen |= (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
    }
    if (hlen >= sizeof hdr || fread(hdr, 1, hlen, f) != hlen)
        return fd_fail(FD_ERR_INPUT, "%s: bad or truncated .npy header", path);
    hdr[hlen] = 0;
    if (memchr(hdr, 0, hlen)) return fd_fail(FD_ERR_INPUT, "%s: bad .npy header (a NUL byte)", path);
    const char *d = strstr(hdr, "'descr':"), *fo = strstr(hdr, "'fortran_order':"), *sh = strstr(hdr, "'shape':");
    if (!d || !fo || !sh || sscanf(d, "'descr': '%15[^']'", h->descr) != 1)
        return fd_fail(FD_ERR_INPUT, "%s: bad .npy header: %s", path, hdr);
    const char *fv = fo + strlen("'fortran_order':");
    while (*fv == ' ') fv++;
    if (!strncmp(fv, "True", 4)) h->fortran = 1;
    else if (strncmp(fv, "False", 5) != 0) return fd_fail(FD_ERR_INPUT, "%s: bad .npy header: %s", path, hdr);
    /* The shape: a tuple of decimal integers, "(3, 4)", "(6,)", "()". */
    const char *p = sh + strlen("'shape':");
    while (*p == ' ') p++;
    if (*p++ != '(') return fd_fail(FD_ERR_INPUT, "%s: bad shape in the .npy header: %s", path, hdr);
    for (;;) {
        while (*p == ' ') p++;
        if (*p == ')') break;
        if (*p < '0' || *p > '9') return fd_fail(FD_ERR_INPUT, "%s: bad shape in the .npy header: %s", path, hdr);
        uint64_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (v > (UINT64_MAX - 9) / 10)
                return fd_fail(FD_ERR_INPUT, "%s: bad .npy header: a length out of range", path);
            v = v * 10 + (uint64_t)(*p - '0');
        }
        if (h->ndim == NPY_MAX_DIMS) return fd_fail(FD_ERR_INPUT, "%s: more than %d dimensions", path, NPY_MAX_DIMS);
        h->shape[h->ndim++] = v;
        while (*p == ' ') p++;
        if (*p == ',') p++;
        else if (*p != ')') return fd_fail(FD_ERR_INPUT, "%s: bad shape in the .npy header: %s", path, hdr);
    }
    h->elem = elem_size(h->descr);
    return FD_OK;
}

uint64_t npy_bytes_held(FILE *f)
{
    struct stat sb;
    const long at = ftell(f);
    if (at < 0 || fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) return UINT64_MAX; /* unknown: no limit */
    return (uint64_t)sb.st_size > (uint64_t)at ? (uint64_t)sb.st_size - (uint64_t)at : 0;
}
