/* SPDX-License-Identifier: BSD-3-Clause */
#include "sha256.h"

#include "hashcache.h"
#include "inputfile.h"

#include "par_rows.h"

#include <openssl/evp.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The digest itself is OpenSSL's (libcrypto's EVP interface, which picks
 * the SHA extensions or AVX2 code of the CPU it runs on): it replaced 317
 * lines of our own (bench/results/ab.csv).  A context is an EVP_MD_CTX
 * made by sha256_init and freed by the final call or sha256_drop.  The
 * only failure EVP can report here is a context it could not allocate
 * (init), or one that is broken; a failed update is remembered and
 * reported by the final call, so the callers check two places. */
fd_status sha256_init(sha256_ctx *c)
{
    c->failed = 0;
    c->md = EVP_MD_CTX_new();
    if (!c->md || EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
        sha256_drop(c);
        return fd_fail(FD_ERR_NOMEM, "OpenSSL: cannot make a SHA-256 context");
    }
    return FD_OK;
}

void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
    if (c->md && n && EVP_DigestUpdate(c->md, data, n) != 1) c->failed = 1;
}

fd_status sha256_final(sha256_ctx *c, uint8_t out[32])
{
    unsigned len = 0;
    const int ok = c->md && !c->failed && EVP_DigestFinal_ex(c->md, out, &len) == 1 && len == 32;
    sha256_drop(c);
    return ok ? FD_OK : fd_fail(FD_ERR_INTERNAL, "OpenSSL: SHA-256 failed");
}

fd_status sha256_final_hex(sha256_ctx *c, char hex[65])
{
    uint8_t d[32];
    hex[0] = 0;
    FD_TRY(sha256_final(c, d));
    for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return FD_OK;
}

void sha256_drop(sha256_ctx *c)
{
    EVP_MD_CTX_free(c->md);
    c->md = NULL;
}

fd_status sha256_hex_of(const void *data, size_t n, char hex[65])
{
    sha256_ctx c;
    FD_TRY(sha256_init(&c));
    sha256_update(&c, data, n);
    return sha256_final_hex(&c, hex);
}

/* The hash of a whole file, read in chunks of 1 MiB, or the cache's
 * (hashcache.h) for a large file unchanged since it was last hashed;
 * *stop (when not NULL) ends it early, unfinished. */
static fd_status hash_file(const char *path, const atomic_int *stop, char hex[65])
{
    sha256_ctx c;
    const size_t chunk = (size_t)1 << 20;
    FD_TRY(fd_input_check(path));
    FILE *f = fopen(path, "rb");
    if (!f) return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat before, after;
    const int cached = fstat(fileno(f), &before) == 0 && hashcache_wanted(&before);
    if (cached && hashcache_get(&before, hex)) {
        fclose(f);
        return FD_OK;
    }
    unsigned char *buf = malloc(chunk);
    fd_status st = buf ? sha256_init(&c) : fd_fail(FD_ERR_NOMEM, "out of memory");
    size_t n;
    while (st == FD_OK && (!stop || !atomic_load_explicit(stop, memory_order_relaxed)) &&
           (n = fread(buf, 1, chunk, f)) > 0)
        sha256_update(&c, buf, n);
    const int err = ferror(f), stopped = stop && atomic_load(stop);
    const int same = cached && fstat(fileno(f), &after) == 0;
    fclose(f);
    free(buf);
    if (st != FD_OK) return st;
    if (err) {
        sha256_drop(&c);
        return fd_fail(FD_ERR_IO, "%s: read error", path);
    }
    FD_TRY(sha256_final_hex(&c, hex));
    if (same && !stopped) hashcache_put(&before, &after, hex);
    return FD_OK;
}

fd_status sha256_file(const char *path, char hex[65]) { return hash_file(path, NULL, hex); }

struct sha256_job {
    pthread_t thread;
    int started;
    atomic_int stop;
    char *path;
    fd_status st; /* the thread's; fd_fail records its message for every thread */
    char hex[65];
};

static void *hash_job_run(void *arg)
{
    sha256_job *j = arg;
    j->st = hash_file(j->path, &j->stop, j->hex);
    return NULL;
}

