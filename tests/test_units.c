/* Unit tests: SHA-256 against FIPS 180-4 vectors, the bitset prefix tests
 * against naive loops, every context format written and read back, the
 * thread team (par_rows.h): every row of many passes once, on the
 * threads the team has, and a failure returned, also for the team that
 * par_rows_chunk keeps between passes (T changing, a pass inside a pass,
 * a pass after a failure); and the matrix readers
 * (.npy and text, several batches) on 1, 3 and the default number of
 * threads: every row, in order, with its values; the knobs' numbers from
 * the environment (env.h): the default when unset, the value in range,
 * a usage error naming the variable for anything else (seconds and
 * words too, and the knobs checked before any work); a device's
 * start-up left to itself (fd_warm_abandon): the job is free of it at
 * once, and the process's end (fd_warm_exit) skips exit's handlers only
 * while it still runs.
 * argv[1]: a scratch file prefix. */
#include "common/atomicfile.h"
#include "common/bigmem.h"
#include "common/bitset.h"
#include "common/clock.h"
#include "common/env.h"
#include "common/par_rows.h"
#include "common/progress.h"
#include "io/h5util.h"
#include "io/matrix_read.h"
#include "common/sha256.h"
#include "common/writeback.h"
#include "lattice/context.h"
#include "mpi/device_warm.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void sha_case(const char *msg, size_t reps, const char *want)
{
    sha256_ctx c;
    char hex[65] = "";
    CHECK(sha256_init(&c) == FD_OK, "sha256_init");
    for (size_t i = 0; i < reps; i++) sha256_update(&c, msg, strlen(msg));
    CHECK(sha256_final_hex(&c, hex) == FD_OK && !strcmp(hex, want), "sha256 of '%.20s' x %zu: %s", msg, reps, hex);
}

/* sha256_spans_hex against the digest Python's hashlib gives for the
 * same definition (tag, little-endian counts and lengths, the SHA-256 of
 * each 4 MiB piece): the same on 1 to 8 threads, and another for one
 * byte changed. */
static void test_spans(void)
{
    const size_t big = (5u << 20) + 17;
    unsigned char *b = malloc(big);
    CHECK(b != NULL, "out of memory");
    if (!b) return;
    for (size_t i = 0; i < big; i++) b[i] = (unsigned char)(i % 251);
    const sha256_span spans[3] = {{"abc", 3}, {b, big}, {NULL, 0}};
    const char *want = "c8115077fc510f05125d7a60ba9040322c8058e370fce428d3adb952efc0e13b";
    for (int t = 1; t <= 8; t += 3) {
        char hex[65] = "";
        CHECK(sha256_spans_hex(spans, 3, t, hex) == FD_OK && !strcmp(hex, want), "spans on %d threads: %s", t, hex);
    }
    b[big - 1] ^= 1;
    char hex[65] = "";
    CHECK(sha256_spans_hex(spans, 3, 2, hex) == FD_OK && strcmp(hex, want) != 0, "spans: a changed byte, same digest");
    free(b);
}

static void test_bitsets(void)
{
    fd_rng r = {7};
    for (int t = 0; t < 2000; t++) {
        fd_word a[3], b[3];
        for (int k = 0; k < 3; k++) { a[k] = fd_rng_next(&r) & fd_rng_next(&r); b[k] = a[k] | fd_rng_next(&r); }
        if (t & 1) a[fd_rng_next(&r) % 3] |= 1ull << (fd_rng_next(&r) % 64);
        uint32_t j = (uint32_t)(fd_rng_next(&r) % 192);
        int sub = 1, eq = 1;
        for (uint32_t i = 0; i < j; i++) {
            if (bs_test(a, i) && !bs_test(b, i)) sub = 0;
            if (bs_test(a, i) != bs_test(b, i)) eq = 0;
        }
        CHECK(bs_prefix_subset(a, b, j) == sub, "prefix_subset j=%u", j);
        CHECK(bs_prefix_equal(a, b, j) == eq, "prefix_equal j=%u", j);
    }
    fd_word f[2];
    bs_fill(f, 70);
    CHECK(bs_count(f, 2) == 70 && f[1] == 0x3f, "bs_fill");
    /* bs_to_list: every set bit once, ascending, for lengths that leave a
     * tail past the blocks of four words, and sparse sets (zero blocks). */
    for (int t = 0; t < 300; t++) {
        fd_word s[23];
        uint32_t got[23 * 64], w = 1 + (uint32_t)(t % 23), want = 0, ok = 1;
        for (uint32_t k = 0; k < w; k++) {
            s[k] = fd_rng_next(&r);
            for (int d = 0; d < t % 5; d++) s[k] &= fd_rng_next(&r);
            if (fd_rng_next(&r) % 3 == 0) s[k] = 0;
        }
        const uint32_t n = bs_to_list(s, w, got);
        BS_FOREACH(i, s, w, { if (want >= n || got[want] != i) ok = 0; want++; });
        CHECK(ok && n == want, "bs_to_list: %u words, %u bits, got %u", w, want, n);
    }
}

static int same_context(const fca_context *x, const fca_context *y, int names)
{
    if (x->n_obj != y->n_obj || x->n_attr != y->n_attr) return 0;
    for (uint32_t o = 0; o <= x->n_obj; o++)
        if (x->row_ptr[o] != y->row_ptr[o]) return 0;
    for (uint64_t k = 0; k < x->row_ptr[x->n_obj]; k++)
        if (x->row_idx[k] != y->row_idx[k]) return 0;
    for (uint32_t a = 0; a < x->n_attr; a++) {
        if (x->attr_label[a] != y->attr_label[a]) return 0;
        if (names && strcmp(x->attr_names[a], y->attr_names[a])) return 0;
    }
    return 1;
}

