/* SPDX-License-Identifier: BSD-3-Clause */
#include "taskpool.h"

#include "fdmpi.h"

#include "../common/clock.h"
#include "../common/interrupt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Request (worker rank -> 0): {records wanted, concepts so far, failed}.
 * Reply (0 -> worker rank): {k, len_0 .. len_k-1, id_0 .. id_k-1, words of
 * the k records};
 * k = 0 means "no more work": the requester stops asking. */
enum { TAG_REQ = 1, TAG_WORK = 2 };
enum { REQ_WANT, REQ_COUNT, REQ_FAILED, REQ_WORDS };

typedef struct {
    const uint64_t *rec;
    size_t len;
    uint64_t id;
} entry;

struct fd_pool {
    int rank, size, workers, total_workers;
    long max_sleep_ns;          /* longest pause between polls */
    MPI_Comm comm;              /* a private duplicate: our tags cannot collide */
    atomic_int *failed;         /* this rank's failure flag */
    atomic_int stop;            /* rank 0: some rank failed, hand out nothing more */

    /* rank 0 */
    fd_records recs;
    _Atomic size_t cursor;
    uint64_t *reported;         /* last count each rank reported */

    /* other ranks: the local queue, filled by the main thread */
    pthread_mutex_t lock;
    pthread_cond_t avail, low;  /* workers wait on avail, the main thread on low */
    entry *q;
    size_t qhead, qn, qcap;
    int end;                    /* rank 0 said there is no more work */
    uint64_t **bufs;            /* received messages, alive until destroy */
    size_t nbufs, capbufs;
};

fd_status fd_pool_create(fd_pool **out, int workers, atomic_int *failed)
{
    fd_status st = FD_OK;
    fd_pool *p = calloc(1, sizeof *p);
    if (!p) return fd_fail(FD_ERR_NOMEM, "out of memory");
    p->rank = 0;
    p->size = 1;
    p->workers = p->total_workers = workers > 0 ? workers : 1;
    p->max_sleep_ns = 1000000;
    p->failed = failed;
    p->comm = MPI_COMM_NULL;
    atomic_init(&p->stop, 0);
    atomic_init(&p->cursor, 0);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->avail, NULL);
    pthread_cond_init(&p->low, NULL);
    if (fd_mpi_active()) {
        MPI_CHECK_GOTO(MPI_Comm_dup(MPI_COMM_WORLD, &p->comm), st, fail);
        MPI_CHECK_GOTO(MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN), st, fail);
        MPI_CHECK_GOTO(MPI_Comm_rank(p->comm, &p->rank), st, fail);
        MPI_CHECK_GOTO(MPI_Comm_size(p->comm, &p->size), st, fail);
        MPI_CHECK_GOTO(MPI_Allreduce(&p->workers, &p->total_workers, 1, MPI_INT, MPI_SUM, p->comm), st, fail);
        if (p->rank == 0) FD_ALLOC_GOTO(p->reported, (size_t)p->size, st, fail);
    }
    *out = p;
    return FD_OK;
fail:
    fd_pool_destroy(&p);
    return st;
}

void fd_pool_destroy(fd_pool **pp)
{
    fd_pool *p = *pp;
    if (!p) return;
    if (p->comm != MPI_COMM_NULL && fd_mpi_active()) MPI_Comm_free(&p->comm);
    for (size_t i = 0; i < p->nbufs; i++) free(p->bufs[i]);
    free(p->bufs);
    free(p->q);
    free(p->reported);
    pthread_cond_destroy(&p->avail);
    pthread_cond_destroy(&p->low);
    pthread_mutex_destroy(&p->lock);
    free(p);
    *pp = NULL;
}

void fd_pool_set_work(fd_pool *p, const fd_records *recs) { p->recs = *recs; }

int fd_pool_rank(const fd_pool *p) { return p->rank; }
int fd_pool_total_workers(const fd_pool *p) { return p->total_workers; }
int fd_pool_ranks(const fd_pool *p) { return p->size; }
void fd_pool_set_max_sleep(fd_pool *p, long ns) { p->max_sleep_ns = ns < 1000 ? 1000 : ns; }


/* A signal to stop (common/interrupt.h) stops the handing out as a
 * failure does, and is reported to rank 0 the same way; the records in
 * flight finish, and the workload commits them. */
static int stopping(fd_pool *p) { return atomic_load(p->failed) || atomic_load(&p->stop) || fd_interrupted(); }

static size_t rec_len(const fd_records *r, size_t i)
{
    return (i + 1 < r->n ? r->start[i + 1] : r->nwords) - r->start[i];
}

static uint64_t rec_id(const fd_records *r, size_t i) { return r->ids ? r->ids[i] : i; }

/* Claims up to k records from rank 0's list; returns the first index and
 * sets *got (0 when the list is exhausted). */
static size_t claim(fd_pool *p, size_t k, size_t *got)
{
    size_t i = atomic_fetch_add(&p->cursor, k);
    *got = i < p->recs.n ? (p->recs.n - i < k ? p->recs.n - i : k) : 0;
    return i;
}