fd_status sha256_file_start(sha256_job **job, const char *path)
{
    sha256_job *j = calloc(1, sizeof *j);
    if (!j || !(j->path = strdup(path))) {
        free(j);
        return fd_fail(FD_ERR_NOMEM, "out of memory");
    }
    atomic_init(&j->stop, 0);
    j->started = pthread_create(&j->thread, NULL, hash_job_run, j) == 0;
    *job = j;
    return FD_OK;
}

fd_status sha256_file_wait(sha256_job **job, char hex[65])
{
    sha256_job *j = *job;
    if (!j) return FD_OK;
    *job = NULL;
    fd_status st = FD_OK;
    if (!hex) atomic_store(&j->stop, 1);
    if (j->started) {
        pthread_join(j->thread, NULL);
        st = j->st;
    } else if (hex) {
        st = hash_file(j->path, NULL, j->hex);
    }
    if (hex && st == FD_OK) memcpy(hex, j->hex, 65);
    if (!hex) st = FD_OK;
    free(j->path);
    free(j);
    return st;
}

fd_status sha256_future_get(sha256_future *f)
{
    if (f->job) {
        f->st = sha256_file_wait(&f->job, f->hex);
        if (f->st != FD_OK) f->hex[0] = 0;
    } else if (f->st == FD_OK && !f->hex[0]) {
        f->st = fd_fail(FD_ERR_INTERNAL, "sha256_future_get: no hash was started");
    }
    return f->st;
}

void sha256_future_drop(sha256_future *f) { sha256_file_wait(&f->job, NULL); }

/* ---------------- the digest of arrays in memory ---------------- */

#define PIECE ((size_t)4 << 20)

typedef struct {
    const sha256_span *spans;
    int nspans;
    const uint64_t *first; /* the first piece of each span, and the total after the last */
    uint8_t (*digests)[32];
} spans_job;

static fd_status hash_pieces(void *ctx, uint64_t p0, uint64_t p1, int thread)
{
    const spans_job *sj = ctx;
    (void)thread;
    int s = 0;
    for (uint64_t p = p0; p < p1; p++) {
        while (p >= sj->first[s + 1]) s++;
        const size_t off = (size_t)(p - sj->first[s]) * PIECE, len = sj->spans[s].bytes - off;
        sha256_ctx c;
        FD_TRY(sha256_init(&c));
        sha256_update(&c, (const uint8_t *)sj->spans[s].data + off, len < PIECE ? len : PIECE);
        FD_TRY(sha256_final(&c, sj->digests[p]));
    }
    return FD_OK;
}

void sha256_le64(uint8_t out[8], uint64_t v)
{
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (8 * i));
}

static void update_u64(sha256_ctx *c, uint64_t v)
{
    uint8_t b[8];
    sha256_le64(b, v);
    sha256_update(c, b, 8);
}

fd_status sha256_spans_hex(const sha256_span *spans, int nspans, int threads, char hex[65])
{
    fd_status st = FD_OK;
    uint64_t *first = NULL;
    uint8_t(*digests)[32] = NULL;
    FD_ALLOC_GOTO(first, (size_t)nspans + 1, st, done);
    for (int s = 0; s < nspans; s++) first[s + 1] = first[s] + (spans[s].bytes + PIECE - 1) / PIECE;
    FD_ALLOC_GOTO(digests, first[nspans], st, done);
    spans_job sj = {spans, nspans, first, digests};
    FD_TRY_GOTO(par_rows_chunk(threads > 0 ? threads : 1, 0, first[nspans], 1, hash_pieces, &sj, NULL), st, done);
    sha256_ctx c;
    FD_TRY_GOTO(sha256_init(&c), st, done);
    const char tag[] = "fcbo-dist sha256_spans 1";
    sha256_update(&c, tag, sizeof tag);
    update_u64(&c, (uint64_t)nspans);
    update_u64(&c, PIECE);
    for (int s = 0; s < nspans; s++) update_u64(&c, spans[s].bytes);
    sha256_update(&c, digests, first[nspans] * sizeof *digests);
    st = sha256_final_hex(&c, hex);
done:
    free(first);
    free(digests);
    return st;
}
