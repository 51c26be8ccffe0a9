/* SPDX-License-Identifier: BSD-3-Clause */
#include "ckpt.h"

#include "../common/clock.h"
#include "../common/sha256.h"
#include "../mpi/fdmpi.h"
#include "../io/h5util.h"
#include "resultdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEG_FORMAT "fcbo-dist checkpoint segment"
#define JOB_FORMAT "fcbo-dist checkpoint"
/* What the run key covers changes with this: a checkpoint of another
 * layout is refused as another run's. */
#define KEY_VERSION "fcbo-dist checkpoint 2"
#define PARAMS_MAX 8192
#define KEY_HEX 65

struct ckpt {
    char *outdir;             /* DIR */
    char *dir, *job;          /* DIR/W.checkpoint, DIR/W.checkpoint/job.h5 */
    char *workload, *params;
    char nonce[RD_RUN_ID_LEN + 1]; /* the first run's: two runs of the same command differ */
    char key[KEY_HEX];        /* the run key: job.h5's, and every segment's */
    int created;              /* rank 0 made the directory (a fresh run) */
    double seconds;
    int resume, rank, size;
    uint64_t generation;
    atomic_ulong seq;         /* this rank's segments so far */
    atomic_ulong committed;   /* of them, those holding records */
    long kill_rank, kill_after, kill_stage;
    uint64_t *words, *ids;    /* a loaded work list */
    size_t *start;
};

int ckpt_resuming(const ckpt *ck) { return ck->resume; }
int ckpt_due(const ckpt *ck, double opened) { return fd_now() - opened >= ck->seconds; }

/* Names of the files this module writes in DIR/W.checkpoint, and nothing
 * else: job.h5, seg-G-R-S.h5, values-NAME.h5 (NAME: lower case and _),
 * each also as NAME.tmp.PID.  tmp: 1 for the temporaries only. */
static int digits_then(const char **s, size_t min, char end)
{
    size_t n = 0;
    while ((*s)[n] >= '0' && (*s)[n] <= '9') n++;
    if (n < min || (*s)[n] != end) return 0;
    *s += n + (end != 0);
    return 1;
}

static int ours(const char *name, int tmp)
{
    const char *t = strstr(name, ".h5.tmp.");
    if (t) {
        const char *pid = t + 8;
        if (!digits_then(&pid, 1, 0)) return 0;
    } else if (tmp) {
        return 0;
    }
    const size_t len = t ? (size_t)(t - name) + 3 : strlen(name);
    char base[128];
    if (len >= sizeof base) return 0;
    memcpy(base, name, len);
    base[len] = 0;
    if (!strcmp(base, "job.h5")) return 1;
    if (!strncmp(base, "seg-", 4)) {
        const char *s = base + 4;
        return digits_then(&s, 4, '-') && digits_then(&s, 5, '-') && digits_then(&s, 6, '.') && !strcmp(s, "h5");
    }
    if (!strncmp(base, "values-", 7)) {
        size_t n = 0;
        for (const char *s = base + 7; (*s >= 'a' && *s <= 'z') || *s == '_'; s++) n++;
        return n > 0 && !strcmp(base + 7 + n, ".h5");
    }
    return 0;
}

static int ours_all(const char *name, void *arg) { (void)arg; return ours(name, 0); }
static int ours_tmp(const char *name, void *arg) { (void)arg; return ours(name, 1); }

static int is_segment(const char *name) { return !strncmp(name, "seg-", 4) && ours(name, 0) && !strstr(name, ".tmp."); }

/* Committed segments in the directory; with_records: only those that
 * hold records (the lattice's split of the top of the tree holds none). */
static size_t count_segments(const char *dir, int with_records)
{
    size_t segs = 0;
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return 0;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_segment(e->d_name)) continue;
        if (!with_records) {
            segs++;
            continue;
        }
        char *path = fd_path_join(dir, e->d_name);
        hid_t f = path ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
        uint64_t n = 0;
        /* Only on a failure path: a message recorded here cannot replace the
         * failure's (the first one stays). */
        if (f >= 0 && h5u_len(f, "records", &n) == FD_OK && n > 0) segs++;
        if (f >= 0) H5Fclose(f);
        free(path);
    }
    closedir(d);
    return segs;
}

