/* SPDX-License-Identifier: BSD-3-Clause */
/* fcbo-dist: one binary, one subcommand per workload (table below).
 * MPI is initialised here and only here, for the subcommands that use it. */
#include "cmds/cmds.h"
#include "common/env.h"
#include "common/gemm.h"
#include "common/interrupt.h"
#include "io/h5util.h"
#include "mpi/device_warm.h"
#include "mpi/fdmpi.h"
#include "version.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *fd_command_line;

typedef struct {
    const char *name;
    fd_status (*run)(int argc, char **argv);
    int needs_mpi;
    const char *summary;
    int hdf5_on_demand; /* starts HDF5 itself where it uses it (h5u_start) */
} fd_cmd;

static const fd_cmd commands[] = {
    {"lattice", cmd_lattice, 1, "all formal concepts of a binary context (FCbO)", 1},
    {"spearman", cmd_spearman, 1, "all-pairs Spearman correlation with p-values, exact", 0},
    {"dpc", cmd_dpc, 1, "density peak clustering, exact", 0},
    {"bcp", cmd_bcp, 1, "Bayesian CP factorisation of a dense tensor, automatic rank", 0},
    {"rules", cmd_rules, 0, "implications (stem base) and association rules of a lattice", 0},
    {"gen", cmd_gen, 0, "synthetic inputs for tests and benchmarks", 0},
    {"info", cmd_info, 0, "summarise a result file, or print its contents as text", 0},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: fcbo-dist COMMAND [OPTIONS]   (under mpirun: one rank per GPU)\n\n"
            "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "  version   build configuration\n\n"
            "'fcbo-dist COMMAND --help' describes a command.  Exit status: 0 success,\n"
            "1 failure while running (I/O, MPI, device), 2 bad input or usage, 128 + N\n"
            "stopped by signal N (143: SIGTERM, 130: SIGINT) after keeping what was done.\n");
}

static char *join_args(int argc, char **argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
    char *s = malloc(n), *p = s;
    if (!s) return NULL;
    for (int i = 0; i < argc; i++) p += sprintf(p, i ? " %s" : "%s", argv[i]);
    *p = 0;
    return s;
}

/* Whether a launcher (mpirun, srun with PMI/PMIx, mpiexec) started us.
 * A plain run skips MPI_Init: a singleton init costs a noticeable fraction
 * of a second and needs nothing from MPI.  FD_MPI=1 forces MPI on. */
static int launched_by_mpi(void)
{
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS",
                                 "FD_MPI"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

static int wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    return 0;
}

/* One message per failure: a failure every rank agreed on is printed by
 * rank 0 alone; any other carries the rank that saw it. */
static void report(fd_status st)
{
    (void)st;
    fd_mpi m = {0, 1, 0, 1};
    /* Not fd_mpi_query: it is collective, and only this rank may be here. */
    if (fd_mpi_active() && (MPI_Comm_rank(MPI_COMM_WORLD, &m.rank) != MPI_SUCCESS ||
                            MPI_Comm_size(MPI_COMM_WORLD, &m.size) != MPI_SUCCESS))
        m = (fd_mpi){0, 1, 0, 1};
    if (m.size > 1 && fd_mpi_error_relayed()) {
        if (m.rank == 0) fprintf(stderr, "fcbo-dist: error: %s\n", fd_errmsg());
    } else if (m.size > 1) {
        fprintf(stderr, "fcbo-dist: error: rank %d of %d: %s\n", m.rank, m.size, fd_errmsg());
    } else {
        fprintf(stderr, "fcbo-dist: error: %s\n", fd_errmsg());
    }
}

/* build/fd_git.c, written by cmake/gitrev.cmake at every build. */
extern const char fd_git_commit[];

int main(int argc, char **argv)
{
    /* Past `ulimit -f` a write should fail (EFBIG) and take the error
     * path, which removes what was half written, rather than kill the
     * process and leave it. */
    signal(SIGXFSZ, SIG_IGN);
    fd_blas_core_hint();
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        unsigned maj, min, rel;
        H5get_libversion(&maj, &min, &rel);
        printf("fcbo-dist %s (commit %s)\nCUDA backend: %s\nNCCL: %s\nHDF5: %u.%u.%u (serial)\nMPI: %d.%d\ncairo (dpc --plot): %s\n"
               "OpenBLAS (bcp on the CPU): %s\n",
               FD_VERSION, fd_git_commit, FD_HAVE_CUDA ? "built" : "not built", FD_HAVE_NCCL ? "built" : "not built", maj, min, rel,
               MPI_VERSION, MPI_SUBVERSION, FD_HAVE_CAIRO ? "built" : "not built",
               FD_HAVE_OPENBLAS ? "built" : "not built");
        return 0;
    }
    const fd_cmd *cmd = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(argv[1], commands[i].name)) cmd = &commands[i];
    if (!cmd) {
        fprintf(stderr, "fcbo-dist: error: unknown command '%s'\n\n", argv[1]);
        usage(stderr);
        return 2;
    }
    /* A knob set wrong stops every rank before any work, each saying so
     * (no rank waits in a collective for one that left). */
    fd_status env_st = wants_help(argc, argv) ? FD_OK : fd_env_check();
    if (env_st != FD_OK) {
        report(env_st);
        return fd_exit_code(env_st);
    }
    fd_command_line = join_args(argc, argv);
    h5u_init();
    if (!cmd->hdf5_on_demand) h5u_start();
    int mpi = cmd->needs_mpi && !wants_help(argc, argv) && launched_by_mpi();
    /* srun without an MPI plugin starts independent copies that would
     * each do the whole job and write the same files. */
    const char *step_tasks = getenv("SLURM_STEP_NUM_TASKS");
    if (cmd->needs_mpi && !mpi && !wants_help(argc, argv) && step_tasks && atoi(step_tasks) > 1) {
        fprintf(stderr,
                "fcbo-dist: error: srun started %s tasks without an MPI interface, so they cannot work together; "
                "use 'srun --mpi=pmix' (see 'srun --mpi=list') or mpirun\n",
                step_tasks);
        free(fd_command_line);
        return 2;
    }
    if (mpi) {
        int provided;
        if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            fprintf(stderr, "fcbo-dist: error: MPI_Init_thread failed\n");
            return 1;
        }
        /* Errors come back as codes and are reported with context, instead
         * of MPI aborting the job without saying where. */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    /* The workloads stop at a record boundary on SIGTERM or SIGINT, keep
     * what they finished where they checkpoint, and leave no partial
     * result (docs/running.md, "Data safety"). */
    if (cmd->needs_mpi) fd_interrupt_install();
    fd_status st = cmd->run(argc - 1, argv + 1);
    if (st != FD_OK && *fd_errmsg()) report(st);
    free(fd_command_line);
    if (mpi && st == FD_ERR_MPI) {
        /* The ranks can no longer agree on anything: end the job now
         * rather than leave the others waiting in a collective. */
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (mpi) MPI_Finalize();
    /* After a failure HDF5 may hold a file it could not close; the error
     * path has removed it, and the library is left to the exit. */
    if (st == FD_OK) H5close();
    fflush(stdout);
    if (ferror(stdout)) {
        fprintf(stderr, "fcbo-dist: error: writing to standard output failed\n");
        if (st == FD_OK) return fd_warm_exit(1);
    }
    return fd_warm_exit(fd_exit_code(st));
}