void fd_pool_next(fd_pool *p, const uint64_t **rec, size_t *len, uint64_t *id)
{
    *rec = NULL;
    *len = 0;
    *id = 0;
    if (p->rank == 0) {
        size_t got, i;
        if (stopping(p)) return;
        i = claim(p, 1, &got);
        if (!got) return;
        *rec = p->recs.data + p->recs.start[i];
        *len = rec_len(&p->recs, i);
        *id = rec_id(&p->recs, i);
        return;
    }
    pthread_mutex_lock(&p->lock);
    while (p->qhead == p->qn && !p->end && !stopping(p)) {
        pthread_cond_signal(&p->low);
        pthread_cond_wait(&p->avail, &p->lock);
    }
    if (p->qhead < p->qn && !stopping(p)) {
        *rec = p->q[p->qhead].rec;
        *len = p->q[p->qhead].len;
        *id = p->q[p->qhead].id;
        p->qhead++;
    }
    if (p->qn - p->qhead < (size_t)p->workers || stopping(p)) pthread_cond_signal(&p->low);
    pthread_mutex_unlock(&p->lock);
}

/* Polls for a message with sleeps that grow from 20 us to max_sleep_ns
 * (1 ms unless set): quick to answer, and nearly free while nothing
 * happens. */
static fd_status wait_message(fd_pool *p, int source, int tag, MPI_Status *ms)
{
    fd_status st = FD_OK;
    long ns = 20000 < p->max_sleep_ns ? 20000 : p->max_sleep_ns;
    for (;;) {
        int flag = 0;
        MPI_CHECK_GOTO(MPI_Iprobe(source, tag, p->comm, &flag, ms), st, done);
        if (flag) break;
        struct timespec ts = {0, ns};
        nanosleep(&ts, NULL);
        if (ns < p->max_sleep_ns) ns = ns * 2 < p->max_sleep_ns ? ns * 2 : p->max_sleep_ns;
    }
done:
    return st;
}

/* Rank 0: answer requests until every other rank has been told "no more". */
static fd_status serve(fd_pool *p, fd_progress *progress)
{
    fd_status st = FD_OK;
    uint64_t *msg = NULL;
    size_t cap = 0;
    int open = p->size - 1;
    while (open > 0) {
        MPI_Status ms;
        uint64_t req[REQ_WORDS];
        FD_TRY_GOTO(wait_message(p, MPI_ANY_SOURCE, TAG_REQ, &ms), st, done);
        int src = ms.MPI_SOURCE;
        MPI_CHECK_GOTO(MPI_Recv(req, REQ_WORDS, MPI_UINT64_T, src, TAG_REQ, p->comm, MPI_STATUS_IGNORE), st, done);
        if (progress && req[REQ_COUNT] > p->reported[src]) {
            fd_progress_add(progress, req[REQ_COUNT] - p->reported[src]);
            p->reported[src] = req[REQ_COUNT];
        }
        if (req[REQ_FAILED]) atomic_store(&p->stop, 1);
        /* Guided chunk: a share of what is left, never more than asked. */
        size_t cur = atomic_load(&p->cursor), left = cur < p->recs.n ? p->recs.n - cur : 0;
        size_t k = left / (2 * (size_t)p->total_workers);
        if (k < 1) k = 1;
        if (k > req[REQ_WANT]) k = (size_t)req[REQ_WANT];
        size_t got = 0, first = 0;
        if (!stopping(p)) first = claim(p, k, &got);
        size_t words = 1 + 2 * got;
        for (size_t i = 0; i < got; i++) words += rec_len(&p->recs, first + i);
        FD_TRY_GOTO(fd_grow((void **)&msg, &cap, words, sizeof *msg), st, done);
        msg[0] = got;
        size_t w = 1 + 2 * got;
        for (size_t i = 0; i < got; i++) {
            size_t len = rec_len(&p->recs, first + i);
            msg[1 + i] = len;
            msg[1 + got + i] = rec_id(&p->recs, first + i);
            memcpy(msg + w, p->recs.data + p->recs.start[first + i], len * sizeof *msg);
            w += len;
        }
        if (words > (size_t)INT32_MAX) {
            st = fd_fail(FD_ERR_INTERNAL, "a work message of %zu words is too large for MPI", words);
            goto done;
        }
        MPI_CHECK_GOTO(MPI_Send(msg, (int)words, MPI_UINT64_T, src, TAG_WORK, p->comm), st, done);
        if (got == 0) open--;
    }
done:
    if (st != FD_OK) atomic_store(&p->stop, 1);
    free(msg);
    return st;
}

