/* SPDX-License-Identifier: BSD-3-Clause */
#include "hashcache.h"

#include "env.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "fcbo-dist input sha256 1"
/* An entry is one line well under this. */
#define ENTRY_MAX 256

int hashcache_wanted(const struct stat *st)
{
    uint64_t min;
    /* main refused a bad value before any work (fd_env_check) */
    if (fd_env_switched("FD_HASH_CACHE") ||
        fd_env_count("FD_HASH_CACHE_MIN", 0, UINT64_MAX, (uint64_t)64 << 20, "bytes", &min) != FD_OK)
        return 0;
    return S_ISREG(st->st_mode) && (uint64_t)st->st_size >= min;
}

/* FD_HASH_CACHE_DIR, else $XDG_CACHE_HOME/fcbo-dist, else
 * $HOME/.cache/fcbo-dist; 0 when none is set or the path is too long. */
static int cache_dir(char *out, size_t n)
{
    const char *d = getenv("FD_HASH_CACHE_DIR"), *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int len;
    if (d && *d) len = snprintf(out, n, "%s", d);
    else if (x && *x) len = snprintf(out, n, "%s/fcbo-dist", x);
    else if (h && *h) len = snprintf(out, n, "%s/.cache/fcbo-dist", h);
    else return 0;
    return len > 0 && (size_t)len < n;
}

static int entry_path(const struct stat *st, char *out, size_t n)
{
    char dir[PATH_MAX];
    if (!cache_dir(dir, sizeof dir)) return 0;
    const int len = snprintf(out, n, "%s/sha256/%jx-%jx", dir, (uintmax_t)st->st_dev, (uintmax_t)st->st_ino);
    return len > 0 && (size_t)len < n;
}

/* The entry's one line for the file st describes and its digest. */
static int entry_line(const struct stat *st, const char *hex, char *out, size_t n)
{
    const int len = snprintf(out, n, MAGIC " %jx %jx %jd %jd.%09ld %jd.%09ld %s\n", (uintmax_t)st->st_dev,
                             (uintmax_t)st->st_ino, (intmax_t)st->st_size, (intmax_t)st->st_mtim.tv_sec,
                             st->st_mtim.tv_nsec, (intmax_t)st->st_ctim.tv_sec, st->st_ctim.tv_nsec, hex);
    return len > 0 && (size_t)len < n;
}

static int is_hex64(const char *s)
{
    for (int i = 0; i < 64; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return 1;
}

int hashcache_get(const struct stat *st, char hex[65])
{
    char path[PATH_MAX], buf[ENTRY_MAX + 1], want[ENTRY_MAX];
    if (!entry_path(st, path, sizeof path)) return 0;
    /* Not through a link, and only a small regular file: an entry is
     * ours to read, but the directory may hold anything. */
    const int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return 0;
    struct stat es;
    ssize_t got = -1;
    if (fstat(fd, &es) == 0 && S_ISREG(es.st_mode) && es.st_size > 0 && es.st_size <= ENTRY_MAX)
        got = read(fd, buf, ENTRY_MAX);
    close(fd);
    if (got <= 0) return 0;
    buf[got] = 0;
    /* The line this file would have, with the entry's digest: equal to
     * the byte, or not ours. */
    const char *digest = strrchr(buf, ' ');
    if (!digest || strlen(digest) != 66 || digest[65] != '\n' || !is_hex64(digest + 1)) return 0;
    char d[65];
    memcpy(d, digest + 1, 64);
    d[64] = 0;
    if (!entry_line(st, d, want, sizeof want) || strcmp(want, buf) != 0) return 0;
    memcpy(hex, d, 65);
    return 1;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* mkdir -p of path's directories, mode 0700 for those it makes. */
static int make_dirs(char *path)
{
    for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        const int ok = mkdir(path, 0700) == 0 || errno == EEXIST;
        *s = '/';
        if (!ok) return 0;
    }
    return 1;
}

void hashcache_put(const struct stat *before, const struct stat *after, const char hex[65])
{
    static atomic_uint serial;
    struct timespec now;
    char path[PATH_MAX], tmp[PATH_MAX + 48], line[ENTRY_MAX];
    if (!same_file(before, after) || after->st_ctim.tv_sec <= 0 || clock_gettime(CLOCK_REALTIME, &now) != 0) return;
    /* Settled: a later write cannot fall in the change time's tick. */
    if ((double)(now.tv_sec - after->st_ctim.tv_sec) + 1e-9 * (double)(now.tv_nsec - after->st_ctim.tv_nsec) <
        HASHCACHE_SETTLED_S)
        return;
    if (strlen(hex) != 64 || !is_hex64(hex) || !entry_line(after, hex, line, sizeof line) ||
        !entry_path(after, path, sizeof path) || !make_dirs(path))
        return;
    /* Written beside the entry under a name of this process and call,
     * then renamed over it: a reader sees the old entry or the new. */
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
    const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return;
    const size_t n = strlen(line);
    const int ok = write(fd, line, n) == (ssize_t)n;
    if (close(fd) != 0 || !ok || rename(tmp, path) != 0) unlink(tmp);
}