static void test_round_trips(const char *prefix)
{
    fd_rng r = {11};
    static const struct { const char *ext; ctx_format f; int names; } fmts[] = {
        {"cxt", CTX_FMT_CXT, 1}, {"dat", CTX_FMT_FIMI, 0}, {"csv", CTX_FMT_CSV, 1}, {"tsv", CTX_FMT_TSV, 1}};
    for (int rep = 0; rep < 20; rep++) {
        uint32_t n = 1 + (uint32_t)(fd_rng_next(&r) % 60), m = 1 + (uint32_t)(fd_rng_next(&r) % 90);
        fca_context *c = NULL;
        CHECK(fca_context_create(&c, n, m, (uint64_t)n * m) == FD_OK, "create");
        uint64_t nnz = 0;
        for (uint32_t o = 0; o < n; o++) {
            /* Object 0 has every attribute, so that FIMI (which only knows
             * attributes that occur) round-trips exactly. */
            for (uint32_t a = 0; a < m; a++)
                if (o == 0 || fd_rng_unif(&r) < 0.3) c->row_idx[nnz++] = a;
            c->row_ptr[o + 1] = nnz;
        }
        for (uint32_t a = 0; a < m; a++) {
            char buf[32];
            snprintf(buf, sizeof buf, "attr %u", a);
            c->attr_names[a] = strdup(buf);
        }
        for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
            char path[512];
            snprintf(path, sizeof path, "%s.%s", prefix, fmts[f].ext);
            CHECK(fca_context_write(c, path, fmts[f].f) == FD_OK, "write %s: %s", path, fd_errmsg());
            fca_context *back = NULL;
            fd_status st = fca_context_read(&back, path, CTX_FMT_AUTO);
            CHECK(st == FD_OK, "read %s: %s", path, fd_errmsg());
            if (st == FD_OK) {
                CHECK(same_context(c, back, fmts[f].names), "%s round trip, %u x %u", fmts[f].ext, n, m);
                CHECK(strlen(back->sha256) == 64, "sha256 recorded");
            }
            fca_context_destroy(&back);
            unlink(path);
        }
        fca_context_destroy(&c);
    }
}

typedef struct {
    atomic_int *seen; /* times each row was done */
    atomic_int used[8]; /* rows each thread did */
    uint64_t fail_at; /* a row that fails, or UINT64_MAX */
} team_pass;

static fd_status team_rows(void *ctx, uint64_t i0, uint64_t i1, int thread)
{
    team_pass *p = ctx;
    for (uint64_t i = i0; i < i1; i++) {
        if (i == p->fail_at) return fd_fail(FD_ERR_INTERNAL, "row %llu fails", (unsigned long long)i);
        atomic_fetch_add(&p->seen[i], 1);
        atomic_fetch_add(&p->used[thread], 1);
        if (i % 97 == 0) usleep(50); /* uneven rows, so that the others take more */
    }
    return FD_OK;
}

static void test_team(void)
{
    par_team *tm = NULL;
    CHECK(par_team_create(&tm, 4) == FD_OK && tm && par_team_size(tm) == 4, "a team of 4");
    if (!tm) return;
    enum { N = 5000 };
    static atomic_int seen[N];
    int bad = 0, helped = 0;
    for (int pass = 0; pass < 300; pass++) {
        const uint64_t i0 = (uint64_t)(pass % 7), i1 = N - (uint64_t)(pass % 13);
        team_pass p = {seen, {0}, UINT64_MAX};
        for (int i = 0; i < N; i++) atomic_store(&seen[i], 0);
        const uint64_t chunk = 1 + (uint64_t)(pass % 5) * 16;
        if (pass % 2) { /* in two steps, the caller busy between them, as a reader is */
            par_team_start(tm, i0, i1, chunk, team_rows, &p);
            usleep(pass % 4 == 1 ? 0 : 300);
            bad += par_team_finish(tm) != FD_OK;
        } else {
            bad += par_team_rows(tm, i0, i1, chunk, team_rows, &p) != FD_OK;
        }
        for (uint64_t i = 0; i < N; i++) bad += atomic_load(&seen[i]) != (i >= i0 && i < i1);
        int threads = 0;
        for (int t = 0; t < 8; t++) threads += atomic_load(&p.used[t]) > 0;
        helped += threads > 1;
    }
    CHECK(bad == 0, "team passes: %d rows not done exactly once, or a pass failed", bad);
    CHECK(helped > 0, "team passes: no pass ran on more than the caller");
    team_pass p = {seen, {0}, 2500};
    CHECK(par_team_rows(tm, 0, N, 16, team_rows, &p) != FD_OK, "a failing row: the pass succeeded");
    fd_errclear();
    team_pass q = {seen, {0}, 4000};
    par_team_start(tm, 0, N, 16, team_rows, &q);
    CHECK(par_team_finish(tm) != FD_OK, "a failing row, in two steps: the pass succeeded");
    fd_errclear();
    par_team_destroy(&tm);
    CHECK(tm == NULL, "the team destroyed");
    /* a team of one: start leaves the whole pass to finish, on the caller */
    CHECK(par_team_create(&tm, 1) == FD_OK && tm && par_team_size(tm) == 1, "a team of 1");
    if (!tm) return;
    team_pass one = {seen, {0}, UINT64_MAX};
    for (int i = 0; i < N; i++) atomic_store(&seen[i], 0);
    par_team_start(tm, 0, N, 7, team_rows, &one);
    CHECK(atomic_load(&seen[0]) == 0, "a team of 1: start did rows");
    int once = par_team_finish(tm) == FD_OK && atomic_load(&one.used[0]) == N;
    for (int i = 0; i < N; i++) once &= atomic_load(&seen[i]) == 1;
    CHECK(once, "a team of 1: finish did not do every row once, on the caller");
    par_team_destroy(&tm);
}

/* par_rows_chunk's passes on the team kept between them: every row once,
 * with T changing between passes (the team made again), a pass inside a
 * pass's rows (which gets a team of its own), and a failing row. */
typedef struct {
    team_pass outer;
    int inner_bad;
} nested_pass;

static fd_status nested_rows(void *ctx, uint64_t i0, uint64_t i1, int thread)
{
    nested_pass *np = ctx;
    if (i0 == 0) {
        enum { M = 300 };
        atomic_int seen[M];
        for (int i = 0; i < M; i++) atomic_init(&seen[i], 0);
        team_pass in = {seen, {0}, UINT64_MAX};
        if (par_rows_chunk(2, 0, M, 7, team_rows, &in, NULL) != FD_OK) np->inner_bad++;
        for (int i = 0; i < M; i++) np->inner_bad += atomic_load(&seen[i]) != 1;
    }
    return team_rows(&np->outer, i0, i1, thread);
}

