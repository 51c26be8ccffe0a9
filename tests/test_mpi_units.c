/* Under mpirun -np 3 (or any count >= 2): the rank placement rules and the
 * task pool, against what they must guarantee.
 *  - every record is run exactly once, by some rank, with its contents
 *    intact, whatever the interleaving of requests;
 *  - a rank that fails makes the pool stop everywhere, without a hang;
 *  - a GPU is picked by local rank, or device 0 when the launcher gave
 *    each task its own; more ranks than GPUs is refused with a message;
 *  - the early context (device_warm.h) is made for the placed device, on
 *    a thread other than the caller's, and joined; a placement refused
 *    starts nothing; a backend without devices places nothing. */
#include "mpi/device_warm.h"
#include "mpi/fdmpi.h"
#include "mpi/placement.h"
#include "mpi/taskpool.h"
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NREC 2000

typedef struct {
    fd_pool *pool;
    uint32_t *seen;          /* per record: times this rank ran it */
    int fail_after;          /* this worker fails after that many records (-1: never) */
    atomic_int *failed;
    int bad;                 /* records whose contents were wrong */
    pthread_mutex_t *lock;
} wk_arg;

/* Record i: {i, then i % 17 words of i * 31 + k}. */
static size_t rec_words(size_t i) { return 1 + i % 17; }
/* Ids the list gives its records (as a resumed run's list does). */
static uint64_t rec_id(size_t i) { return 1000 + 3 * (uint64_t)i; }

static void *worker(void *p)
{
    wk_arg *a = p;
    int done = 0;
    for (;;) {
        const uint64_t *r;
        size_t len;
        uint64_t id;
        fd_pool_next(a->pool, &r, &len, &id);
        if (!r) break;
        size_t i = (size_t)r[0];
        int ok = i < NREC && len == rec_words(i) && id == rec_id(i);
        for (size_t k = 1; ok && k < len; k++) ok = r[k] == i * 31 + k;
        usleep(300); /* real work takes time: lets the ranks interleave */
        pthread_mutex_lock(a->lock);
        if (!ok) a->bad++;
        else a->seen[i]++;
        pthread_mutex_unlock(a->lock);
        if (a->fail_after >= 0 && ++done >= a->fail_after) {
            atomic_store(a->failed, 1);
            break;
        }
    }
    return NULL;
}

/* One pool run with 2 workers per rank; returns how often each record ran
 * (summed over ranks, on every rank) and the number of corrupt records. */
static int pool_run(int failing_rank, uint32_t *total, int *bad)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    atomic_int failed;
    atomic_init(&failed, 0);
    fd_pool *pool = NULL;
    CHECK(fd_pool_create(&pool, 2, &failed) == FD_OK, "pool create: %s", fd_errmsg());
    /* The failing runs also take the short polls of a GPU backend. */
    if (failing_rank >= 0) fd_pool_set_max_sleep(pool, 20000);
    uint64_t *data = NULL;
    size_t *start = NULL, nw = 0;
    uint64_t *ids = NULL;
    if (rank == 0) {
        for (size_t i = 0; i < NREC; i++) nw += rec_words(i);
        data = calloc(nw, sizeof *data);
        start = calloc(NREC, sizeof *start);
        ids = calloc(NREC, sizeof *ids);
        size_t w = 0;
        for (size_t i = 0; i < NREC; i++) {
            start[i] = w;
            ids[i] = rec_id(i);
            data[w++] = i;
            for (size_t k = 1; k < rec_words(i); k++) data[w++] = i * 31 + k;
        }
        fd_records recs = {data, start, NREC, nw, ids};
        fd_pool_set_work(pool, &recs);
    }
    uint32_t *seen = calloc(NREC, sizeof *seen);
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    wk_arg a[2];
    pthread_t th[2];
    for (int t = 0; t < 2; t++) {
        a[t] = (wk_arg){pool, seen, rank == failing_rank && t == 0 ? 3 : -1, &failed, 0, &lock};
        pthread_create(&th[t], NULL, worker, &a[t]);
    }
    CHECK(fd_pool_drive(pool, NULL) == FD_OK, "drive: %s", fd_errmsg());
    for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
    int mybad = a[0].bad + a[1].bad;
    MPI_Allreduce(seen, total, NREC, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&mybad, bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    fd_pool_destroy(&pool);
    free(seen);
    free(data);
    free(start);
    free(ids);
    return 0;
}

