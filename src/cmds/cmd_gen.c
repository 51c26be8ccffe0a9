/* SPDX-License-Identifier: BSD-3-Clause */
/* Synthetic inputs.  `gen context`: a random binary context in which
 * attribute m occurs with probability p_m; uniform (p_m = D) or Zipf-skewed
 * (p_m proportional to 1/(m+1)^A, scaled so that the mean is D).
 * `gen counts`: a zero-inflated count matrix for `spearman`.
 * `gen blobs`: labelled Gaussian clusters for `dpc`.
 * `gen tensor`: a dense tensor of known CP rank plus noise for `bcp`. */
#include "../common/atomicfile.h"
#include "../common/clock.h"
#include "../bcp/tensor.h"
#include "../io/h5util.h"
#include "../lattice/context.h"
#include "cmds.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *help =
    "usage: fcbo-dist gen context --objects N --attributes M --density D\n"
    "                             [--seed S] [--zipf A] -o FILE.cxt|.dat|.csv|.tsv\n\n"
    "Writes a random context: each object has each attribute independently,\n"
    "with probability D (uniform) or, with --zipf A, probability proportional\n"
    "to 1/(rank+1)^A scaled to mean D (capped at 1).  The same seed gives the\n"
    "same file on every machine.\n\n"
    "  --objects N      rows (objects)\n"
    "  --attributes M   columns (attributes)\n"
    "  --density D      mean fraction of ones, 0..1\n"
    "  --seed S         random seed (default 1)\n"
    "  --zipf A         skewed attribute frequencies with exponent A > 0\n"
    "  -o FILE          output; the format follows the extension\n\n"
    "usage: fcbo-dist gen counts --rows N --cols C [--zero-frac F] [--mean M]\n"
    "                            [--groups G] [--seed S] -o FILE.txt|.csv|.npy\n\n"
    "Writes a zero-inflated count matrix (rows are variables): each cell is 0\n"
    "with probability F (default 0.6), otherwise 1 + a geometric count with\n"
    "mean M (default 10).  With --groups G, row r belongs to group r mod G and\n"
    "the rows of a group share a random profile of column means, so they\n"
    "correlate; without it rows are independent.  .txt is whitespace\n"
    "separated, .csv comma separated, .npy a little-endian int32 array.\n\n"
    "usage: fcbo-dist gen blobs --n N --dims D --clusters K [--spread S]\n"
    "                           [--seed S] -o FILE.txt|.csv|.npy\n\n"
    "Writes N points in D dimensions around K centres drawn uniformly in\n"
    "[0, 100]^D, each point Gaussian around its centre with standard deviation\n"
    "S (default 1.5) per coordinate, the centre taken in turn (point i of\n"
    "cluster i mod K).  FILE holds the D coordinates only; the true cluster\n"
    "of each point, 1..K, goes to a file of its own beside it, STEM.labels.EXT\n"
    "(b.csv: b.labels.csv), for `dpc b.csv --labels b.labels.csv` to score\n"
    "against.  Values have six decimals; .npy is float64 with the same values\n"
    "(the fastest to read), its labels int32.\n\n"
    "usage: fcbo-dist gen tensor --shape I1xI2x...xIN --rank R [--snr DB]\n"
    "                            [--seed S] -o FILE.h5|.npy\n\n"
    "Writes a dense tensor (3 to 8 modes) of CP rank R, factors with N(0, 1)\n"
    "entries, plus Gaussian noise at DB decibels (default 20; signal mean\n"
    "square over noise variance), as float64.  FILE.h5 holds /tensor (read it\n"
    "as FILE.h5:/tensor) and the true factors /factors/A1..AN; .npy the tensor\n"
    "only.\n";