static void test_kept_team(void)
{
    enum { N = 3000 };
    static atomic_int seen[N];
    int bad = 0;
    const int Ts[] = {3, 3, 2, 1, 4, 4, 3};
    for (int pass = 0; pass < 70; pass++) {
        const int T = Ts[pass % 7];
        team_pass p = {seen, {0}, UINT64_MAX};
        for (int i = 0; i < N; i++) atomic_store(&seen[i], 0);
        bad += par_rows_chunk(T, 5, N, 1 + (uint64_t)pass % 40, team_rows, &p, NULL) != FD_OK;
        for (uint64_t i = 0; i < N; i++) bad += atomic_load(&seen[i]) != (i >= 5);
        for (int t = T; t < 8; t++) bad += atomic_load(&p.used[t]) != 0; /* thread numbers below T */
    }
    CHECK(bad == 0, "kept team: %d rows not done exactly once, a thread number >= T, or a pass failed", bad);
    nested_pass np = {{seen, {0}, UINT64_MAX}, 0};
    for (int i = 0; i < N; i++) atomic_store(&seen[i], 0);
    CHECK(par_rows_chunk(3, 0, N, 64, nested_rows, &np, NULL) == FD_OK && np.inner_bad == 0,
          "a pass inside a pass: %d bad inner rows", np.inner_bad);
    bad = 0;
    for (uint64_t i = 0; i < N; i++) bad += atomic_load(&seen[i]) != 1;
    CHECK(bad == 0, "a pass inside a pass: %d outer rows not done exactly once", bad);
    team_pass f = {seen, {0}, 1234};
    CHECK(par_rows_chunk(3, 0, N, 16, team_rows, &f, NULL) == FD_ERR_INTERNAL, "kept team: a failing row");
    fd_errclear();
    team_pass again = {seen, {0}, UINT64_MAX};
    for (int i = 0; i < N; i++) atomic_store(&seen[i], 0);
    CHECK(par_rows_chunk(3, 0, N, 16, team_rows, &again, NULL) == FD_OK, "kept team: a pass after a failure");
    bad = 0;
    for (uint64_t i = 0; i < N; i++) bad += atomic_load(&seen[i]) != 1;
    CHECK(bad == 0, "kept team after a failure: %d rows not done exactly once", bad);
}

