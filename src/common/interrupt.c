/* SPDX-License-Identifier: BSD-3-Clause */
#include "interrupt.h"

#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* Read by every worker thread, written by the handler: a lock-free atomic
 * (C11 allows those in a signal handler; a volatile sig_atomic_t is only
 * for the thread the signal interrupted). */
static atomic_int stop_signal;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag must be lock-free to be set from a signal handler");

static void on_signal(int sig)
{
    int none = 0;
    if (!atomic_compare_exchange_strong(&stop_signal, &none, sig)) {
        /* The second: the default action, now. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    static const char msg[] = "fcbo-dist: stopping at the next record boundary (a second signal stops at once)\n";
    /* write(2) is async-signal-safe; its result does not matter here. */
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
}

void fd_interrupt_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* Interrupted system calls restart: readers and MPI's polls are not
     * written to retry EINTR, and the flag is read between records. */
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

int fd_interrupted(void) { return atomic_load_explicit(&stop_signal, memory_order_relaxed); }

void fd_interrupt_raise(int sig)
{
    int none = 0;
    atomic_compare_exchange_strong(&stop_signal, &none, sig);
}

fd_status fd_interrupt_check(void)
{
    const int sig = fd_interrupted();
    if (!sig) return FD_OK;
    return fd_fail(FD_ERR_INTERRUPTED, "stopped by %s before the run was complete",
                   sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT (Ctrl-C)" : "a signal");
}
