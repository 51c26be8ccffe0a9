/* SPDX-License-Identifier: BSD-3-Clause */
#include "resultdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_NAME ".fcbo-dist.lock"

char *fd_path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

void rd_part_name(char *buf, size_t cap, const char *workload, const char *run_id, int rank)
{
    if (!run_id || !*run_id) snprintf(buf, cap, "part-%05d.h5", rank);
    else snprintf(buf, cap, "%s.%s.part-%05d.h5", workload, run_id, rank);
}

/* Length of the run of decimal digits at s. */
static size_t digits(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9') n++;
    return n;
}

int rd_is_run_id(const char *s)
{
    for (int k = 0; k < RD_RUN_ID_LEN; k++)
        if (!((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f'))) return 0;
    return s[RD_RUN_ID_LEN] == 0;
}

/* s is ".tmp.PID" and nothing after. */
static int is_tmp_suffix(const char *s)
{
    if (strncmp(s, ".tmp.", 5) != 0) return 0;
    const size_t n = digits(s + 5);
    return n > 0 && s[5 + n] == 0;
}

/* What W's garbage collection may remove: W.h5.tmp.PID, and
 * W.RUNID.part-R.h5 (with or without .tmp.PID) of a run other than keep's
 * (the temporary of any run: the lock says no other run is writing). */
typedef struct {
    const char *workload, *keep;
} gc_arg;

static int superseded(const char *name, void *v)
{
    const gc_arg *g = v;
    const size_t wl = strlen(g->workload);
    if (strncmp(name, g->workload, wl) != 0 || name[wl] != '.') return 0;
    const char *s = name + wl + 1;
    if (!strncmp(s, "h5", 2)) return is_tmp_suffix(s + 2);
    char id[RD_RUN_ID_LEN + 1];
    if (strlen(s) < RD_RUN_ID_LEN + 1) return 0;
    memcpy(id, s, RD_RUN_ID_LEN);
    id[RD_RUN_ID_LEN] = 0;
    if (!rd_is_run_id(id) || s[RD_RUN_ID_LEN] != '.') return 0;
    s += RD_RUN_ID_LEN + 1;
    if (strncmp(s, "part-", 5) != 0) return 0;
    const size_t n = digits(s + 5);
    if (n < 5 || n > 9 || strncmp(s + 5 + n, ".h5", 3) != 0) return 0;
    s += 5 + n + 3;
    if (!*s) return strcmp(id, g->keep) != 0;
    return is_tmp_suffix(s);
}

long rd_remove_matching(const char *dir, int (*ours)(const char *name, void *arg), void *arg)
{
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    long removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!ours(e->d_name, arg)) continue;
        /* A directory or anything but a plain file or link is not ours,
         * whatever its name; unlinkat never follows a link. */
        struct stat sb;
        if (fstatat(fd, e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(sb.st_mode)) continue;
        if (unlinkat(fd, e->d_name, 0) == 0) removed++;
    }
    closedir(d);
    return removed;
}

void rd_new_run_id(char *out)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
    }
    snprintf(out, RD_RUN_ID_LEN + 1, "%016llx", (unsigned long long)r);
}

/* Rank 0: the lock of DIR, held until rd_close.  The file is removed
 * when the lock is dropped; a run that locked a file another run had
 * just removed sees that the name now means another file (or none), and
 * tries again.  A file system without locks (some parallel file systems
 * mounted without them) is run without, as docs/running.md says. */
static fd_status take_lock(resultdir *d)
{
    fd_status st = FD_OK;
    char *path = fd_path_join(d->dir, LOCK_NAME);
    if (!path) return fd_fail(FD_ERR_NOMEM, "out of memory");
    for (int tries = 0; tries < 100; tries++) {
        const int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
            st = fd_fail(FD_ERR_IO, "%s: cannot open the directory's lock file: %s", path, strerror(errno));
            break;
        }
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(fd, F_SETLK, &fl) != 0) {
            const int e = errno;
            if (e == EACCES || e == EAGAIN) {
                char who[128] = "";
                const ssize_t n = pread(fd, who, sizeof who - 1, 0);
                who[n > 0 ? n : 0] = 0;
                who[strcspn(who, "\n")] = 0;
                st = fd_fail(FD_ERR_USAGE,
                             "%s is in use by another fcbo-dist run%s%s%s (it holds %s); wait for it to end, or write "
                             "to another directory",
                             d->dir, *who ? " (" : "", who, *who ? ")" : "", path);
            }
            /* else ENOLCK, ENOSYS, EOPNOTSUPP, EINVAL: no locks here. */
            close(fd);
            break;
        }
        struct stat held, named;
        if (fstat(fd, &held) != 0 || stat(path, &named) != 0 || held.st_ino != named.st_ino ||
            held.st_dev != named.st_dev) {
            close(fd); /* removed by the run that held it: again */
            continue;
        }
        char who[128], host[64] = "";
        gethostname(host, sizeof host - 1);
        const int n = snprintf(who, sizeof who, "pid %ld on %s\n", (long)getpid(), host);
        if (ftruncate(fd, 0) != 0 || pwrite(fd, who, (size_t)n, 0) < 0) {
            /* only for the message of a run refused */
        }
        d->lock_fd = fd;
        break;
    }
    free(path);
    return st;
}