/* Other ranks: keep the local queue topped up until rank 0 says "no more". */
static fd_status fetch(fd_pool *p, fd_progress *progress)
{
    fd_status st = FD_OK;
    for (;;) {
        uint64_t req[REQ_WORDS];
        pthread_mutex_lock(&p->lock);
        /* Timed: workers that fail exit without taking another record,
         * so a failure may come without a signal. */
        while (p->qn - p->qhead >= (size_t)p->workers && !stopping(p)) {
            const struct timespec ts = fd_deadline_in(50000000L);
            pthread_cond_timedwait(&p->low, &p->lock, &ts);
        }
        size_t queued = p->qn - p->qhead;
        pthread_mutex_unlock(&p->lock);
        req[REQ_WANT] = 2 * (size_t)p->workers - queued;
        req[REQ_COUNT] = progress ? atomic_load(&progress->count) : 0;
        req[REQ_FAILED] = (uint64_t)stopping(p);
        MPI_CHECK_GOTO(MPI_Send(req, REQ_WORDS, MPI_UINT64_T, 0, TAG_REQ, p->comm), st, done);

        MPI_Status ms;
        int words = 0;
        FD_TRY_GOTO(wait_message(p, 0, TAG_WORK, &ms), st, done);
        MPI_CHECK_GOTO(MPI_Get_count(&ms, MPI_UINT64_T, &words), st, done);
        if (words < 1) {
            st = fd_fail(FD_ERR_INTERNAL, "empty work message from rank 0");
            goto done;
        }
        FD_TRY_GOTO(fd_grow((void **)&p->bufs, &p->capbufs, p->nbufs + 1, sizeof *p->bufs), st, done);
        uint64_t *buf = malloc((size_t)words * sizeof *buf);
        if (!buf) {
            st = fd_fail(FD_ERR_NOMEM, "out of memory for a work message of %d words", words);
            goto done;
        }
        p->bufs[p->nbufs++] = buf;
        MPI_CHECK_GOTO(MPI_Recv(buf, words, MPI_UINT64_T, 0, TAG_WORK, p->comm, MPI_STATUS_IGNORE), st, done);

        uint64_t k = buf[0];
        if ((uint64_t)words < 1 + 2 * k) {
            st = fd_fail(FD_ERR_INTERNAL, "short work message from rank 0");
            goto done;
        }
        pthread_mutex_lock(&p->lock);
        st = fd_grow((void **)&p->q, &p->qcap, p->qn + k, sizeof *p->q);
        size_t w = 1 + 2 * k;
        for (uint64_t i = 0; st == FD_OK && i < k; i++) {
            p->q[p->qn++] = (entry){buf + w, buf[1 + i], buf[1 + k + i]};
            w += buf[1 + i];
        }
        if (k == 0 || st != FD_OK) p->end = 1;
        pthread_cond_broadcast(&p->avail);
        pthread_mutex_unlock(&p->lock);
        if (st != FD_OK || k == 0) break;
    }
done:
    if (st != FD_OK) {
        /* Release the workers; the caller reports the failure. */
        pthread_mutex_lock(&p->lock);
        p->end = 1;
        atomic_store(&p->stop, 1);
        pthread_cond_broadcast(&p->avail);
        pthread_mutex_unlock(&p->lock);
    }
    return st;
}

fd_status fd_pool_drive(fd_pool *p, fd_progress *progress)
{
    if (p->size == 1) return FD_OK;
    return p->rank == 0 ? serve(p, progress) : fetch(p, progress);
}

typedef struct {
    fd_pool *p;
    int t;
    fd_pool_fn fn;
    void *arg;
    fd_status st;
} worker_arg;

static void *worker_main(void *v)
{
    worker_arg *w = v;
    for (;;) {
        const uint64_t *rec;
        size_t len;
        uint64_t id;
        fd_pool_next(w->p, &rec, &len, &id);
        if (!rec) break;
        w->st = w->fn(w->arg, w->t, id, rec, len);
        if (w->st != FD_OK) {
            atomic_store(w->p->failed, 1);
            break;
        }
    }
    return NULL;
}

fd_status fd_pool_work(fd_pool *p, int threads, fd_pool_fn fn, void *arg, fd_progress *progress)
{
    fd_status st = FD_OK;
    if (threads < 1) threads = 1;
    worker_arg *w = calloc((size_t)threads, sizeof *w);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    int started = 0;
    if (!w || !th) {
        free(w);
        free(th);
        atomic_store(p->failed, 1);
        fd_pool_drive(p, progress);
        return fd_fail(FD_ERR_NOMEM, "out of memory for %d workers", threads);
    }
    for (int t = 0; t < threads; t++) {
        w[t] = (worker_arg){p, t, fn, arg, FD_OK};
        if (pthread_create(&th[t], NULL, worker_main, &w[t]) != 0) {
            atomic_store(p->failed, 1);
            st = fd_fail(FD_ERR_INTERNAL, "cannot start worker thread %d of %d", t, threads);
            break;
        }
        started++;
    }
    fd_status dst = fd_pool_drive(p, progress);
    if (dst != FD_OK) atomic_store(&p->stop, 1);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    if (st == FD_OK) st = dst;
    for (int t = 0; st == FD_OK && t < started; t++) st = w[t].st;
    free(w);
    free(th);
    return st;
}