static void test_pool(void)
{
    uint32_t *total = calloc(NREC, sizeof *total);
    int bad = 0;
    pool_run(-1, total, &bad);
    int once = 1;
    for (size_t i = 0; i < NREC; i++) once &= total[i] == 1;
    CHECK(once && bad == 0, "pool: every record exactly once, intact (bad %d)", bad);

    /* Rank 1 fails after 3 records: every rank returns, and the pool stops
     * handing out work long before the end. */
    pool_run(1, total, &bad);
    uint64_t ran = 0;
    int atmost = 1;
    for (size_t i = 0; i < NREC; i++) {
        ran += total[i];
        atmost &= total[i] <= 1;
    }
    CHECK(atmost && bad == 0, "pool with a failing rank: no record twice");
    CHECK(ran < NREC, "pool with a failing rank: stopped early (%llu of %d ran)", (unsigned long long)ran, NREC);
    free(total);
}

static void test_placement(const fd_mpi *m)
{
    int d = -1;
    CHECK(fd_place_threads(m) >= 1, "threads >= 1");
    unsetenv("CUDA_VISIBLE_DEVICES");
    CHECK(fd_place_device(m, m->local_size, &d) == FD_OK && d == m->local_rank,
          "one GPU per local rank: rank %d got device %d", m->rank, d);
    fd_errclear();
    fd_status st = fd_place_device(m, m->local_size - 1, &d);
    char want[64];
    snprintf(want, sizeof want, "runs %d ranks but has %d GPU", m->local_size, m->local_size - 1);
    CHECK(st == FD_ERR_UNAVAILABLE && strstr(fd_errmsg(), want), "too few GPUs refused: %s", fd_errmsg());
    fd_errclear();
    /* The launcher bound one GPU to each task: each sees "its" device 0. */
    char vis[16];
    snprintf(vis, sizeof vis, "%d", m->local_rank);
    setenv("CUDA_VISIBLE_DEVICES", vis, 1);
    CHECK(fd_place_device(m, 1, &d) == FD_OK && d == 0, "per-task GPU binding: device %d", d);
    fd_errclear();
    /* The same single GPU visible to every rank: too few. */
    setenv("CUDA_VISIBLE_DEVICES", "0", 1);
    CHECK(fd_place_device(m, 1, &d) == FD_ERR_UNAVAILABLE, "one shared GPU for %d ranks refused", m->local_size);
    fd_errclear();
    unsetenv("CUDA_VISIBLE_DEVICES");
    CHECK(fd_place_device(m, 0, &d) == FD_ERR_UNAVAILABLE, "no GPU refused");
    fd_errclear();
}

/* Stand-ins for a backend's devices and warm_device. */
static int fake_devices_n;
static int fake_devices(void) { return fake_devices_n; }
static int warmed_device = -2, warm_calls;
static pthread_t warmed_by;
static void fake_warm(int device)
{
    usleep(50000); /* so that a join that did not wait would see nothing */
    warmed_by = pthread_self();
    warmed_device = device;
    warm_calls++;
}