static fd_status gen_context(int argc, char **argv)
{
    static const struct option opts[] = {
        {"objects", required_argument, 0, 'n'}, {"attributes", required_argument, 0, 'm'},
        {"density", required_argument, 0, 'd'}, {"seed", required_argument, 0, 's'},
        {"zipf", required_argument, 0, 'z'},    {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    uint32_t n = 0, m = 0;
    double d = -1, zipf = 0;
    uint64_t seed = 1;
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': FD_TRY(opt_u32("--objects", optarg, 1, UINT32_MAX - 2, &n)); break;
        case 'm': FD_TRY(opt_u32("--attributes", optarg, 1, 1u << 24, &m)); break;
        case 'd': FD_TRY(opt_f64("--density", optarg, 0, 1, &d)); break;
        case 's': FD_TRY(opt_u64("--seed", optarg, &seed)); break;
        case 'z': FD_TRY(opt_f64("--zipf", optarg, 1e-9, 100, &zipf)); break;
        case 'o': out = optarg; break;
        case 'h': fputs(help, stdout); return FD_OK;
        default: return opt_bad("gen context");
        }
    }
    if (!n || !m || d < 0 || !out)
        return fd_fail(FD_ERR_USAGE, "gen context needs --objects, --attributes, --density and -o; see 'fcbo-dist gen --help'");
    ctx_format fmt = ctx_format_from_path(out);
    if (fmt == CTX_FMT_AUTO) return fd_fail(FD_ERR_USAGE, "%s: use an extension .cxt, .dat, .csv or .tsv", out);

    fd_status st = FD_OK;
    fca_context *ctx = NULL;
    double *p = calloc(m, sizeof *p);
    uint32_t *cols = malloc((size_t)m * sizeof *cols);
    if (!p || !cols) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    double sum = 0;
    for (uint32_t a = 0; a < m; a++) sum += p[a] = zipf > 0 ? pow(a + 1.0, -zipf) : 1.0;
    for (uint32_t a = 0; a < m; a++) {
        p[a] *= d * m / sum;
        if (p[a] > 1) p[a] = 1;
    }
    double expect = 0;
    for (uint32_t a = 0; a < m; a++) expect += p[a];
    FD_TRY_GOTO(fca_context_create(&ctx, n, m, (uint64_t)(expect * n * 1.1) + 1024), st, done);
    uint64_t cap = (uint64_t)(expect * n * 1.1) + 1024, nnz = 0;
    fd_rng rng = {seed};
    for (uint32_t o = 0; o < n; o++) {
        uint32_t k = 0;
        for (uint32_t a = 0; a < m; a++)
            if (fd_rng_unif(&rng) < p[a]) cols[k++] = a;
        if (nnz + k > cap) {
            uint64_t ncap = (nnz + k) * 2;
            uint32_t *ni = fd_realloc(ctx->row_idx, ncap, sizeof *ni);
            if (!ni) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
            ctx->row_idx = ni;
            cap = ncap;
        }
        memcpy(ctx->row_idx + nnz, cols, (size_t)k * sizeof *cols);
        nnz += k;
        ctx->row_ptr[o + 1] = nnz;
    }
    for (uint32_t a = 0; a < m; a++) {
        char buf[24];
        snprintf(buf, sizeof buf, fmt == CTX_FMT_FIMI ? "%u" : "a%u", a);
        if (!(ctx->attr_names[a] = strdup(buf))) { st = fd_fail(FD_ERR_NOMEM, "out of memory"); goto done; }
    }
    st = fca_context_write(ctx, out, fmt);
done:
    fca_context_destroy(&ctx);
    free(p);
    free(cols);
    return st;
}

/* The header of a 2-D .npy array (format 1.0, C order), padded so that
 * the data starts at a multiple of 64 bytes. */
static void npy_header(FILE *f, const char *descr, const uint64_t *shape, uint32_t nd)
{
    char hdr[512];
    int len = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (uint32_t k = 0; k < nd; k++) len += snprintf(hdr + len, sizeof hdr - (size_t)len, "%llu, ", (unsigned long long)shape[k]);
    len += snprintf(hdr + len, sizeof hdr - (size_t)len, "), }");
    int total = 10 + len + 1, pad = (64 - total % 64) % 64;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    pre[8] = (unsigned char)((len + pad + 1) & 0xff);
    pre[9] = (unsigned char)((len + pad + 1) >> 8);
    fwrite(pre, 1, 10, f);
    fprintf(f, "%s%*s\n", hdr, pad, "");
}

/* One cell of `gen counts`. */
static uint32_t count_cell(fd_rng *rng, double zero_frac, double mean)
{
    if (fd_rng_unif(rng) < zero_frac) return 0;
    double u = fd_rng_unif(rng);
    return 1 + (uint32_t)floor(-log(1 - u) * mean);
}