/* The run key: a digest of what decides the result (the workload and
 * its parameters, the input's hash among them) and of the first run's
 * nonce.  job.h5 stores it and every segment carries it, so that a
 * segment of another run, or a job.h5 edited since, is refused. */
static fd_status run_key(const ckpt *ck, const char *params, const char *nonce, char out[KEY_HEX])
{
    sha256_ctx c;
    FD_TRY(sha256_init(&c));
    sha256_update(&c, KEY_VERSION, sizeof KEY_VERSION);
    sha256_update(&c, ck->workload, strlen(ck->workload) + 1);
    sha256_update(&c, params, strlen(params) + 1);
    sha256_update(&c, nonce, strlen(nonce) + 1);
    return sha256_final_hex(&c, out);
}

/* The work list's digest, which job.h5 keeps beside it. */
static fd_status records_digest(const fd_records *recs, char out[KEY_HEX])
{
    sha256_ctx c;
    uint8_t w[8];
    FD_TRY(sha256_init(&c));
    sha256_le64(w, recs->n);
    sha256_update(&c, w, 8);
    for (size_t i = 0; i < recs->n; i++) {
        sha256_le64(w, recs->start[i]);
        sha256_update(&c, w, 8);
    }
    sha256_le64(w, recs->nwords);
    sha256_update(&c, w, 8);
    for (size_t i = 0; i < recs->nwords; i++) {
        sha256_le64(w, recs->data[i]);
        sha256_update(&c, w, 8);
    }
    return sha256_final_hex(&c, out);
}

/* The first line where a and b differ, for the message. */
static void first_diff(const char *a, const char *b, char *la, char *lb, size_t cap)
{
    while (*a || *b) {
        size_t na = strcspn(a, "\n"), nb = strcspn(b, "\n");
        if (na != nb || strncmp(a, b, na) != 0) {
            snprintf(la, cap, "%.*s", (int)na, a);
            snprintf(lb, cap, "%.*s", (int)nb, b);
            return;
        }
        a += na + (a[na] != 0);
        b += nb + (b[nb] != 0);
    }
    snprintf(la, cap, "?");
    snprintf(lb, cap, "?");
}

/* Rewrites job.h5 (under a temporary name: a kill leaves the old one). */
static fd_status write_job(const ckpt *ck, const fd_records *recs)
{
    fd_status st = FD_OK;
    h5u_out out = H5U_OUT_NONE;
    uint64_t *start = NULL;
    hid_t g = -1;
    FD_TRY_GOTO(h5u_out_create(&out, ck->job), st, done);
    const hid_t f = out.file;
    FD_TRY_GOTO(h5u_attr_str(f, "format", JOB_FORMAT), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "workload", ck->workload), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "params", ck->params), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "generation", ck->generation), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "nonce", ck->nonce), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "key", ck->key), st, done);
    if (recs) {
        char digest[KEY_HEX];
        FD_TRY_GOTO(records_digest(recs, digest), st, done);
        FD_TRY_GOTO(h5u_attr_str(f, "records_sha256", digest), st, done);
        FD_ALLOC_GOTO(start, recs->n + 1, st, done);
        for (size_t i = 0; i < recs->n; i++) start[i] = recs->start[i];
        start[recs->n] = recs->nwords;
        H5_CHECK_GOTO(g = H5Gcreate2(f, "records", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "words", H5T_STD_U64LE, H5T_NATIVE_UINT64, recs->data, recs->nwords), st, done);
        FD_TRY_GOTO(h5u_write_1d(g, "start", H5T_STD_U64LE, H5T_NATIVE_UINT64, start, recs->n + 1), st, done);
        H5Gclose(g);
        g = -1;
    }
    st = h5u_out_commit(&out);
done:
    if (g >= 0) H5Gclose(g);
    h5u_out_abort(&out);
    free(start);
    return st;
}