static void test_warm(const fd_mpi *m)
{
    fd_warm w;
    const fd_device_ops both = {.name = "fake", .devices = fake_devices, .warm_device = fake_warm},
                        no_devices = {.name = "cpu", .warm_device = fake_warm},
                        no_warm = {.name = "fake", .devices = fake_devices};
    unsetenv("CUDA_VISIBLE_DEVICES");
    fd_errclear();
    fake_devices_n = m->local_size;
    CHECK(fd_warm_start(&w, m, &both, 1) == FD_OK && w.device == m->local_rank,
          "warm: placed on device %d", w.device);
    fd_warm_join(&w);
    CHECK(warm_calls == 1 && warmed_device == m->local_rank && !pthread_equal(warmed_by, pthread_self()),
          "warm: device %d warmed once (%d calls), on a thread of its own, joined", warmed_device, warm_calls);
    fd_warm_join(&w); /* again: nothing */
    fake_devices_n = m->local_size - 1;
    CHECK(fd_warm_start(&w, m, &both, 1) == FD_ERR_UNAVAILABLE && strstr(fd_errmsg(), "GPU"),
          "warm: too few GPUs refused: %s", fd_errmsg());
    fd_warm_join(&w);
    fd_errclear();
    CHECK(warm_calls == 1, "warm: nothing started when placement failed (%d calls)", warm_calls);
    CHECK(fd_warm_start(&w, m, &no_devices, 1) == FD_OK && w.device == -1, "warm: no devices, no placement");
    fd_warm_join(&w);
    fake_devices_n = m->local_size;
    CHECK(fd_warm_start(&w, m, &no_warm, 1) == FD_OK && w.device == m->local_rank && !w.s,
          "warm: placed without a warm function, no thread");
    fd_warm_join(&w);
    CHECK(warm_calls == 1, "warm: called %d times in all", warm_calls);
    /* Counted on the thread, beside the read: no refusal before it (the
     * job places the rank after it); the thread starts the rank's GPU
     * when the node has it. */
    CHECK(fd_warm_start(&w, m, &both, 0) == FD_OK && w.device == -1 && w.index == m->local_rank,
          "warm beside the read: device %d, index %d", w.device, w.index);
    fd_warm_join(&w);
    CHECK(warm_calls == 2 && warmed_device == m->local_rank, "warm beside the read: device %d warmed (%d calls)",
          warmed_device, warm_calls);
    fake_devices_n = m->local_size - 1;
    CHECK(fd_warm_start(&w, m, &both, 0) == FD_OK, "warm beside the read, too few GPUs: %s", fd_errmsg());
    fd_warm_join(&w);
    const int want = m->local_rank < m->local_size - 1 ? 3 : 2;
    CHECK(warm_calls == want, "warm beside the read, too few GPUs: %d calls, expected %d", warm_calls, want);
}

static void test_agree(const fd_mpi *m)
{
    int who = -1;
    fd_errclear();
    if (m->rank == 1) fd_fail(FD_ERR_IO, "disk full on purpose");
    fd_status st = fd_mpi_agree(m->rank == 1 ? FD_ERR_IO : FD_OK, &who);
    CHECK(st == FD_ERR_IO && who == 1, "agree: rank 1's failure seen everywhere (status %d, rank %d)", st, who);
    CHECK(strstr(fd_errmsg(), "rank 1 of") && strstr(fd_errmsg(), "disk full on purpose"),
          "agree: the message travels: %s", fd_errmsg());
    fd_errclear();
    uint64_t one[2] = {1, (uint64_t)m->rank}, before[2];
    CHECK(fd_mpi_exscan_u64(one, before, 2) == FD_OK && before[0] == (uint64_t)m->rank &&
              before[1] == (uint64_t)m->rank * (m->rank - 1) / 2,
          "exscan");
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    fd_mpi m;
    CHECK(fd_mpi_query(&m) == FD_OK, "query");
    if (m.size < 2) {
        printf("skipped: run under mpirun -np 3\n");
        MPI_Finalize();
        return 77;
    }
    test_pool();
    test_placement(&m);
    test_warm(&m);
    test_agree(&m);
    int mine = t_fail, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (m.rank == 0) printf("%s: %d failures over all ranks\n", argv[0], all);
    MPI_Finalize();
    return all ? 1 : 0;
}