/* A variable's value before a case sets it, and putting it back after. */
static char *env_keep(const char *name)
{
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

static void env_put_back(const char *name, char *keep)
{
    if (keep) setenv(name, keep, 1);
    else unsetenv(name);
    free(keep);
}

static void env_case(const char *v, uint64_t lo, uint64_t hi, int ok, uint64_t want)
{
    uint64_t got = 12345;
    if (v) setenv("FD_TEST_KNOB", v, 1);
    else unsetenv("FD_TEST_KNOB");
    const fd_status st = fd_env_count("FD_TEST_KNOB", lo, hi, 77, "things", &got);
    if (ok) {
        CHECK(st == FD_OK && got == want, "FD_TEST_KNOB=%s in [%llu, %llu]: status %d, %llu (want %llu)",
              v ? v : "(unset)", (unsigned long long)lo, (unsigned long long)hi, (int)st, (unsigned long long)got,
              (unsigned long long)want);
    } else {
        CHECK(st == FD_ERR_USAGE && strstr(fd_errmsg(), "FD_TEST_KNOB=") && strstr(fd_errmsg(), "things"),
              "FD_TEST_KNOB=%s in [%llu, %llu]: status %d, message '%s'", v, (unsigned long long)lo,
              (unsigned long long)hi, (int)st, fd_errmsg());
        fd_errclear();
    }
}

static void test_env(void)
{
    env_case(NULL, 1, 10, 1, 77);
    env_case("7", 1, 10, 1, 7);
    env_case("1", 1, 10, 1, 1);
    env_case("10", 1, 10, 1, 10);
    env_case("0", 0, UINT64_MAX, 1, 0);
    env_case("18446744073709551615", 0, UINT64_MAX, 1, UINT64_MAX);
    const char *bad[] = {"", "x", "0", "11", "-1", " 5", "5 ", "5x", "+5", "0x5", "99999999999999999999"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) env_case(bad[k], 1, 10, 0, 0);
    env_case("18446744073709551616", 0, UINT64_MAX, 0, 0);
    env_case("-0", 0, UINT64_MAX, 0, 0);

    /* seconds: positive and finite, written as a plain decimal number */
    static const struct {
        const char *v;
        double want; /* 0: refused */
    } secs[] = {{"0.1", 0.1}, {"2", 2}, {".5", 0.5}, {"1e-3", 1e-3}, {"30.", 30}, {"0", 0}, {"0.0", 0}, {"-1", 0},
                {"", 0},     {"x", 0}, {" 1", 0}, {"1 ", 0},     {"1s", 0},      {"inf", 0}, {"nan", 0}, {"0x10", 0},
                {"1e999", 0}, {"+1", 0}};
    for (size_t k = 0; k < sizeof secs / sizeof *secs; k++) {
        double got = -1;
        setenv("FD_TEST_KNOB", secs[k].v, 1);
        const fd_status st = fd_env_seconds("FD_TEST_KNOB", 7.5, &got);
        if (secs[k].want > 0)
            CHECK(st == FD_OK && got == secs[k].want, "FD_TEST_KNOB=%s as seconds: status %d, %g", secs[k].v, (int)st,
                  got);
        else
            CHECK(st == FD_ERR_USAGE && strstr(fd_errmsg(), "FD_TEST_KNOB=") && strstr(fd_errmsg(), "seconds"),
                  "FD_TEST_KNOB=%s as seconds: status %d, message '%s'", secs[k].v, (int)st, fd_errmsg());
        fd_errclear();
    }
    double sec = -1;
    unsetenv("FD_TEST_KNOB");
    CHECK(fd_env_seconds("FD_TEST_KNOB", 7.5, &sec) == FD_OK && sec == 7.5, "unset seconds: %g", sec);

    /* words: exactly one of them */
    static const char *const words[] = {"rows", "columns", "auto", NULL};
    int w = -1;
    CHECK(fd_env_word("FD_TEST_KNOB", words, 2, &w) == FD_OK && w == 2, "unset word: %d", w);
    setenv("FD_TEST_KNOB", "columns", 1);
    CHECK(fd_env_word("FD_TEST_KNOB", words, 2, &w) == FD_OK && w == 1, "FD_TEST_KNOB=columns: %d", w);
    const char *badw[] = {"", "Rows", "row", "rows ", "autos"};
    for (size_t k = 0; k < sizeof badw / sizeof *badw; k++) {
        setenv("FD_TEST_KNOB", badw[k], 1);
        const fd_status st = fd_env_word("FD_TEST_KNOB", words, 2, &w);
        CHECK(st == FD_ERR_USAGE && strstr(fd_errmsg(), "expected rows, columns or auto"),
              "FD_TEST_KNOB=%s as a word: status %d, message '%s'", badw[k], (int)st, fd_errmsg());
        fd_errclear();
    }
    unsetenv("FD_TEST_KNOB");

    /* the knobs checked before any work: every switch of env.c's table,
     * each read back at both its words and refused at any other */
    CHECK(fd_env_check() == FD_OK, "fd_env_check with nothing set: '%s'", fd_errmsg());
    CHECK(fd_env_switches() >= 13 && !fd_env_switch(fd_env_switches(), NULL), "the table of switches: %zu",
          fd_env_switches());
    for (size_t k = 0; k < fd_env_switches(); k++) {
        const char *const *wd = NULL;
        const char *name = fd_env_switch(k, &wd);
        CHECK(name && !strncmp(name, "FD_", 3) && wd && wd[0] && wd[1], "switch %zu: no name or fewer than two words", k);
        if (!name || !wd || !wd[0] || !wd[1]) continue;
        char *keep = env_keep(name);
        unsetenv(name);
        CHECK(!fd_env_switched(name), "%s unset reads as switched", name);
        setenv(name, wd[1], 1);
        CHECK(fd_env_switched(name), "%s=%s reads as not switched", name, wd[1]);
        setenv(name, wd[0], 1);
        CHECK(!fd_env_switched(name), "%s=%s reads as switched", name, wd[0]);
        char bad[64];
        snprintf(bad, sizeof bad, "%s ", wd[1]); /* near a word, not one */
        setenv(name, bad, 1);
        const fd_status st = fd_env_check();
        CHECK(st == FD_ERR_USAGE && strstr(fd_errmsg(), name) && strstr(fd_errmsg(), wd[1]),
              "fd_env_check with %s='%s': status %d, '%s'", name, bad, (int)st, fd_errmsg());
        fd_errclear();
        env_put_back(name, keep);
    }
    /* the numbers it checks too */
    static const char *const knobs[][2] = {{"FD_PROGRESS_INTERVAL", "0"}, {"FD_HASH_CACHE_MIN", "-1"}};
    for (size_t k = 0; k < sizeof knobs / sizeof *knobs; k++) {
        char *keep = env_keep(knobs[k][0]);
        setenv(knobs[k][0], knobs[k][1], 1);
        const fd_status st = fd_env_check();
        CHECK(st == FD_ERR_USAGE && strstr(fd_errmsg(), knobs[k][0]), "fd_env_check with %s=%s: status %d, '%s'",
              knobs[k][0], knobs[k][1], (int)st, fd_errmsg());
        fd_errclear();
        env_put_back(knobs[k][0], keep);
    }
    CHECK(!fd_env_switched("FD_NOT_A_SWITCH"), "a name not in the table reads as switched");
}

/* A sink that checks each row as it comes: row r is (r, 2 r + 1, r mod 7)
 * in its first columns. */
typedef struct {
    uint32_t n;
    uint64_t rows, bad;
    char sha[65];
    int running; /* the reader handed over a hash still being computed */
} row_check;

static size_t rc_bytes(uint32_t n) { return n * sizeof(double); }
static void rc_transform(const double *x, const uint64_t *ints, uint32_t n, void *out, double *scratch)
{
    (void)scratch;
    for (uint32_t k = 0; k < n; k++) ((double *)out)[k] = x ? x[k] : (double)ints[k];
}
static fd_status rc_begin(void *ctx, uint32_t n, uint64_t hint)
{
    (void)hint;
    ((row_check *)ctx)->n = n;
    return FD_OK;
}
static fd_status rc_push(void *ctx, const void *row, uint64_t input_row)
{
    row_check *c = ctx;
    const double *v = row, r = (double)c->rows;
    c->bad += input_row != c->rows || v[0] != r || v[1] != 2 * r + 1 || (c->n > 2 && v[2] != (double)(c->rows % 7));
    c->rows++;
    return FD_OK;
}
static fd_status rc_drop(void *ctx)
{
    ((row_check *)ctx)->bad++;
    return FD_OK;
}
static fd_status rc_finish_any(void *ctx, sha256_future *sha)
{
    (void)ctx;
    return sha256_future_get(sha);
}
static fd_status rc_finish(void *ctx, sha256_future *sha)
{
    ((row_check *)ctx)->running = sha->job != NULL;
    FD_TRY(sha256_future_get(sha));
    memcpy(((row_check *)ctx)->sha, sha->hex, 65);
    return FD_OK;
}

/* A sink that takes rows by place: each slot's row kept, and how often it
 * came (once, from whichever worker). */
typedef struct {
    uint32_t n;
    uint64_t rows, pushed, dropped;
    double *v;
    atomic_int *times;
} place_check;
static fd_status pc_drop(void *ctx)
{
    ((place_check *)ctx)->dropped++;
    return FD_OK;
}
static fd_status pc_begin(void *ctx, uint32_t n, uint64_t hint)
{
    (void)hint;
    ((place_check *)ctx)->n = n;
    return FD_OK;
}
static fd_status pc_place_begin(void *ctx, uint64_t rows)
{
    place_check *c = ctx;
    c->rows = rows;
    c->v = calloc(rows * c->n, sizeof *c->v);
    c->times = calloc(rows, sizeof *c->times);
    return c->v && c->times ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
}
static void pc_place(void *ctx, const void *row, uint64_t slot)
{
    place_check *c = ctx;
    memcpy(c->v + slot * c->n, row, c->n * sizeof *c->v);
    atomic_fetch_add(&c->times[slot], 1);
}
static fd_status pc_push(void *ctx, const void *row, uint64_t input_row)
{
    (void)row, (void)input_row;
    ((place_check *)ctx)->pushed++;
    return FD_OK;
}

/* rows of (r, 2 r + 1), NaN at row nan_row (none if past the end), as a .npy */
static void write_pairs_npy(const char *path, int rows, int nan_row)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f) return;
    char head[128];
    int hl = snprintf(head, sizeof head, "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, 2), }", rows);
    while ((10 + hl + 1) % 64) head[hl++] = ' ';
    head[hl++] = '\n';
    const unsigned char magic[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 255), (unsigned char)(hl >> 8)};
    fwrite(magic, 1, 10, f);
    fwrite(head, 1, (size_t)hl, f);
    for (int r = 0; r < rows; r++) {
        const double v[2] = {r, r == nan_row ? NAN : 2.0 * r + 1};
        fwrite(v, sizeof v, 1, f);
    }
    fclose(f);
}

/* The binary readers with a placing sink: every row at its slot exactly
 * once, none pushed, on any number of threads; a NaN row still refused by
 * its number; with drop_nan, rows pushed in order instead. */