static void drop_lock(resultdir *d)
{
    if (d->lock_fd < 0) return;
    /* Removed while still held: a run waiting for it then finds the name
     * gone or new, and takes the new one. */
    char *path = fd_path_join(d->dir, LOCK_NAME);
    if (path) unlink(path);
    free(path);
    close(d->lock_fd);
    d->lock_fd = -1;
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Rank 0's part of rd_open. */
static fd_status open_rank0(resultdir *d, rd_mode mode)
{
    struct stat sb;
    if (stat(d->dir, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) return fd_fail(FD_ERR_USAGE, "%s exists and is not a directory", d->dir);
    } else if (mkdir(d->dir, 0777) == 0) {
        d->created = 1;
    } else {
        return fd_fail(FD_ERR_IO, "%s: cannot create the output directory: %s", d->dir, strerror(errno));
    }
    FD_TRY(take_lock(d));
    if (mode == RD_NEW && exists(d->result))
        return fd_fail(FD_ERR_USAGE,
                       "%s exists; use --force to replace it (the old result stays until the new one is complete)",
                       d->result);
    if (mode != RD_RESUME && exists(d->checkpoint))
        return fd_fail(FD_ERR_USAGE,
                       "%s holds the work of an interrupted run: finish it with --resume %s, or remove %s to start "
                       "again",
                       d->checkpoint, d->dir, d->checkpoint);
    /* FD_TEST_RUN_ID: the tests' way to know a part's name before the
     * run (to make its commit fail); never one that names existing parts. */
    const char *fixed = getenv("FD_TEST_RUN_ID");
    if (fixed && !rd_is_run_id(fixed)) return fd_fail(FD_ERR_USAGE, "FD_TEST_RUN_ID=%s: not 16 hex digits", fixed);
    if (fixed) {
        char name[RD_NAME_MAX];
        rd_part_name(name, sizeof name, d->workload, fixed, 0);
        char *p = fd_path_join(d->dir, name);
        const int taken = p && exists(p);
        free(p);
        if (taken) return fd_fail(FD_ERR_USAGE, "FD_TEST_RUN_ID=%s names parts that exist in %s", fixed, d->dir);
        snprintf(d->run_id, sizeof d->run_id, "%s", fixed);
        return FD_OK;
    }
    rd_new_run_id(d->run_id);
    return FD_OK;
}

static fd_status names(resultdir *d, const char *dir, const char *workload)
{
    char name[RD_NAME_MAX];
    snprintf(d->workload, sizeof d->workload, "%s", workload);
    d->dir = strdup(dir);
    snprintf(name, sizeof name, "%s.h5", workload);
    d->result = fd_path_join(dir, name);
    snprintf(name, sizeof name, "%s.checkpoint", workload);
    d->checkpoint = fd_path_join(dir, name);
    return d->dir && d->result && d->checkpoint ? FD_OK : fd_fail(FD_ERR_NOMEM, "out of memory");
}

fd_status rd_open(resultdir *d, const char *dir, const char *workload, rd_mode mode, const fd_mpi *mpi, int parts)
{
    fd_status st = FD_OK;
    memset(d, 0, sizeof *d);
    d->lock_fd = -1;
    d->rank = mpi->rank;
    d->size = mpi->size;
    d->parts = parts && mpi->size > 1;
    if (!dir) return FD_OK;
    st = names(d, dir, workload);
    if (st == FD_OK && d->rank == 0) st = open_rank0(d, mode);
    if (mpi->size > 1 && fd_mpi_active()) {
        st = fd_mpi_agree(st, NULL);
        if (st == FD_OK) MPI_CHECK_GOTO(MPI_Bcast(d->run_id, sizeof d->run_id, MPI_CHAR, 0, MPI_COMM_WORLD), st, done);
        if (st == FD_OK && !rd_is_run_id(d->run_id)) st = fd_fail(FD_ERR_INTERNAL, "bad run id from rank 0");
    }
    if (st == FD_OK && d->parts) {
        char name[RD_NAME_MAX];
        rd_part_name(name, sizeof name, workload, d->run_id, d->rank);
        if (!(d->part = fd_path_join(dir, name))) st = fd_fail(FD_ERR_NOMEM, "out of memory");
    }
done:
    return st;
}

void rd_part_committed(resultdir *d) { d->committed = 1; }

void rd_close(resultdir *d, fd_status st)
{
    if (d->dir) {
        if (st == FD_OK && d->rank == 0) {
            gc_arg g = {d->workload, d->run_id};
            rd_remove_matching(d->dir, superseded, &g);
        }
        if (st != FD_OK && d->committed && d->part) unlink(d->part);
        /* Rank 0 may remove DIR only once every rank has removed its part;
         * after an MPI error the ranks cannot meet, and main() aborts. */
        if (st != FD_OK && d->parts && fd_mpi_active() && st != FD_ERR_MPI) MPI_Barrier(MPI_COMM_WORLD);
        drop_lock(d);
        if (st != FD_OK && d->created) rmdir(d->dir); /* only when empty */
    }
    free(d->dir);
    free(d->result);
    free(d->part);
    free(d->checkpoint);
    d->dir = d->result = d->part = d->checkpoint = NULL;
}
