#include "interrupt.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    if (stop_signal) {
        /* The second: the default action, now. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    stop_signal = sig;
    static const char msg[] = "fcbo-dist: stopping at the next record boundary (a second signal stops at once)\n";
    /* write(2) is async-signal-safe; its result does not matter here. */
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) stop_signal = sig;
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

int fd_interrupted(void) { return stop_signal; }

void fd_interrupt_raise(int sig)
{
    if (!stop_signal) stop_signal = sig;
}

fd_status fd_interrupt_check(void)
{
    const int sig = stop_signal;
    if (!sig) return FD_OK;
    return fd_fail(FD_ERR_INTERRUPTED, "stopped by %s before the run was complete",
                   sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT (Ctrl-C)" : "a signal");
}
