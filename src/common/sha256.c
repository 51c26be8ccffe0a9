#include "sha256.h"

#include "inputfile.h"

#include "par_rows.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void block(sha256_ctx *c, const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = c->h[0], b = c->h[1], cc = c->h[2], d = c->h[3];
    uint32_t e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & cc) ^ (b & cc));
        h = g; g = f; f = e; e = d + t1;
        d = cc; cc = b; b = a; a = t1 + t2;
    }
    c->h[0] += a; c->h[1] += b; c->h[2] += cc; c->h[3] += d;
    c->h[4] += e; c->h[5] += f; c->h[6] += g; c->h[7] += h;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* The SHA extensions (Intel SHA-NI, on most x86-64 CPUs since 2017): about
 * 1.5 GB/s instead of about 0.25 GB/s, which matters when every input byte
 * is hashed on its way to the parser.  Message schedule and rounds follow
 * the instruction set reference: two rounds per sha256rnds2, the schedule
 * four words at a time with sha256msg1/msg2. */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks_shani(uint32_t h[8], const uint8_t *p, size_t n)
{
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&h[0]);
    __m128i st1 = _mm_loadu_si128((const __m128i *)&h[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xB1);          /* CDAB */
    st1 = _mm_shuffle_epi32(st1, 0x1B);          /* EFGH */
    __m128i st0 = _mm_alignr_epi8(tmp, st1, 8);  /* ABEF */
    st1 = _mm_blend_epi16(st1, tmp, 0xF0);       /* CDGH */
    for (; n; n--, p += 64) {
        __m128i abef = st0, cdgh = st1, m[4], msg;
#pragma GCC unroll 16
        for (int g = 0; g < 16; g++) {
            if (g < 4) m[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), mask);
            msg = _mm_add_epi32(m[g % 4], _mm_loadu_si128((const __m128i *)&K[4 * g]));
            st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
            if (g >= 3 && g <= 14) {
                __m128i t = _mm_alignr_epi8(m[g % 4], m[(g + 3) % 4], 4);
                m[(g + 1) % 4] = _mm_sha256msg2_epu32(_mm_add_epi32(m[(g + 1) % 4], t), m[g % 4]);
            }
            msg = _mm_shuffle_epi32(msg, 0x0E);
            st0 = _mm_sha256rnds2_epu32(st0, st1, msg);
            if (g >= 1 && g <= 12) m[(g + 3) % 4] = _mm_sha256msg1_epu32(m[(g + 3) % 4], m[g % 4]);
        }
        st0 = _mm_add_epi32(st0, abef);
        st1 = _mm_add_epi32(st1, cdgh);
    }
    tmp = _mm_shuffle_epi32(st0, 0x1B);          /* FEBA */
    st1 = _mm_shuffle_epi32(st1, 0xB1);          /* DCHG */
    st0 = _mm_blend_epi16(tmp, st1, 0xF0);       /* DCBA */
    st1 = _mm_alignr_epi8(st1, tmp, 8);          /* HGFE */
    _mm_storeu_si128((__m128i *)&h[0], st0);
    _mm_storeu_si128((__m128i *)&h[4], st1);
}

/* Atomic: threads hashing at once may each find it out first, storing
 * the same value. */
static int have_shani(void)
{
    static atomic_int cached = -1;
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v < 0) {
        unsigned a, b, c, d;
        v = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 29 & 1) && __get_cpuid(1, &a, &b, &c, &d) &&
            (c >> 19 & 1) && !getenv("FD_NO_SHANI");
        atomic_store_explicit(&cached, v, memory_order_relaxed);
    }
    return v;
}
#else
static int have_shani(void) { return 0; }
static void blocks_shani(uint32_t h[8], const uint8_t *p, size_t n) { (void)h, (void)p, (void)n; }
#endif

static void blocks(sha256_ctx *c, const uint8_t *p, size_t n)
{
    if (have_shani()) blocks_shani(c->h, p, n);
    else
        for (; n; n--, p += 64) block(c, p);
}

void sha256_init(sha256_ctx *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->len = 0;
    c->nbuf = 0;
}

void sha256_update(sha256_ctx *c, const void *data, size_t n)
{
    const uint8_t *p = data;
    c->len += n;
    if (c->nbuf) {
        size_t take = 64 - c->nbuf < n ? 64 - c->nbuf : n;
        memcpy(c->buf + c->nbuf, p, take);
        c->nbuf += take; p += take; n -= take;
        if (c->nbuf == 64) { blocks(c, c->buf, 1); c->nbuf = 0; }
    }
    blocks(c, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
    memcpy(c->buf, p, n);
    c->nbuf += n;
}

static void finish_blocks(sha256_ctx *c)
{
    uint64_t bits = c->len * 8;
    uint8_t pad = 0x80;
    sha256_update(c, &pad, 1);
    pad = 0;
    while (c->nbuf != 56) sha256_update(c, &pad, 1);
    uint8_t lenbe[8];
    for (int i = 0; i < 8; i++) lenbe[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(c, lenbe, 8);
}

void sha256_final_hex(sha256_ctx *c, char hex[65])
{
    finish_blocks(c);
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", c->h[i]);
}

void sha256_final(sha256_ctx *c, uint8_t out[32])
{
    finish_blocks(c);
    for (int i = 0; i < 32; i++) out[i] = (uint8_t)(c->h[i / 4] >> (24 - 8 * (i % 4)));
}

/* The hash of a whole file, read in chunks of 1 MiB; *stop (when not
 * NULL) ends it early, unfinished. */
static fd_status hash_file(const char *path, const atomic_int *stop, char hex[65])
{
    sha256_ctx c;
    const size_t chunk = (size_t)1 << 20;
    FD_TRY(fd_input_check(path));
    unsigned char *buf = malloc(chunk);
    if (!buf) return fd_fail(FD_ERR_NOMEM, "out of memory");
    FILE *f = fopen(path, "rb");
    if (!f) {
        free(buf);
        return fd_fail(FD_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    }
    sha256_init(&c);
    size_t n;
    while ((!stop || !atomic_load_explicit(stop, memory_order_relaxed)) && (n = fread(buf, 1, chunk, f)) > 0)
        sha256_update(&c, buf, n);
    int err = ferror(f);
    fclose(f);
    free(buf);
    if (err) return fd_fail(FD_ERR_IO, "%s: read error", path);
    sha256_final_hex(&c, hex);
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
        sha256_init(&c);
        sha256_update(&c, (const uint8_t *)sj->spans[s].data + off, len < PIECE ? len : PIECE);
        sha256_final(&c, sj->digests[p]);
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
    sha256_init(&c);
    const char tag[] = "fcbo-dist sha256_spans 1";
    sha256_update(&c, tag, sizeof tag);
    update_u64(&c, (uint64_t)nspans);
    update_u64(&c, PIECE);
    for (int s = 0; s < nspans; s++) update_u64(&c, spans[s].bytes);
    sha256_update(&c, digests, first[nspans] * sizeof *digests);
    sha256_final_hex(&c, hex);
done:
    free(first);
    free(digests);
    return st;
}
