/* SPDX-License-Identifier: BSD-3-Clause */
/* Concepts on their way out: per-thread batches in CSR form and the
 * writers (HDF5, text, in-memory) that consume them.
 *
 * A batch holds n concepts: supports, intents (user attribute ids,
 * ascending) and optionally extents (object ids, ascending).  int_end[i] is
 * the end of concept i's ids inside int_ids (its start is int_end[i-1], or 0).
 * Workers fill their own batch without locking and hand it to
 * concept_sink_flush(), which passes it to every writer under one mutex
 * and empties it. */
#ifndef FD_CONCEPTS_H
#define FD_CONCEPTS_H

#include "../common/progress.h"
#include "../common/status.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

typedef struct concept_batch {
    uint64_t n, cap_n;
    uint32_t *supp;
    uint64_t *int_end;
    uint32_t *int_ids;
    size_t nint, cap_int;
    uint64_t *ext_end;
    uint32_t *ext_ids;
    size_t next, cap_ext;
} concept_batch;

typedef struct concept_writer {
    /* Consumes a batch; called with the sink's lock held, so it may keep
     * state without locks of its own.  Must not keep pointers into b. */
    fd_status (*write)(void *self, const concept_batch *b);
    void *self;
} concept_writer;

#define CONCEPT_SINK_MAX_WRITERS 4

typedef struct concept_sink {
    concept_writer writers[CONCEPT_SINK_MAX_WRITERS];
    int nwriters;
    int with_extents;
    fd_progress *progress;     /* may be NULL */
    pthread_mutex_t lock;
    atomic_int failed;         /* set once any write failed: workers stop early */
} concept_sink;

void concept_batch_init(concept_batch *b);
void concept_batch_free(concept_batch *b);
/* Room for one more concept with ni intent ids and ne extent ids. */
fd_status concept_batch_reserve(concept_batch *b, size_t ni, size_t ne, int with_extents);

fd_status concept_sink_init(concept_sink *s, int with_extents, fd_progress *progress);
void concept_sink_destroy(concept_sink *s);
/* Adds a writer; at most CONCEPT_SINK_MAX_WRITERS. */
fd_status concept_sink_add(concept_sink *s, concept_writer w);
/* Hands b to every writer, then empties it.  Empty batches cost nothing. */
fd_status concept_sink_flush(concept_sink *s, concept_batch *b);

/* A writer that prints one intent per line ("3 7 12"), for --text. */
typedef struct text_writer text_writer;
fd_status text_writer_create(text_writer **out, FILE *f);
concept_writer text_writer_as(text_writer *t);
void text_writer_destroy(text_writer **t);

#endif