static fd_status write_counts(fd_afile *af, const char *out, uint64_t rows, uint32_t cols, double zf, double mean,
                              uint32_t groups, uint64_t seed)
{
    fd_status st = FD_OK;
    size_t n = strlen(out);
    int npy = n > 4 && !strcmp(out + n - 4, ".npy"), csv = n > 4 && !strcmp(out + n - 4, ".csv");
    double *prof = NULL;
    uint32_t *row = NULL;
    fd_rng rng = {seed};
    uint32_t g = groups ? groups : 1;
    FD_ALLOC_GOTO(prof, (size_t)g * cols, st, done);
    FD_ALLOC_GOTO(row, cols, st, done);
    for (size_t k = 0; k < (size_t)g * cols; k++) prof[k] = groups ? 0.2 + 1.8 * fd_rng_unif(&rng) : 1.0;
    if (npy) npy_header(af->f, "<i4", (const uint64_t[]){rows, cols}, 2);
    for (uint64_t r = 0; r < rows; r++) {
        const double *pr = prof + (r % g) * cols;
        for (uint32_t k = 0; k < cols; k++) row[k] = count_cell(&rng, zf, mean * pr[k]);
        if (npy) {
            fwrite(row, sizeof *row, cols, af->f);
        } else {
            for (uint32_t k = 0; k < cols; k++) fprintf(af->f, k ? (csv ? ",%u" : " %u") : "%u", row[k]);
            fputc('\n', af->f);
        }
    }
done:
    free(prof);
    free(row);
    return st;
}

static fd_status gen_counts(int argc, char **argv)
{
    static const struct option opts[] = {
        {"rows", required_argument, 0, 'r'},   {"cols", required_argument, 0, 'c'},
        {"zero-frac", required_argument, 0, 'z'}, {"mean", required_argument, 0, 'm'},
        {"groups", required_argument, 0, 'g'}, {"seed", required_argument, 0, 's'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    uint64_t rows = 0, seed = 1;
    uint32_t cols = 0, groups = 0;
    double zf = 0.6, mean = 10;
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': FD_TRY(opt_u64("--rows", optarg, &rows)); break;
        case 'c': FD_TRY(opt_u32("--cols", optarg, 1, 32767, &cols)); break;
        case 'z': FD_TRY(opt_f64("--zero-frac", optarg, 0, 1, &zf)); break;
        case 'm': FD_TRY(opt_f64("--mean", optarg, 0, 1e9, &mean)); break;
        case 'g': FD_TRY(opt_u32("--groups", optarg, 0, UINT32_MAX, &groups)); break;
        case 's': FD_TRY(opt_u64("--seed", optarg, &seed)); break;
        case 'o': out = optarg; break;
        case 'h': fputs(help, stdout); return FD_OK;
        default: return opt_bad("gen counts");
        }
    }
    if (!rows || !cols || !out)
        return fd_fail(FD_ERR_USAGE, "gen counts needs --rows, --cols and -o; see 'fcbo-dist gen --help'");
    fd_afile af;
    FD_TRY(fd_afile_open(&af, out));
    fd_status st = write_counts(&af, out, rows, cols, zf, mean, groups, seed);
    if (st == FD_OK) return fd_afile_commit(&af);
    fd_afile_abort(&af);
    return st;
}

/* fmt: 't' text, 'c' CSV, 'n' .npy (float64).  The .npy holds the
 * values the text would give when read back (six decimals), so that the
 * three files are the same points.  The labels go to their own file
 * (lab), never beside the coordinates, where a clustering would take
 * them for one more coordinate. */