static void test_placing(const char *npy, int rows)
{
    const int threads[3] = {1, 3, 0};
    for (int k = 0; k < 3; k++) {
        place_check c = {0};
        const fd_matrix_sink sink = {&c, rc_bytes, rc_transform, pc_begin, pc_push, pc_drop, rc_finish_any, NULL,
                                     threads[k], pc_place_begin, pc_place};
        const fd_status st = fd_matrix_read(npy, 0, &sink);
        uint64_t wrong = 0;
        for (uint64_t r = 0; st == FD_OK && r < c.rows; r++)
            wrong += atomic_load(&c.times[r]) != 1 || c.v[2 * r] != (double)r || c.v[2 * r + 1] != 2.0 * r + 1;
        CHECK(st == FD_OK && c.rows == (uint64_t)rows && c.pushed == 0 && c.dropped == 0 && wrong == 0,
              "placing on %d threads: %s, %llu rows, %llu pushed, %llu wrong", threads[k], fd_errmsg(),
              (unsigned long long)c.rows, (unsigned long long)c.pushed, (unsigned long long)wrong);
        free(c.v);
        free(c.times);
    }
    char nan[600];
    snprintf(nan, sizeof nan, "%s.nan.npy", npy);
    write_pairs_npy(nan, rows, rows - 5);
    place_check c = {0};
    const fd_matrix_sink sink = {&c, rc_bytes, rc_transform, pc_begin, pc_push, pc_drop, rc_finish_any, NULL, 3,
                                 pc_place_begin, pc_place};
    char want[64];
    snprintf(want, sizeof want, "row %d, column 2 is NaN", rows - 5);
    CHECK(fd_matrix_read(nan, 0, &sink) == FD_ERR_INPUT && strstr(fd_errmsg(), want), "placing, a NaN row: '%s'",
          fd_errmsg());
    fd_errclear();
    free(c.v);
    free(c.times);
    place_check d = {0};
    const fd_matrix_sink dsink = {&d, rc_bytes, rc_transform, pc_begin, pc_push, pc_drop, rc_finish_any, NULL, 3,
                                  pc_place_begin, pc_place};
    CHECK(fd_matrix_read(nan, 1, &dsink) == FD_OK && !d.times && d.pushed == (uint64_t)rows - 1 && d.dropped == 1,
          "placing with drop_nan: %llu pushed, %llu dropped", (unsigned long long)d.pushed,
          (unsigned long long)d.dropped);
    remove(nan);
}

static void test_readers(const char *prefix)
{
    enum { NPY_ROWS = 700000, TXT_ROWS = 400000 }; /* 11 MB and 6 MB: several batches and chunks */
    char npy[512], txt[512];
    snprintf(npy, sizeof npy, "%s.rows.npy", prefix);
    snprintf(txt, sizeof txt, "%s.rows.txt", prefix);
    write_pairs_npy(npy, NPY_ROWS, -1);
    FILE *f = fopen(txt, "w");
    CHECK(f != NULL, "cannot write %s", txt);
    if (!f) return;
    for (int r = 0; r < TXT_ROWS; r++) fprintf(f, "%d %d %d\n", r, 2 * r + 1, r % 7);
    fclose(f);
    /* The readers' hash is the whole file's (the .npy's on a thread of
     * its own, beside the parsing). */
    char want[65] = "", want_txt[65] = "";
    CHECK(sha256_file(npy, want) == FD_OK && sha256_file(txt, want_txt) == FD_OK, "sha256_file");
    const int threads[3] = {1, 3, 0};
    for (int k = 0; k < 3; k++) {
        row_check c = {0, 0, 0, "", 0};
        const fd_matrix_sink sink = {&c, rc_bytes, rc_transform, rc_begin, rc_push, rc_drop, rc_finish, NULL, threads[k]};
        CHECK(fd_matrix_read(npy, 0, &sink) == FD_OK && c.rows == NPY_ROWS && c.bad == 0,
              ".npy on %d threads: %llu rows, %llu out of place", threads[k], (unsigned long long)c.rows,
              (unsigned long long)c.bad);
        CHECK(!strcmp(c.sha, want), ".npy on %d threads: hash %s, the file's %s", threads[k], c.sha, want);
        /* not waited for by the reader: the sink joins it when it needs it */
        CHECK(c.running, ".npy on %d threads: the reader waited for the hash", threads[k]);
        row_check d = {0, 0, 0, "", 0};
        const fd_matrix_sink tsink = {&d, rc_bytes, rc_transform, rc_begin, rc_push, rc_drop, rc_finish, NULL, threads[k]};
        CHECK(fd_matrix_read(txt, 0, &tsink) == FD_OK && d.rows == TXT_ROWS && d.bad == 0,
              "text on %d threads: %llu rows, %llu out of place", threads[k], (unsigned long long)d.rows,
              (unsigned long long)d.bad);
        CHECK(!strcmp(d.sha, want_txt), "text on %d threads: hash %s, the file's %s", threads[k], d.sha, want_txt);
    }
    CHECK(fd_matrix_threads(1) == 1 && fd_matrix_threads(3) == 3 && fd_matrix_threads(64) == FD_MATRIX_MAX_THREADS &&
              fd_matrix_threads(0) >= 1,
          "fd_matrix_threads: %d %d %d %d", fd_matrix_threads(1), fd_matrix_threads(3), fd_matrix_threads(64),
          fd_matrix_threads(0));
    /* The hash on its own thread: the same digest; stopped early, no
     * error; a file that cannot be opened, the error at the wait. */
    sha256_job *job = NULL;
    char hex[65] = "";
    CHECK(sha256_file_start(&job, npy) == FD_OK && sha256_file_wait(&job, hex) == FD_OK && !strcmp(hex, want) && !job,
          "sha256_file_start/wait: %s, want %s", hex, want);
    CHECK(sha256_file_start(&job, npy) == FD_OK && sha256_file_wait(&job, NULL) == FD_OK && !job, "a stopped hash");
    char missing[600];
    snprintf(missing, sizeof missing, "%s.missing", npy);
    CHECK(sha256_file_start(&job, missing) == FD_OK && sha256_file_wait(&job, hex) == FD_ERR_INPUT,
          "a missing file's hash fails at the wait");
    fd_errclear();
    CHECK(sha256_file_wait(&job, hex) == FD_OK, "waiting on no hash");
    test_placing(npy, NPY_ROWS);
    /* A future: joined once, the same answer after; a failed hash stays
     * failed; one with no hash at all is an internal error, not a hash. */
    sha256_future fut = {NULL, FD_OK, ""};
    CHECK(sha256_file_start(&fut.job, npy) == FD_OK && sha256_future_get(&fut) == FD_OK && !fut.job &&
              !strcmp(fut.hex, want) && sha256_future_get(&fut) == FD_OK && !strcmp(fut.hex, want),
          "sha256_future_get: %s, want %s", fut.hex, want);
    sha256_future bad = {NULL, FD_OK, ""};
    CHECK(sha256_file_start(&bad.job, missing) == FD_OK && sha256_future_get(&bad) == FD_ERR_INPUT &&
              sha256_future_get(&bad) == FD_ERR_INPUT && !bad.hex[0],
          "a failed future");
    fd_errclear();
    sha256_future none = {NULL, FD_OK, ""};
    CHECK(sha256_future_get(&none) == FD_ERR_INTERNAL, "a future with no hash");
    fd_errclear();
    CHECK(sha256_file_start(&fut.job, npy) == FD_OK, "a future to drop");
    sha256_future_drop(&fut);
    CHECK(!fut.job, "sha256_future_drop");
    remove(npy);
    remove(txt);
}

