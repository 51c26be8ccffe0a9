/* SPDX-License-Identifier: BSD-3-Clause */
#include "concepts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void concept_batch_init(concept_batch *b) { memset(b, 0, sizeof *b); }

void concept_batch_free(concept_batch *b)
{
    free(b->supp);
    free(b->int_end);
    free(b->int_ids);
    free(b->ext_end);
    free(b->ext_ids);
    memset(b, 0, sizeof *b);
}

fd_status concept_batch_reserve(concept_batch *b, size_t ni, size_t ne, int with_extents)
{
    if (b->n + 1 > b->cap_n) {
        size_t cap = b->cap_n, cap2 = b->cap_n, cap3 = b->cap_n;
        FD_TRY(fd_grow((void **)&b->supp, &cap, b->n + 1, sizeof *b->supp));
        FD_TRY(fd_grow((void **)&b->int_end, &cap2, b->n + 1, sizeof *b->int_end));
        if (with_extents) FD_TRY(fd_grow((void **)&b->ext_end, &cap3, b->n + 1, sizeof *b->ext_end));
        b->cap_n = cap;
    }
    FD_TRY(fd_grow((void **)&b->int_ids, &b->cap_int, b->nint + ni, sizeof *b->int_ids));
    if (with_extents) FD_TRY(fd_grow((void **)&b->ext_ids, &b->cap_ext, b->next + ne, sizeof *b->ext_ids));
    return FD_OK;
}

fd_status concept_sink_init(concept_sink *s, int with_extents, fd_progress *progress)
{
    memset(s, 0, sizeof *s);
    s->with_extents = with_extents;
    s->progress = progress;
    atomic_init(&s->failed, 0);
    if (pthread_mutex_init(&s->lock, NULL) != 0) return fd_fail(FD_ERR_INTERNAL, "pthread_mutex_init failed");
    return FD_OK;
}

void concept_sink_destroy(concept_sink *s) { pthread_mutex_destroy(&s->lock); }

fd_status concept_sink_add(concept_sink *s, concept_writer w)
{
    if (s->nwriters == CONCEPT_SINK_MAX_WRITERS) return fd_fail(FD_ERR_INTERNAL, "too many concept writers");
    s->writers[s->nwriters++] = w;
    return FD_OK;
}

fd_status concept_sink_flush(concept_sink *s, concept_batch *b)
{
    fd_status st = FD_OK;
    if (b->n == 0) return FD_OK;
    if (atomic_load(&s->failed)) return FD_ERR_IO; /* the first failure was recorded already */
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->nwriters && st == FD_OK; i++) st = s->writers[i].write(s->writers[i].self, b);
    pthread_mutex_unlock(&s->lock);
    if (st != FD_OK) atomic_store(&s->failed, 1);
    if (s->progress) fd_progress_add(s->progress, b->n);
    b->n = 0;
    b->nint = 0;
    b->next = 0;
    return st;
}

/* An id below 1000 is written by one 4-byte store from a table of its
 * digits and a blank ("7 ", "42 ", "123 "), and the pointer moves by its
 * length; the division loop it replaced took 163 M of mushroom's 1,290 M
 * instructions, the table 88 M (bench/lattice-instructions.sh; the wall
 * time within the VM's noise, ab.csv text-id-table).  Larger ids write
 * their leading part first, then three digits at a time. */
struct text_writer {
    FILE *f;
    char *buf;
    size_t cap;
    uint32_t id_text[1000];  /* digits left-aligned, then a blank */
    uint32_t pad_text[1000]; /* three digits with leading zeros, then a blank */
};

static uint32_t pack4(const char c[4])
{
    uint32_t v;
    memcpy(&v, c, 4);
    return v;
}

fd_status text_writer_create(text_writer **out, FILE *f)
{
    text_writer *t = calloc(1, sizeof *t);
    if (!t) return fd_fail(FD_ERR_NOMEM, "out of memory");
    t->f = f;
    for (int v = 0; v < 1000; v++) {
        char c[5];
        snprintf(c, sizeof c, "%-4d", v);
        c[v < 10 ? 1 : v < 100 ? 2 : 3] = ' ';
        t->id_text[v] = pack4(c);
        snprintf(c, sizeof c, "%03d ", v);
        t->pad_text[v] = pack4(c);
    }
    *out = t;
    return FD_OK;
}

static inline unsigned id_len(uint32_t v) { return v < 10 ? 2u : v < 100 ? 3u : 4u; }

/* Writes v and a blank; up to 4 bytes past the returned end may be
 * written (the caller's room is 11 bytes an id plus one). */
static inline char *put_id(const text_writer *t, char *p, uint32_t v)
{
    if (v < 1000) {
        memcpy(p, &t->id_text[v], 4);
        return p + id_len(v);
    }
    uint32_t parts[4];
    int k = 0;
    while (v >= 1000) {
        parts[k++] = v % 1000;
        v /= 1000;
    }
    memcpy(p, &t->id_text[v], 4);
    p += id_len(v) - 1; /* the leading part without its blank */
    while (k) {
        memcpy(p, &t->pad_text[parts[--k]], 4);
        p += 3;
    }
    return p + 1;
}

/* The text in pieces of TEXT_CHUNK bytes (or one concept's, if larger):
 * a whole batch's worst case, 11 bytes an id, was the largest buffer of a
 * sparse run (9 MB of its 36). */
#define TEXT_CHUNK ((size_t)256 << 10)

static fd_status text_flush(text_writer *t, size_t len)
{
    if (len && fwrite(t->buf, 1, len, t->f) != len) return fd_fail(FD_ERR_IO, "writing intents to standard output failed");
    return FD_OK;
}

static fd_status text_write(void *self, const concept_batch *b)
{
    text_writer *t = self;
    size_t len = 0;
    uint64_t s = 0;
    for (uint64_t i = 0; i < b->n; i++) {
        /* At most 11 bytes per id (10 digits and a blank) plus a newline,
         * and the 4-byte stores' slack. */
        const size_t need = (size_t)(b->int_end[i] - s) * 11 + 1 + 4;
        if (len + need > t->cap) {
            FD_TRY(text_flush(t, len));
            len = 0;
            const size_t cap = need > TEXT_CHUNK ? need : TEXT_CHUNK;
            if (cap > t->cap) {
                char *nb = realloc(t->buf, cap);
                if (!nb) return fd_fail(FD_ERR_NOMEM, "out of memory for text output");
                t->buf = nb;
                t->cap = cap;
            }
        }
        char *p = t->buf + len;
        for (uint64_t k = s; k < b->int_end[i]; k++) p = put_id(t, p, b->int_ids[k]);
        /* The last blank becomes the newline (an empty intent: just it). */
        if (b->int_end[i] > s) p--;
        *p++ = '\n';
        len = (size_t)(p - t->buf);
        s = b->int_end[i];
    }
    return text_flush(t, len);
}

concept_writer text_writer_as(text_writer *t) { return (concept_writer){text_write, t}; }

void text_writer_destroy(text_writer **pt)
{
    if (!*pt) return;
    free((*pt)->buf);
    free(*pt);
    *pt = NULL;
}