static fd_status write_blobs(fd_afile *af, fd_afile *lab, int fmt, uint64_t n, uint32_t d, uint32_t k, double spread,
                             uint64_t seed)
{
    fd_rng rng = {seed};
    double *centre = malloc((size_t)k * d * sizeof *centre), *row = malloc((size_t)d * sizeof *row);
    if (!centre || !row) {
        free(centre);
        free(row);
        return fd_fail(FD_ERR_NOMEM, "out of memory");
    }
    for (size_t q = 0; q < (size_t)k * d; q++) centre[q] = 100 * fd_rng_unif(&rng);
    if (fmt == 'n') {
        npy_header(af->f, "<f8", (const uint64_t[]){n, d}, 2);
        npy_header(lab->f, "<i4", (const uint64_t[]){n, 1}, 2);
    }
    for (uint64_t i = 0; i < n; i++) {
        const uint32_t c = (uint32_t)(i % k);
        for (uint32_t q = 0; q < d; q++) {
            const double z = fd_rng_normal(&rng);
            char buf[64];
            snprintf(buf, sizeof buf, "%.6f", centre[(size_t)c * d + q] + spread * z);
            if (fmt == 'n') row[q] = strtod(buf, NULL);
            else fprintf(af->f, q ? (fmt == 'c' ? ",%s" : " %s") : "%s", buf);
        }
        if (fmt == 'n') {
            const int32_t label = (int32_t)c + 1;
            fwrite(row, sizeof *row, d, af->f);
            fwrite(&label, sizeof label, 1, lab->f);
        } else {
            fputc('\n', af->f);
            fprintf(lab->f, "%u\n", c + 1);
        }
    }
    free(centre);
    free(row);
    return FD_OK;
}

static fd_status gen_blobs(int argc, char **argv)
{
    static const struct option opts[] = {
        {"n", required_argument, 0, 'n'},      {"dims", required_argument, 0, 'd'},
        {"clusters", required_argument, 0, 'k'}, {"spread", required_argument, 0, 'S'},
        {"seed", required_argument, 0, 's'},   {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
    uint64_t n = 0, seed = 1;
    uint32_t d = 0, k = 0;
    double spread = 1.5;
    const char *out = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': FD_TRY(opt_u64("--n", optarg, &n)); break;
        case 'd': FD_TRY(opt_u32("--dims", optarg, 1, 1024, &d)); break;
        case 'k': FD_TRY(opt_u32("--clusters", optarg, 1, 1u << 20, &k)); break;
        case 'S': FD_TRY(opt_f64("--spread", optarg, 0, 1e9, &spread)); break;
        case 's': FD_TRY(opt_u64("--seed", optarg, &seed)); break;
        case 'o': out = optarg; break;
        case 'h': fputs(help, stdout); return FD_OK;
        default: return opt_bad("gen blobs");
        }
    }
    if (!n || !d || !k || !out)
        return fd_fail(FD_ERR_USAGE, "gen blobs needs --n, --dims, --clusters and -o; see 'fcbo-dist gen --help'");
    size_t len = strlen(out);
    const char *ext = len > 4 ? out + len - 4 : "";
    const int fmt = !strcmp(ext, ".csv") ? 'c' : !strcmp(ext, ".txt") ? 't' : !strcmp(ext, ".npy") ? 'n' : 0;
    if (!fmt) return fd_fail(FD_ERR_USAGE, "gen blobs -o %s: writes text (.txt), CSV (.csv) or .npy", out);
    char *labels = malloc(len + 8);
    if (!labels) return fd_fail(FD_ERR_NOMEM, "out of memory");
    snprintf(labels, len + 8, "%.*s.labels%s", (int)(len - 4), out, ext);
    fd_afile af, lab;
    fd_status st = fd_afile_open(&af, out);
    if (st == FD_OK && (st = fd_afile_open(&lab, labels)) != FD_OK) fd_afile_abort(&af);
    if (st == FD_OK) {
        st = write_blobs(&af, &lab, fmt, n, d, k, spread, seed);
        if (st == FD_OK) st = fd_afile_commit(&af);
        else fd_afile_abort(&af);
        if (st == FD_OK) st = fd_afile_commit(&lab);
        else fd_afile_abort(&lab);
    }
    free(labels);
    return st;
}