/* Large zeroed arrays: zero when made, contents kept and the new part zero
 * when grown, across the 2 MiB switch from the heap to mappings and
 * within each (ASan builds stay on the heap). */
static void test_bigmem(void)
{
    const size_t sizes[] = {100, 1 << 20, (size_t)3 << 20, (size_t)9 << 20};
    unsigned char *p = fd_big_zalloc(sizes[0]);
    size_t have = sizes[0], bad = 0;
    CHECK(p != NULL, "fd_big_zalloc");
    if (!p) return;
    for (size_t i = 0; i < have; i++) bad += p[i] != 0;
    for (int k = 1; k < 4; k++) {
        for (size_t i = 0; i < have; i++) p[i] = (unsigned char)(i * 7 + 1);
        unsigned char *q = fd_big_grow(p, have, sizes[k]);
        CHECK(q != NULL, "fd_big_grow to %zu", sizes[k]);
        if (!q) break;
        p = q;
        for (size_t i = 0; i < have; i++) bad += p[i] != (unsigned char)(i * 7 + 1);
        for (size_t i = have; i < sizes[k]; i++) bad += p[i] != 0;
        have = sizes[k];
    }
    CHECK(bad == 0, "fd_big_grow: %zu bytes wrong", bad);
    CHECK(fd_big_grow(p, have, have / 2) == p, "fd_big_grow to less is a no-op");
    fd_big_free(p, have);
    fd_big_free(NULL, 0);
}

/* Progress lines: done/total, the percentage and the time left at the
 * rate so far; the count capped at the total (a bound, for bcp's sweeps);
 * the rate alone without a total. */
static void test_progress(void)
{
    char b[256];
    fd_progress_format(b, sizeof b, "pairs", 250, 1000, 5.0);
    CHECK(!strcmp(b, "250/1000 pairs (25.0%), 50/s, 5.0 s, ETA 15 s"), "progress with a total: '%s'", b);
    fd_progress_format(b, sizeof b, "sweeps", 40, 30, 2.0);
    CHECK(!strcmp(b, "30/30 sweeps (100.0%), 20/s, 2.0 s, ETA 0 s"), "progress past the total: '%s'", b);
    fd_progress_format(b, sizeof b, "concepts", 1234, 0, 2.0);
    CHECK(!strcmp(b, "1234 concepts, 617/s, 2.0 s"), "progress without a total: '%s'", b);
    fd_progress_format(b, sizeof b, "points", 0, 10, 0.0);
    CHECK(!strcmp(b, "0/10 points (0.0%), 0.0 s"), "progress at the start: '%s'", b);
}

/* HDF5's Fletcher-32 as H5checksum.c states it: one big-endian 16-bit
 * word at a time, both sums folded every 360 words. */