/* Rank 0 of a --resume: job.h5 must be there and agree with this run. */
static fd_status open_resume(ckpt *ck)
{
    fd_status st = FD_OK;
    char fmt[64], wl[64], *params = NULL, nonce[64] = "", key[KEY_HEX + 8] = "", want[KEY_HEX];
    char la[256], lb[256];
    uint64_t gen = 0, complete = 0;
    struct stat sb;
    if (lstat(ck->dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return fd_fail(FD_ERR_INPUT, "--resume %s: %s is not a directory (a link or a file); fcbo-dist made no such "
                                     "thing and uses none",
                       ck->outdir, ck->dir);
    if (access(ck->job, R_OK) != 0)
        return fd_fail(FD_ERR_USAGE,
                       "--resume %s: no checkpoint there (%s is missing: the run finished, was not started with "
                       "checkpoints, or stopped before its work list was saved); run it again without --resume "
                       "(and with --force, as the directory exists)",
                       ck->outdir, ck->job);
    hid_t f = H5Fopen(ck->job, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return fd_fail(FD_ERR_INPUT, "%s: not a readable HDF5 file", ck->job);
    FD_ALLOC_GOTO(params, PARAMS_MAX, st, done);
    if (h5u_read_attr_str(f, "format", fmt, sizeof fmt) != FD_OK || strcmp(fmt, JOB_FORMAT) ||
        h5u_read_attr_str(f, "workload", wl, sizeof wl) != FD_OK ||
        h5u_read_attr_str(f, "params", params, PARAMS_MAX) != FD_OK ||
        h5u_read_attr_u64(f, "generation", &gen) != FD_OK || h5u_read_attr_u64(f, "complete", &complete) != FD_OK ||
        complete != 1 || gen > (1u << 30)) {
        fd_errclear();
        st = fd_fail(FD_ERR_INPUT, "%s: not an fcbo-dist checkpoint", ck->job);
        goto done;
    }
    if (h5u_read_attr_str(f, "nonce", nonce, sizeof nonce) != FD_OK || !rd_is_run_id(nonce) ||
        h5u_read_attr_str(f, "key", key, sizeof key) != FD_OK) {
        fd_errclear();
        st = fd_fail(FD_ERR_INPUT, "%s: a checkpoint of an older fcbo-dist (it names no run key); start again without "
                                   "--resume",
                     ck->job);
        goto done;
    }
    if (strcmp(wl, ck->workload) != 0) {
        st = fd_fail(FD_ERR_USAGE, "--resume: %s is a checkpoint of `fcbo-dist %s`, not of `%s`", ck->job, wl,
                     ck->workload);
        goto done;
    }
    if (strcmp(params, ck->params) != 0) {
        first_diff(ck->params, params, la, lb, sizeof la);
        st = fd_fail(FD_ERR_USAGE,
                     "--resume: this run has %s where the checkpointed run had %s (another option, or a checkpoint "
                     "of another version of fcbo-dist); resume with the first run's options, or start again "
                     "without --resume (%s)",
                     la, lb, ck->job);
        goto done;
    }
    FD_TRY_GOTO(run_key(ck, params, nonce, want), st, done);
    if (strcmp(key, want) != 0) {
        st = fd_fail(FD_ERR_INPUT,
                     "%s: its run key does not match its parameters (the file was edited or damaged); it cannot be "
                     "trusted: remove %s and start again",
                     ck->job, ck->dir);
        goto done;
    }
    memcpy(ck->nonce, nonce, sizeof ck->nonce);
    memcpy(ck->key, key, KEY_HEX);
    ck->generation = gen + 1;
done:
    H5Fclose(f);
    free(params);
    return st;
}

static fd_status open_rank0(ckpt *ck)
{
    if (!ck->resume) {
        /* resultdir refused a fresh run beside an existing checkpoint. */
        if (mkdir(ck->dir, 0777) != 0)
            return fd_fail(FD_ERR_IO, "%s: cannot create the checkpoint directory: %s", ck->dir, strerror(errno));
        ck->created = 1;
        rd_new_run_id(ck->nonce);
        return run_key(ck, ck->params, ck->nonce, ck->key);
    }
    FD_TRY(open_resume(ck));
    /* What the killed run was writing, by exact name; parts it left in
     * DIR go when this run's result is committed (resultdir). */
    rd_remove_matching(ck->dir, ours_tmp, NULL);
    return FD_OK;
}

fd_status ckpt_open(ckpt **out, const ckpt_opts *o)
{
    fd_status st = FD_OK;
    ckpt *ck = calloc(1, sizeof *ck);
    *out = NULL;
    if (!ck) return fd_fail(FD_ERR_NOMEM, "out of memory");
    ck->outdir = strdup(o->dir);
    ck->dir = strdup(o->ckdir);
    ck->job = ck->dir ? fd_path_join(ck->dir, "job.h5") : NULL;
    ck->workload = strdup(o->workload);
    ck->params = strdup(o->params);
    ck->seconds = o->seconds;
    ck->resume = o->resume;
    ck->rank = o->rank;
    ck->size = o->size;
    ck->kill_rank = -1;
    ck->kill_stage = 0;
    atomic_init(&ck->seq, 0);
    atomic_init(&ck->committed, 0);
    if (!ck->outdir || !ck->dir || !ck->job || !ck->workload || !ck->params) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    if (st == FD_OK && strlen(o->params) >= PARAMS_MAX) st = fd_fail(FD_ERR_INTERNAL, "checkpoint parameters too long");
    const char *kill = getenv("FD_TEST_KILL_AFTER");
    if (st == FD_OK && kill && sscanf(kill, "%ld:%ld:%ld", &ck->kill_rank, &ck->kill_after, &ck->kill_stage) < 2)
        st = fd_fail(FD_ERR_USAGE, "FD_TEST_KILL_AFTER=%s: expected RANK:SEGMENTS[:STAGE]", kill);
    if (st == FD_OK && o->rank == 0) st = open_rank0(ck);
    if (o->size > 1) {
        st = fd_mpi_agree(st, NULL);
        if (st == FD_OK) MPI_CHECK_GOTO(MPI_Bcast(&ck->generation, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), st, done);
        if (st == FD_OK) MPI_CHECK_GOTO(MPI_Bcast(ck->key, KEY_HEX, MPI_CHAR, 0, MPI_COMM_WORLD), st, done);
    }
done:
    if (st != FD_OK) {
        if (ck->created) rmdir(ck->dir); /* made by this run, still empty */
        ckpt_close(&ck);
        return st;
    }
    *out = ck;
    return FD_OK;
}

void ckpt_close(ckpt **pck)
{
    ckpt *ck = *pck;
    if (!ck) return;
    free(ck->outdir);
    free(ck->dir);
    free(ck->job);
    free(ck->workload);
    free(ck->params);
    free(ck->words);
    free(ck->ids);
    free(ck->start);
    free(ck);
    *pck = NULL;
}

fd_status ckpt_save_records(ckpt *ck, const fd_records *recs) { return write_job(ck, recs); }

fd_status ckpt_load_records(ckpt *ck, fd_records *recs)
{
    fd_status st = FD_OK;
    uint64_t nw = 0, ns = 0, *start = NULL;
    hid_t f = H5Fopen(ck->job, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return fd_fail(FD_ERR_INPUT, "%s: not a readable HDF5 file", ck->job);
    if (h5u_len(f, "records/words", &nw) != FD_OK || h5u_len(f, "records/start", &ns) != FD_OK || ns < 1 ||
        nw > ((uint64_t)1 << 40) || ns > ((uint64_t)1 << 40)) {
        fd_errclear();
        st = fd_fail(FD_ERR_INPUT, "%s: the checkpoint has no work list", ck->job);
        goto done;
    }
    FD_ALLOC_GOTO(ck->words, nw + 1, st, done);
    FD_ALLOC_GOTO(start, ns, st, done);
    FD_ALLOC_GOTO(ck->start, ns, st, done);
    FD_TRY_GOTO(h5u_read_range(f, "records/words", H5T_NATIVE_UINT64, 0, nw, ck->words), st, done);
    FD_TRY_GOTO(h5u_read_range(f, "records/start", H5T_NATIVE_UINT64, 0, ns, start), st, done);
    for (uint64_t i = 0; i < ns; i++) {
        if (start[i] > nw || (i && start[i] < start[i - 1]) || (i == 0 && start[i] != 0) ||
            (i == ns - 1 && start[i] != nw)) {
            st = fd_fail(FD_ERR_INPUT, "%s: the checkpoint's work list is corrupt", ck->job);
            goto done;
        }
        ck->start[i] = (size_t)start[i];
    }
    *recs = (fd_records){ck->words, ck->start, (size_t)(ns - 1), (size_t)nw, NULL};
    {
        char stored[KEY_HEX + 8] = "", digest[KEY_HEX];
        FD_TRY_GOTO(records_digest(recs, digest), st, done);
        if (h5u_read_attr_str(f, "records_sha256", stored, sizeof stored) != FD_OK || strcmp(stored, digest) != 0) {
            fd_errclear();
            st = fd_fail(FD_ERR_INPUT,
                         "%s: its work list does not match its digest (the file was edited or damaged); it cannot "
                         "be trusted: remove %s and start again",
                         ck->job, ck->dir);
            goto done;
        }
    }
    /* The list keeps its generation count current, so that the next
     * --resume names its segments apart from this run's. */
    st = write_job(ck, recs);
done:
    H5Fclose(f);
    free(start);
    return st;
}

/* Words of record i. */
static size_t rec_len(const fd_records *r, size_t i)
{
    return (i + 1 < r->n ? r->start[i + 1] : r->nwords) - r->start[i];
}

fd_status ckpt_check_records(const ckpt *ck, const fd_records *recs, ckpt_record_check valid, const void *arg)
{
    for (size_t i = 0; i < recs->n; i++)
        if (!valid(arg, recs->data + recs->start[i], rec_len(recs, i)))
            return fd_fail(FD_ERR_INPUT,
                           "%s: record %zu of its work list is not one this run could have made (a forged or "
                           "foreign checkpoint); it cannot be trusted: remove %s and start again",
                           ck->job, i, ck->dir);
    return FD_OK;
}

fd_status ckpt_records_left(const fd_records *all, const uint8_t *done, fd_records *left)
{
    *left = (fd_records){0};
    size_t n = 0, nw = 0;
    for (size_t i = 0; i < all->n; i++)
        if (!done || !done[i]) {
            n++;
            nw += rec_len(all, i);
        }
    uint64_t *data = malloc((nw + 1) * sizeof *data), *ids = malloc((n + 1) * sizeof *ids);
    size_t *start = malloc((n + 1) * sizeof *start);
    if (!data || !ids || !start) {
        free(data);
        free(ids);
        free(start);
        return fd_fail(FD_ERR_NOMEM, "out of memory for the work list");
    }
    size_t k = 0, w = 0;
    for (size_t i = 0; i < all->n; i++) {
        if (done && done[i]) continue;
        const size_t len = rec_len(all, i);
        start[k] = w;
        ids[k++] = i;
        memcpy(data + w, all->data + all->start[i], len * sizeof *data);
        w += len;
    }
    *left = (fd_records){data, start, n, nw, ids};
    return FD_OK;
}

void ckpt_records_free(fd_records *r)
{
    free((void *)r->data);
    free((void *)r->start);
    free((void *)r->ids);
    *r = (fd_records){0};
}

fd_status ckpt_put_values(const ckpt *ck, const char *name, const double *v, size_t n)
{
    fd_status st = FD_OK;
    char file[96];
    snprintf(file, sizeof file, "values-%s.h5", name);
    char *path = fd_path_join(ck->dir, file);
    h5u_out out = H5U_OUT_NONE;
    if (!path) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    FD_TRY_GOTO(h5u_out_create(&out, path), st, done);
    FD_TRY_GOTO(h5u_attr_str(out.file, "key", ck->key), st, done);
    FD_TRY_GOTO(h5u_write_1d(out.file, "values", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, v, n), st, done);
    st = h5u_out_commit(&out);
done:
    h5u_out_abort(&out);
    free(path);
    return st;
}

fd_status ckpt_get_values(const ckpt *ck, const char *name, double *v, size_t n, int *found)
{
    fd_status st = FD_OK;
    char file[96], key[KEY_HEX + 8] = "";
    uint64_t len = 0, complete = 0;
    struct stat sb;
    *found = 0;
    snprintf(file, sizeof file, "values-%s.h5", name);
    char *path = fd_path_join(ck->dir, file);
    if (!path) return fd_fail(FD_ERR_NOMEM, "out of memory");
    if (lstat(path, &sb) != 0) {
        free(path);
        return FD_OK; /* not computed yet */
    }
    hid_t f = S_ISREG(sb.st_mode) ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
    const int ok = f >= 0 && h5u_read_attr_u64(f, "complete", &complete) == FD_OK && complete == 1 &&
                   h5u_read_attr_str(f, "key", key, sizeof key) == FD_OK && !strcmp(key, ck->key) &&
                   h5u_len(f, "values", &len) == FD_OK && len == n &&
                   h5u_read_range(f, "values", H5T_NATIVE_DOUBLE, 0, n, v) == FD_OK;
    fd_errclear();
    if (f >= 0) H5Fclose(f);
    /* Written whole by a run of this checkpoint, or not ours to use. */
    if (!ok) st = fd_fail(FD_ERR_INPUT, "%s: not a value of this checkpoint's run (damaged, or copied from another); "
                                        "remove it to compute it again",
                          path);
    else *found = 1;
    free(path);
    return st;
}

char *ckpt_seg_path(ckpt *ck)
{
    char name[64];
    unsigned long s = atomic_fetch_add(&ck->seq, 1);
    snprintf(name, sizeof name, "seg-%04llu-%05d-%06lu.h5", (unsigned long long)ck->generation, ck->rank, s);
    return fd_path_join(ck->dir, name);
}

fd_status ckpt_seg_mark(hid_t f, const ckpt *ck, int stage, const uint64_t *ids, size_t n)
{
    FD_TRY(h5u_attr_str(f, "format", SEG_FORMAT));
    FD_TRY(h5u_attr_str(f, "workload", ck->workload));
    FD_TRY(h5u_attr_str(f, "key", ck->key));
    FD_TRY(h5u_attr_u64(f, "generation", ck->generation));
    FD_TRY(h5u_attr_u64(f, "rank", (uint64_t)ck->rank));
    FD_TRY(h5u_attr_u64(f, "stage", (uint64_t)stage));
    return h5u_write_1d(f, "records", H5T_STD_U64LE, H5T_NATIVE_UINT64, ids, n);
}

void ckpt_seg_committed(ckpt *ck, int stage, size_t nids)
{
    if (!nids || (ck->kill_stage && stage != ck->kill_stage)) return;
    unsigned long c = atomic_fetch_add(&ck->committed, 1) + 1;
    if (ck->kill_rank == ck->rank && (long)c >= ck->kill_after) raise(SIGKILL);
}

fd_status ckpt_scan(ckpt *ck, size_t nrecords, ckpt_seg_fn fn, void *arg)
{
    fd_status st = FD_OK;
    const int fd = open(ck->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        st = fd_fail(FD_ERR_IO, "%s: cannot list the checkpoint: %s", ck->dir, strerror(errno));
        if (fd >= 0) close(fd);
        return st;
    }
    struct dirent *e;
    uint64_t *ids = NULL;
    while (st == FD_OK && (e = readdir(d))) {
        if (!is_segment(e->d_name)) continue;
        char *path = fd_path_join(ck->dir, e->d_name);
        if (!path) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); break; }
        char fmt[64] = "", wl[64] = "", key[KEY_HEX + 8] = "";
        uint64_t complete = 0, gen = 0, stage = 0, n = 0;
        struct stat sb;
        hid_t f = lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
        /* Committed segments are whole (renamed after they were closed):
         * one that does not read as such was damaged or put there, and its
         * records are not to be trusted or silently dropped. */
        int ok = f >= 0 && h5u_read_attr_str(f, "format", fmt, sizeof fmt) == FD_OK && !strcmp(fmt, SEG_FORMAT) &&
                 h5u_read_attr_str(f, "workload", wl, sizeof wl) == FD_OK && !strcmp(wl, ck->workload) &&
                 h5u_read_attr_u64(f, "complete", &complete) == FD_OK && complete == 1 &&
                 h5u_read_attr_u64(f, "generation", &gen) == FD_OK && gen < ck->generation &&
                 h5u_read_attr_u64(f, "stage", &stage) == FD_OK && stage <= 2 &&
                 h5u_len(f, "records", &n) == FD_OK && n <= nrecords;
        const int keyed = ok && h5u_read_attr_str(f, "key", key, sizeof key) == FD_OK && !strcmp(key, ck->key);
        free(ids);
        ids = NULL;
        if (keyed && n) {
            ids = malloc(n * sizeof *ids);
            ok = ids && h5u_read_range(f, "records", H5T_NATIVE_UINT64, 0, n, ids) == FD_OK;
            for (uint64_t k = 0; ok && k < n; k++) ok = ids[k] < nrecords;
        }
        fd_errclear();
        if (!ok)
            st = fd_fail(FD_ERR_INPUT,
                         "%s: not a whole checkpoint segment of this run (damaged?); remove it, and its records are "
                         "computed again",
                         path);
        else if (!keyed)
            st = fd_fail(FD_ERR_INPUT,
                         "%s: a segment of another run (its run key differs from %s's); remove it, and its records "
                         "are computed again",
                         path, ck->job);
        else st = fn(arg, path, f, (int)stage, ids, (size_t)n);
        if (f >= 0) H5Fclose(f);
        free(path);
    }
    closedir(d);
    free(ids);
    return st;
}

fd_status ckpt_share_paths(const ckpt *ck, char **paths, size_t n, char ***mine)
{
    fd_status st = FD_OK;
    char *buf = NULL;
    uint64_t len = 0;
    *mine = NULL;
    if (ck->rank == 0)
        for (size_t i = 0; i < n; i++) len += strlen(paths[i]) + 1;
    if (ck->size > 1) MPI_CHECK_GOTO(MPI_Bcast(&len, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), st, done);
    FD_ALLOC_GOTO(buf, len + 1, st, done);
    if (ck->rank == 0) {
        size_t w = 0;
        for (size_t i = 0; i < n; i++) {
            size_t l = strlen(paths[i]) + 1;
            memcpy(buf + w, paths[i], l);
            w += l;
        }
    }
    if (ck->size > 1) {
        if (len > INT32_MAX) { st = fd_fail(FD_ERR_INTERNAL, "too many checkpoint segments"); goto done; }
        MPI_CHECK_GOTO(MPI_Bcast(buf, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD), st, done);
    }
    size_t total = 0;
    for (uint64_t w = 0; w < len; w += strlen(buf + w) + 1) total++;
    FD_ALLOC_GOTO(*mine, total / (size_t)ck->size + 2, st, done);
    size_t k = 0, i = 0;
    for (uint64_t w = 0; w < len; w += strlen(buf + w) + 1, i++) {
        if (i % (size_t)ck->size != (size_t)ck->rank) continue;
        if (!((*mine)[k++] = strdup(buf + w))) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    }
done:
    free(buf);
    if (st != FD_OK) {
        ckpt_free_paths(*mine);
        *mine = NULL;
    }
    return st;
}

void ckpt_free_paths(char **paths)
{
    for (size_t i = 0; paths && paths[i]; i++) free(paths[i]);
    free(paths);
}

int ckpt_finish(ckpt *ck, fd_status st)
{
    if (ck->rank != 0) return 0;
    rd_remove_matching(ck->dir, ours_tmp, NULL);
    /* Removed once the result it was for is committed, or by the fresh run
     * that made it when it holds nothing worth resuming: no records done,
     * and an error in the command or the input (exit status 2: the same
     * command fails the same way; a failure of the machine, or a signal,
     * keeps even the lattice's split).  A resumed run that fails leaves it
     * as it found it, with what it added. */
    const int keep = st != FD_OK && (ck->resume || count_segments(ck->dir, 1) > 0 ||
                                     (fd_exit_code(st) != 2 && count_segments(ck->dir, 0) > 0));
    if (keep) {
        const int resumable = access(ck->job, R_OK) == 0;
        /* Part of the failure's message: printed even with -q. */
        if (resumable)
            fprintf(stderr, "fcbo-dist %s: the work done so far is kept in %s; rerun the same command with --resume %s "
                            "to finish it\n",
                    ck->workload, ck->dir, ck->outdir);
        return resumable;
    }
    rd_remove_matching(ck->dir, ours_all, NULL);
    rmdir(ck->dir); /* only when empty: nothing of the user's goes */
    return 0;
}