/* The tensor as /tensor and the true factors as /factors/A1..AN. */
static fd_status write_tensor_h5(const char *path, const bcp_tensor *t, const double *A, uint32_t rank, double snr)
{
    fd_status st = FD_OK;
    h5u_out out = H5U_OUT_NONE;
    hid_t g = -1, sp = -1, ds = -1;
    FD_TRY_GOTO(h5u_out_create(&out, path), st, done);
    const hid_t f = out.file;
    hsize_t dims[BCP_MAX_ORDER];
    for (uint32_t n = 0; n < t->order; n++) dims[n] = t->dims[n];
    H5_CHECK_GOTO(sp = H5Screate_simple((int)t->order, dims, NULL), st, done);
    H5_CHECK_GOTO(ds = H5Dcreate2(f, "tensor", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    H5_CHECK_GOTO(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->x), st, done);
    FD_TRY_GOTO(h5u_attr_u64(ds, "rank", rank), st, done);
    FD_TRY_GOTO(h5u_attr_f64(ds, "snr_db", snr), st, done);
    H5Dclose(ds);
    H5Sclose(sp);
    ds = sp = -1;
    H5_CHECK_GOTO(g = H5Gcreate2(f, "factors", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
    for (uint32_t n = 0; n < t->order; n++) {
        char name[16];
        hsize_t fd[2] = {t->dims[n], rank};
        snprintf(name, sizeof name, "A%u", n + 1);
        H5_CHECK_GOTO(sp = H5Screate_simple(2, fd, NULL), st, done);
        H5_CHECK_GOTO(ds = H5Dcreate2(g, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), st, done);
        H5_CHECK_GOTO(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, A), st, done);
        A += t->dims[n] * rank;
        H5Dclose(ds);
        H5Sclose(sp);
        ds = sp = -1;
    }
    H5Gclose(g);
    g = -1;
    st = h5u_out_commit(&out);
done:
    if (ds >= 0) H5Dclose(ds);
    if (sp >= 0) H5Sclose(sp);
    if (g >= 0) H5Gclose(g);
    h5u_out_abort(&out);
    return st;
}

static fd_status gen_tensor(int argc, char **argv)
{
    static const struct option opts[] = {
        {"shape", required_argument, 0, 'S'}, {"rank", required_argument, 0, 'r'},
        {"snr", required_argument, 0, 'n'},   {"seed", required_argument, 0, 's'},
        {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    uint64_t seed = 1, dims[BCP_MAX_ORDER];
    uint32_t rank = 0, order = 0;
    double snr = 20;
    const char *out = NULL, *shape = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'S': shape = optarg; break;
        case 'r': FD_TRY(opt_u32("--rank", optarg, 1, 256, &rank)); break;
        case 'n': FD_TRY(opt_f64("--snr", optarg, -100, 300, &snr)); break;
        case 's': FD_TRY(opt_u64("--seed", optarg, &seed)); break;
        case 'o': out = optarg; break;
        case 'h': fputs(help, stdout); return FD_OK;
        default: return opt_bad("gen tensor");
        }
    }
    if (!shape || !rank || !out)
        return fd_fail(FD_ERR_USAGE, "gen tensor needs --shape, --rank and -o; see 'fcbo-dist gen --help'");
    FD_TRY(opt_dims("--shape", shape, "positive sizes", BCP_MAX_ORDER, dims, &order));
    uint64_t size = 1;
    for (uint32_t n = 0; n < order; n++) {
        if (dims[n] > (1ull << 40) / size) return fd_fail(FD_ERR_USAGE, "--shape %s: more than 2^40 elements", shape);
        size *= dims[n];
    }
    if (order < 3) return fd_fail(FD_ERR_USAGE, "--shape %s: a tensor has 3 modes or more here", shape);
    const size_t len = strlen(out);
    const int h5 = len > 3 && !strcmp(out + len - 3, ".h5"), npy = len > 4 && !strcmp(out + len - 4, ".npy");
    if (!h5 && !npy) return fd_fail(FD_ERR_USAGE, "gen tensor -o %s: writes FILE.h5 or FILE.npy", out);
    bcp_tensor *t = NULL;
    double *A = NULL;
    FD_TRY(bcp_tensor_synth(&t, &A, order, dims, rank, snr, seed));
    fd_status st = FD_OK;
    if (h5) {
        st = write_tensor_h5(out, t, A, rank, snr);
    } else {
        fd_afile af;
        st = fd_afile_open(&af, out);
        if (st == FD_OK) {
            npy_header(af.f, "<f8", t->dims, t->order);
            fwrite(t->x, sizeof *t->x, t->size, af.f);
            st = fd_afile_commit(&af);
        }
    }
    free(A);
    bcp_tensor_destroy(&t);
    return st;
}

fd_status cmd_gen(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "tensor")) return gen_tensor(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "context")) return gen_context(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "counts")) return gen_counts(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "blobs")) return gen_blobs(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(help, stdout);
        return FD_OK;
    }
    return fd_fail(FD_ERR_USAGE,
                   "gen needs a kind of input: 'fcbo-dist gen context|counts|blobs|tensor ...'; see 'fcbo-dist gen --help'");
}