static uint32_t fletcher_ref(const uint8_t *d, size_t len)
{
    uint32_t s1 = 0, s2 = 0;
    for (size_t w = 0; w < len / 2; w++) {
        s1 += (uint32_t)d[2 * w] << 8 | d[2 * w + 1];
        s2 += s1;
        if ((w + 1) % 360 == 0 || w + 1 == len / 2) {
            s1 = (s1 & 0xffff) + (s1 >> 16);
            s2 = (s2 & 0xffff) + (s2 >> 16);
        }
    }
    if (len % 2) {
        s1 += (uint32_t)d[len - 1] << 8;
        s2 += s1;
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
    return s2 << 16 | s1;
}

/* h5u_fletcher32 against the word-at-a-time definition (all-0xff data
 * is the sums' largest case), and h5u_write_1d's own chunks against
 * HDF5's filter (FD_H5_DIRECT=off): the same bytes on disk, chunk by
 * chunk with their checksums, and HDF5 reads the data back, verifying
 * them, for partial last chunks, one chunk, and one-byte elements of
 * odd length. */
static void test_fletcher(const char *prefix)
{
    fd_rng rng = {20261206};
    const size_t lens[] = {1, 2, 3, 719, 720, 721, 1440, 4097, 100001};
    uint8_t *buf = malloc(100001);
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (int fill = 0; fill < 2; fill++) {
            for (size_t i = 0; i < lens[li]; i++) buf[i] = fill ? 0xff : (uint8_t)fd_rng_next(&rng);
            CHECK(h5u_fletcher32(buf, lens[li]) == fletcher_ref(buf, lens[li]), "fletcher32 of %zu %s bytes",
                  lens[li], fill ? "0xff" : "random");
        }
    free(buf);
    char path[4096];
    snprintf(path, sizeof path, "%s.chunks.h5", prefix);
    const uint64_t ns[] = {1, 5, (1u << 18) - 1, 1u << 18, (1u << 18) + 3, 3 * (1u << 18) + 7};
    const hid_t types[] = {H5T_NATIVE_DOUBLE, H5T_NATIVE_INT32, H5T_NATIVE_UINT8};
    for (size_t ti = 0; ti < 3; ti++)
        for (size_t ni = 0; ni < sizeof ns / sizeof *ns; ni++) {
            const uint64_t n = ns[ni];
            const size_t elem = H5Tget_size(types[ti]);
            uint8_t *v = malloc(n * elem), *back = malloc(n * elem);
            for (size_t i = 0; i < n * elem; i++) v[i] = (uint8_t)fd_rng_next(&rng);
            hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
            CHECK(f >= 0, "create %s", path);
            CHECK(h5u_write_1d(f, "direct", types[ti], types[ti], v, n) == FD_OK, "direct write");
            setenv("FD_H5_DIRECT", "off", 1);
            CHECK(h5u_write_1d(f, "filter", types[ti], types[ti], v, n) == FD_OK, "filter write");
            unsetenv("FD_H5_DIRECT");
            H5Fclose(f);
            f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
            hid_t a = H5Dopen2(f, "direct", H5P_DEFAULT), b = H5Dopen2(f, "filter", H5P_DEFAULT);
            const hsize_t chunk = n < (1u << 18) ? n : (1u << 18);
            int same = 1;
            for (hsize_t at = 0; at < n && same; at += chunk) {
                hsize_t sa = 0, sb = 0;
                H5Dget_chunk_storage_size(a, &at, &sa);
                H5Dget_chunk_storage_size(b, &at, &sb);
                uint8_t *ca = malloc(sa + 1), *cb = malloc(sb + 1);
                uint32_t fa = 1, fb = 1;
                same = sa == sb && sa == chunk * elem + 4 && H5Dread_chunk(a, H5P_DEFAULT, &at, &fa, ca) >= 0 &&
                       H5Dread_chunk(b, H5P_DEFAULT, &at, &fb, cb) >= 0 && fa == fb && !memcmp(ca, cb, sa);
                free(ca);
                free(cb);
            }
            CHECK(same, "type %zu, %llu values: the chunks written directly differ from HDF5's filter's", ti,
                  (unsigned long long)n);
            CHECK(H5Dread(a, types[ti], H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0 && !memcmp(v, back, n * elem),
                  "type %zu, %llu values: not read back as written", ti, (unsigned long long)n);
            H5Dclose(a);
            H5Dclose(b);
            H5Fclose(f);
            free(v);
            free(back);
        }
    remove(path);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    while (readdir(d)) n++;
    closedir(d);
    return n;
}

/* A result that replaces another (h5u_out over an existing file) has its
 * writeback started on a thread (common/writeback.c): started only then,
 * stopped with its descriptor and thread gone at the commit and at the
 * abort, and what lands is what was written; an abort leaves the old. */
static int write_result(const char *path, double base, uint64_t n, int commit, int *had_writeback)
{
    h5u_out out = H5U_OUT_NONE;
    double *v = malloc(n * sizeof *v);
    for (uint64_t i = 0; i < n; i++) v[i] = base + (double)i;
    int ok = h5u_out_create(&out, path) == FD_OK &&
             h5u_write_1d(out.file, "v", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n) == FD_OK;
    *had_writeback = out.writeback != NULL;
    if (ok && commit) ok = h5u_out_commit(&out) == FD_OK;
    h5u_out_abort(&out); /* after a commit it frees the names and leaves the file */
    free(v);
    return ok;
}

static int holds(const char *path, double base, uint64_t n)
{
    double *v = malloc(n * sizeof *v);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = f >= 0 ? H5Dopen2(f, "v", H5P_DEFAULT) : -1;
    int ok = d >= 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0;
    for (uint64_t i = 0; ok && i < n; i++) ok = v[i] == base + (double)i;
    if (d >= 0) H5Dclose(d);
    if (f >= 0) H5Fclose(f);
    free(v);
    return ok;
}

static void test_replace(const char *prefix)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s.replace.h5", prefix);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    const uint64_t n = 3 * (1u << 18) + 7;
    int wb = -1;
    remove(path);
    CHECK(write_result(path, 1, n, 1, &wb) && !wb && holds(path, 1, n), "replace: a new result, no writeback");
    const int fds = count_entries("/proc/self/fd"), before = count_entries("/proc/self/task");
    CHECK(write_result(path, 2, n, 1, &wb) && wb && holds(path, 2, n), "replace: committed over the old (writeback %d)",
          wb);
    /* One thread serves every file, started with the first (unless an
     * earlier test started it) and kept: no thread a file. */
    const int tasks = count_entries("/proc/self/task");
    CHECK(count_entries("/proc/self/fd") == fds && (tasks == before || tasks == before + 1),
          "replace: the writeback's descriptor is gone after the commit, one thread at most kept (%d -> %d tasks)",
          before, tasks);
    CHECK(write_result(path, 3, n, 0, &wb) && wb && holds(path, 2, n) && access(tmp, F_OK) != 0,
          "replace: aborted, the old result stays and the temporary goes");
    CHECK(count_entries("/proc/self/fd") == fds && count_entries("/proc/self/task") == tasks,
          "replace: the writeback's descriptor is gone after the abort, no thread added");
    setenv("FD_WRITEBACK", "off", 1);
    CHECK(write_result(path, 4, n, 1, &wb) && !wb && holds(path, 4, n), "replace: FD_WRITEBACK=off, none started");
    unsetenv("FD_WRITEBACK");
    /* A checkpoint segment, a new file of its own that becomes the result
     * in place of path: started by the file it will replace, not its own. */
    char seg[4200];
    snprintf(seg, sizeof seg, "%s.seg.h5", prefix);
    h5u_out o = H5U_OUT_NONE, o2 = H5U_OUT_NONE;
    CHECK(h5u_out_create_for(&o, seg, path) == FD_OK && o.writeback, "replace: a segment for an existing result");
    /* Two at once, taken back in the order they came: the same thread. */
    char seg2[4200];
    snprintf(seg2, sizeof seg2, "%s.seg2.h5", prefix);
    CHECK(h5u_out_create_for(&o2, seg2, path) == FD_OK && o2.writeback && count_entries("/proc/self/task") == tasks &&
              count_entries("/proc/self/fd") >= fds + 2,
          "replace: a second segment at once, on the one thread");
    h5u_out_abort(&o);
    h5u_out_abort(&o2);
    CHECK(h5u_out_create_for(&o, seg, NULL) == FD_OK && !o.writeback, "replace: a segment for no result");
    h5u_out_abort(&o);
    remove(path);
    CHECK(h5u_out_create_for(&o, seg, path) == FD_OK && !o.writeback, "replace: a segment for a result not there");
    h5u_out_abort(&o);
    CHECK(access(seg, F_OK) != 0 && access(seg2, F_OK) != 0 && count_entries("/proc/self/fd") == fds &&
              count_entries("/proc/self/task") == tasks,
          "replace: the segments' temporaries and descriptors gone, no thread added");
    /* The same for the files written by stdio (fd_afile: .npy, text). */
    fd_afile af;
    CHECK(fd_afile_open(&af, seg) == FD_OK && !af.writeback && fputs("one\n", af.f) >= 0 &&
              fd_afile_commit(&af) == FD_OK,
          "replace: a new stdio file, no writeback");
    CHECK(fd_afile_open(&af, seg) == FD_OK && af.writeback && fputs("two\n", af.f) >= 0 &&
              fd_afile_commit(&af) == FD_OK,
          "replace: a stdio file over the old, with writeback");
    char line[16] = "";
    FILE *rf = fopen(seg, "r");
    CHECK(rf && fgets(line, sizeof line, rf) && !strcmp(line, "two\n"), "replace: the stdio file holds the new text");
    if (rf) fclose(rf);
    CHECK(fd_afile_open(&af, seg) == FD_OK && af.writeback, "replace: a stdio file to abort");
    fd_afile_abort(&af);
    remove(seg);
    CHECK(count_entries("/proc/self/fd") == fds && count_entries("/proc/self/task") == tasks,
          "replace: the stdio files' descriptors gone, no thread added");
}

/* Files handed to the one writeback thread and taken back from four
 * threads at once, while it submits their pages: every one is taken, and
 * its descriptor closed (ThreadSanitizer checks the list and the busy
 * flags in CI). */
typedef struct {
    const char *prefix;
    int id;
    int failed;
} wb_worker;

static void *wb_churn(void *arg)
{
    wb_worker *a = arg;
    char final[4200], tmp[4300];
    snprintf(final, sizeof final, "%s.wb%d", a->prefix, a->id);
    snprintf(tmp, sizeof tmp, "%s.tmp", final);
    FILE *f = fopen(final, "w");
    if (!f) {
        a->failed++;
        return NULL;
    }
    fclose(f);
    static char block[1 << 16];
    for (int k = 0; k < 40; k++) {
        FILE *t = fopen(tmp, "w");
        fd_writeback *w = t ? fd_writeback_start(tmp, final) : NULL;
        if (!w) a->failed++;
        /* a few periods' worth of pages, some of them written as the
         * thread submits */
        for (int b = 0; t && b < 16; b++) {
            if (fwrite(block, 1, sizeof block, t) != sizeof block) a->failed++;
            fflush(t);
            if (b % 4 == 0) usleep(1000);
        }
        fd_writeback_stop(w);
        if (t) fclose(t);
        remove(tmp);
    }
    remove(final);
    return NULL;
}

static void test_writeback_threads(const char *prefix)
{
    const int fds = count_entries("/proc/self/fd");
    pthread_t th[4];
    wb_worker a[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (wb_worker){prefix, i, 0};
        CHECK(pthread_create(&th[i], NULL, wb_churn, &a[i]) == 0, "writeback threads: create %d", i);
    }
    int failed = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        failed += a[i].failed;
    }
    CHECK(failed == 0, "writeback threads: %d starts or writes failed", failed);
    CHECK(count_entries("/proc/self/fd") == fds, "writeback threads: descriptors left open (%d, was %d)",
          count_entries("/proc/self/fd"), fds);
}

