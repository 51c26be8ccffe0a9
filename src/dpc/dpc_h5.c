/* The dpc result file (see dpc_h5.h). */
#include "dpc_h5.h"

#include "../common/atomicfile.h"
#include "../io/h5util.h"
#include "version.h"

#include <hdf5.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

fd_status dpc_h5_write(const char *path, const dpc_opts *o, const dpc_result *r)
{
    fd_status st = FD_OK;
    const uint64_t n = r->p->n;
    char *tmp = fd_tmp_name(path);
    hid_t f = -1;
    if (!tmp) return fd_fail(FD_ERR_NOMEM, "out of memory");
    f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0) { st = fd_fail(FD_ERR_IO, "%s: cannot create the HDF5 file", tmp); goto done; }
    FD_TRY_GOTO(h5u_attr_str(f, "format", "fcbo-dist dpc 1"), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "version", FD_VERSION), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "command", o->command ? o->command : ""), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "input", r->p->source), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "input_sha256", r->p->sha256), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_points", n), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "dims", r->p->d), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "kernel", o->kernel == DPC_CUTOFF ? "cutoff" : "gaussian"), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "dc", r->dc), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "dc_rule", o->dc_rule == 'x' ? "dc" : o->dc_rule == 'p' ? "percent" : "neighbors"), st,
                done);
    FD_TRY_GOTO(h5u_attr_f64(f, "dc_percent", o->dc_rule == 'p' ? o->dc_percent : NAN), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "neighbors", o->dc_rule == 'k' ? o->neighbors : NAN), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "seed", o->seed), st, done);
    FD_TRY_GOTO(h5u_attr_str(f, "centers_rule", o->centers.k ? "count" : o->centers.delta_min > 0 ? "rectangle" : "auto"),
                st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "n_clusters", r->k), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "halo", (uint64_t)o->halo), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "ari", r->ari), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "ranks", (uint64_t)r->ranks), st, done);
    FD_TRY_GOTO(h5u_attr_u64(f, "threads", (uint64_t)r->threads), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "load_seconds", r->t_load), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "dc_seconds", r->t_dc), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "rho_seconds", r->t_rho), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "delta_seconds", r->t_delta), st, done);
    FD_TRY_GOTO(h5u_attr_f64(f, "assign_seconds", r->t_assign), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "labels", H5T_STD_I32LE, H5T_NATIVE_INT32, r->labels, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "rho", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->rho, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "delta", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->delta, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "parent", H5T_STD_I64LE, H5T_NATIVE_INT64, r->parent, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "gamma", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, r->gamma, n), st, done);
    FD_TRY_GOTO(h5u_write_1d(f, "centers", H5T_STD_I64LE, H5T_NATIVE_INT64, r->centers, r->k), st, done);
    if (r->core) FD_TRY_GOTO(h5u_write_1d(f, "core_labels", H5T_STD_I32LE, H5T_NATIVE_INT32, r->core, n), st, done);
    st = h5u_commit(f, tmp, path);
    f = -1;
done:
    if (f >= 0) H5Fclose(f);
    if (st != FD_OK) unlink(tmp);
    free(tmp);
    return st;
}
