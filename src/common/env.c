/* SPDX-License-Identifier: BSD-3-Clause */
#include "env.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

fd_status fd_env_count(const char *name, uint64_t lo, uint64_t hi, uint64_t dflt, const char *what, uint64_t *out)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v) return FD_OK;
    char *end;
    errno = 0;
    /* strtoull takes leading blanks and a minus sign (wrapping around):
     * only digits count as a number here. */
    const unsigned long long n = isdigit((unsigned char)v[0]) ? strtoull(v, &end, 10) : 0;
    if (!isdigit((unsigned char)v[0]) || *end || errno || n < lo || n > hi) {
        if (hi == UINT64_MAX)
            return fd_fail(FD_ERR_USAGE, "%s=%s: expected a number of %s, at least %llu", name, v, what,
                           (unsigned long long)lo);
        return fd_fail(FD_ERR_USAGE, "%s=%s: expected a number of %s from %llu to %llu", name, v, what,
                       (unsigned long long)lo, (unsigned long long)hi);
    }
    *out = n;
    return FD_OK;
}

fd_status fd_env_seconds(const char *name, double dflt, double *out)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v) return FD_OK;
    char *end;
    errno = 0;
    /* strtod also takes leading blanks, signs, "inf", "nan" and hex:
     * a number of seconds starts with a digit or a point, and is not hex. */
    const int plain = (isdigit((unsigned char)v[0]) || v[0] == '.') && !(v[0] == '0' && (v[1] == 'x' || v[1] == 'X'));
    const double x = plain ? strtod(v, &end) : 0;
    if (!plain || *end || errno || !(x > 0) || !isfinite(x))
        return fd_fail(FD_ERR_USAGE, "%s=%s: expected a number of seconds greater than 0", name, v);
    *out = x;
    return FD_OK;
}

fd_status fd_env_word(const char *name, const char *const *words, int dflt, int *out)
{
    const char *v = getenv(name);
    *out = dflt;
    if (!v) return FD_OK;
    char list[256] = "";
    for (int i = 0; words[i]; i++) {
        if (!strcmp(v, words[i])) {
            *out = i;
            return FD_OK;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? (words[i + 1] ? ", " : " or ") : "",
                 words[i]);
    }
    return fd_fail(FD_ERR_USAGE, "%s=%s: expected %s", name, v, list);
}

/* The switches: name and the words it takes, the default first
 * (docs/performance.md, "Tuning knobs"). */
static const char *const on_off[] = {"on", "off", NULL},
                         *const zero_one[] = {"0", "1", NULL}, *const device_host[] = {"device", "host", NULL},
                         *const auto_always[] = {"auto", "always", NULL}, *const early_exit[] = {"early", "exit", NULL},
                         *const staged_pageable[] = {"staged", "pageable", NULL};
const char *const fd_env_layouts[] = {"auto", "dense", "sparse", NULL};
static const struct {
    const char *name;
    const char *const *words;
} switches[] = {
    {"FD_BCP_GPU_SWEEP", device_host}, /* bcp/bcp_cuda.c */
    {"FD_DPC_GRID", on_off},          /* dpc/grid.c, dpc/kdtree.c */
    {"FD_GPU_HOST_START", on_off},    /* lattice/lattice_job.c */
    {"FD_GPU_RELEASE", early_exit},   /* job/job.c */
    {"FD_GPU_UPLOAD", staged_pageable}, /* cuda/upload.c */
    {"FD_DPC_TREE", auto_always},     /* dpc/dpc.c */
    {"FD_H5_CHECKSUM", on_off},       /* io/h5util.c */
    {"FD_HASH_CACHE", on_off},        /* common/hashcache.c */
    {"FD_HUGEPAGES", on_off},         /* common/bigmem.c */
    {"FD_H5_DIRECT", on_off},         /* io/h5util.c */
    {"FD_LATTICE_LAYOUT", fd_env_layouts}, /* lattice/fcbo.c */
    {"FD_NCCL", on_off},              /* mpi/nccl_comm.c */
    {"FD_SPEARMAN_SCALAR", zero_one}, /* spearman/tile.c */
    {"FD_WRITEBACK", on_off},         /* common/writeback.c */
};

size_t fd_env_switches(void) { return sizeof switches / sizeof *switches; }

const char *fd_env_switch(size_t i, const char *const **words)
{
    if (i >= fd_env_switches()) return NULL;
    if (words) *words = switches[i].words;
    return switches[i].name;
}

int fd_env_switched(const char *name)
{
    int w;
    for (size_t i = 0; i < sizeof switches / sizeof *switches; i++)
        if (!strcmp(switches[i].name, name)) return fd_env_word(name, switches[i].words, 0, &w) == FD_OK && w == 1;
    return 0; /* not a switch of the table */
}

fd_status fd_env_check(void)
{
    int w;
    double s;
    for (size_t i = 0; i < sizeof switches / sizeof *switches; i++)
        FD_TRY(fd_env_word(switches[i].name, switches[i].words, 0, &w));
    /* common/hashcache.c, read where a failure is a miss */
    uint64_t n;
    FD_TRY(fd_env_count("FD_HASH_CACHE_MIN", 0, UINT64_MAX, 0, "bytes", &n));
    /* common/progress.c; the default does not matter here */
    return fd_env_seconds("FD_PROGRESS_INTERVAL", 1, &s);
}
