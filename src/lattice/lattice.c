#include "lattice.h"

#include <stdio.h>
#include <string.h>

void list_source_init(list_source *s, const task_list *list)
{
    s->list = list;
    atomic_init(&s->next, 0);
}

static fd_status list_next(void *self, const uint64_t **task)
{
    list_source *s = self;
    size_t i = atomic_fetch_add(&s->next, 1);
    *task = i < s->list->n ? task_at(s->list, i) : NULL;
    return FD_OK;
}

task_source list_source_as(list_source *s) { return (task_source){list_next, s}; }

/* Tasks per worker: enough that the largest subtrees, taken first, are a
 * small part of the whole and the rest evens out the finish. */
#define TASKS_PER_WORKER 64

fd_status lattice_enumerate(const fcbo_prep *p, const lattice_opts *o, const struct lattice_ops *ops,
                            concept_sink *sink, fcbo_stats *stats)
{
    fd_status st = FD_OK;
    task_list tasks;
    fcbo_ws *w = NULL;
    list_source ls;
    task_list_init(&tasks);
    FD_TRY_GOTO(fcbo_root(p, &tasks), st, done);
    if (o->threads > 1) {
        FD_TRY_GOTO(fcbo_ws_create(&w, p, sink), st, done);
        FD_TRY_GOTO(fcbo_split(w, &tasks, (size_t)o->threads * TASKS_PER_WORKER), st, done);
        FD_TRY_GOTO(fcbo_ws_flush(w), st, done);
        fcbo_stats_add(stats, fcbo_ws_stats(w));
    }
    list_source_init(&ls, &tasks);
    task_source src = list_source_as(&ls);
    st = ops->run(p, o, sink, &src, stats);
done:
    fcbo_ws_destroy(&w);
    task_list_free(&tasks);
    return st;
}