/* A device whose start-up waits at a gate the test opens. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;
static atomic_int gated_warms;
static int one_device(void) { return 1; }
static void gated_warm(int device)
{
    (void)device;
    pthread_mutex_lock(&gate_mu);
    while (!gate_open) pthread_cond_wait(&gate_cv, &gate_mu);
    pthread_mutex_unlock(&gate_mu);
    atomic_fetch_add(&gated_warms, 1);
}
static void set_gate(int open)
{
    pthread_mutex_lock(&gate_mu);
    gate_open = open;
    pthread_cond_broadcast(&gate_cv);
    pthread_mutex_unlock(&gate_mu);
}
static int marker_fd = -1;
static void write_marker(void) { (void)!write(marker_fd, "x", 1); }

static void test_warm_abandon(void)
{
    const fd_mpi one = {0, 1, 0, 1};
    const fd_device_ops dev = {.name = "gated", .devices = one_device, .warm_device = gated_warm};
    fd_warm w;
    unsetenv("CUDA_VISIBLE_DEVICES");
    set_gate(0);
    CHECK(fd_warm_start(&w, &one, &dev, 0) == FD_OK && w.s && !fd_warm_ready(&w), "abandon: a start-up that waits");
    fd_warm_abandon(&w);
    CHECK(!w.s && fd_warm_ready(&w), "abandon: the job is free of it at once");
    fd_warm_join(&w); /* nothing to wait for */
    /* The process ends now: _exit with the code, exit's handlers not run. */
    int fds[2];
    CHECK(pipe(fds) == 0, "abandon: pipe");
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        marker_fd = fds[1];
        atexit(write_marker);
        fd_warm_exit(7);
        exit(9); /* not reached if it works */
    }
    close(fds[1]);
    int status = 0;
    char c;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 7,
          "abandon: the end while it runs exits with its code (status %d)", status);
    CHECK(read(fds[0], &c, 1) == 0, "abandon: exit's handlers did not run beside it");
    close(fds[0]);
    /* Once it finishes, it frees itself and the end is exit's again. */
    set_gate(1);
    for (int i = 0; i < 10000 && atomic_load(&gated_warms) < 1; i++) usleep(1000);
    int back = -1;
    for (int i = 0; i < 10000 && (back = fd_warm_exit(3)) != 3; i++) usleep(1000);
    CHECK(atomic_load(&gated_warms) == 1 && back == 3, "abandon: finished, the end returns its code (%d)", back);
    /* Abandoned after it finished: joined there and then. */
    CHECK(fd_warm_start(&w, &one, &dev, 0) == FD_OK && w.s, "abandon: a second start-up");
    for (int i = 0; i < 10000 && !fd_warm_ready(&w); i++) usleep(1000);
    fd_warm_abandon(&w);
    CHECK(!w.s && atomic_load(&gated_warms) == 2 && fd_warm_exit(4) == 4, "abandon: a finished one is joined");
}

int main(int argc, char **argv)
{
    sha_case("abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha_case("", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha_case("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    sha_case("a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    test_spans();
    test_bitsets();
    test_round_trips(argc > 1 ? argv[1] : "units.tmp");
    test_team();
    test_env();
    test_kept_team();
    test_readers(argc > 1 ? argv[1] : "units.tmp");
    test_bigmem();
    test_progress();
    test_fletcher(argc > 1 ? argv[1] : "units.tmp");
    test_replace(argc > 1 ? argv[1] : "units.tmp");
    test_writeback_threads(argc > 1 ? argv[1] : "units.tmp");
    test_warm_abandon();
    return t_report();
}
