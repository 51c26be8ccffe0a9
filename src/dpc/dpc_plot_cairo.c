/* SPDX-License-Identifier: BSD-3-Clause */
/* The decision graph and the clusters as a PNG, with cairo (see
 * dpc_plot.h).  Points are set as pixels in the image buffer (millions of
 * cairo circles would take longer than the clustering); cairo draws the
 * frames, the centres and the text. */
#include "dpc_plot.h"

#include "../common/atomicfile.h"
#include "../common/dynlib.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* cairo is loaded when --plot is asked for (src/common/dynlib.h): with the
 * X11, font and PNG libraries it pulls in, linking it cost every command's
 * start 1.9 MB and 2.5 ms on the dev VM.  Every cairo call goes through
 * this table. */
#define CAIRO_FNS(X) \
    X(cairo_arc) \
    X(cairo_create) \
    X(cairo_destroy) \
    X(cairo_fill_preserve) \
    X(cairo_image_surface_create) \
    X(cairo_image_surface_get_data) \
    X(cairo_image_surface_get_stride) \
    X(cairo_line_to) \
    X(cairo_move_to) \
    X(cairo_paint) \
    X(cairo_rectangle) \
    X(cairo_select_font_face) \
    X(cairo_set_dash) \
    X(cairo_set_font_size) \
    X(cairo_set_line_width) \
    X(cairo_set_source_rgb) \
    X(cairo_show_text) \
    X(cairo_status) \
    X(cairo_status_to_string) \
    X(cairo_stroke) \
    X(cairo_surface_destroy) \
    X(cairo_surface_flush) \
    X(cairo_surface_mark_dirty) \
    X(cairo_surface_write_to_png)
#define CAIRO_SLOT(f) __typeof__(&f) f;
static struct {
    CAIRO_FNS(CAIRO_SLOT)
} ca;
#define CAIRO_SYM(f) {#f, (void **)&ca.f, 0},
static const fd_dynsym syms[] = {CAIRO_FNS(CAIRO_SYM){NULL, NULL, 0}};
static fd_dynlib lib = {FD_CAIRO_SONAME, FD_CAIRO_DIR, "dpc --plot", FD_ERR_UNAVAILABLE, syms, NULL,
                        FD_DYNLIB_STATE};

fd_status dpc_plot_ready(void) { return fd_dynlib_load(&lib); }

#define PANEL 800
#define MARGIN 60


/* A colour per cluster: hues spread by the golden angle. */
static void colour(int32_t label, double rgb[3])
{
    if (label <= 0) {
        rgb[0] = rgb[1] = rgb[2] = 0.75;
        return;
    }
    const double h = fmod((double)label * 0.618033988749895, 1.0) * 6, s = 0.75, v = 0.85;
    const int i = (int)h;
    const double f = h - i, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
    const double tab[6][3] = {{v, t, p}, {q, v, p}, {p, v, t}, {p, q, v}, {t, p, v}, {v, p, q}};
    for (int c = 0; c < 3; c++) rgb[c] = tab[i % 6][c];
}

typedef struct {
    double x0, x1, y0, y1; /* data ranges */
    int left;              /* the panel's left edge in the image */
} panel;

static void to_px(const panel *pn, double x, double y, double *px, double *py)
{
    const double w = PANEL - 2 * MARGIN;
    *px = pn->left + MARGIN + (pn->x1 > pn->x0 ? (x - pn->x0) / (pn->x1 - pn->x0) : 0.5) * w;
    *py = PANEL - MARGIN - (pn->y1 > pn->y0 ? (y - pn->y0) / (pn->y1 - pn->y0) : 0.5) * w;
}

static void put(unsigned char *data, int stride, int width, double px, double py, const double rgb[3])
{
    const int x = (int)px, y = (int)py;
    for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++) {
            const int xx = x + dx, yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= width || yy >= PANEL) continue;
            uint32_t *pix = (uint32_t *)(data + (size_t)yy * stride) + xx;
            *pix = 0xff000000u | (uint32_t)(rgb[0] * 255) << 16 | (uint32_t)(rgb[1] * 255) << 8 | (uint32_t)(rgb[2] * 255);
        }
}

static void frame(cairo_t *cr, const panel *pn, const char *title, const char *xl, const char *yl)
{
    char buf[64];
    ca.cairo_set_source_rgb(cr, 0, 0, 0);
    ca.cairo_set_line_width(cr, 1);
    ca.cairo_rectangle(cr, pn->left + MARGIN - 4, MARGIN - 4, PANEL - 2 * MARGIN + 8, PANEL - 2 * MARGIN + 8);
    ca.cairo_stroke(cr);
    ca.cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    ca.cairo_set_font_size(cr, 16);
    ca.cairo_move_to(cr, pn->left + MARGIN, MARGIN - 16);
    ca.cairo_show_text(cr, title);
    ca.cairo_set_font_size(cr, 12);
    ca.cairo_move_to(cr, pn->left + PANEL / 2 - 20, PANEL - 20);
    ca.cairo_show_text(cr, xl);
    snprintf(buf, sizeof buf, "%.4g", pn->x0);
    ca.cairo_move_to(cr, pn->left + MARGIN, PANEL - MARGIN + 18);
    ca.cairo_show_text(cr, buf);
    snprintf(buf, sizeof buf, "%.4g", pn->x1);
    ca.cairo_move_to(cr, pn->left + PANEL - MARGIN - 40, PANEL - MARGIN + 18);
    ca.cairo_show_text(cr, buf);
    snprintf(buf, sizeof buf, "%.4g", pn->y0);
    ca.cairo_move_to(cr, pn->left + 4, PANEL - MARGIN);
    ca.cairo_show_text(cr, buf);
    snprintf(buf, sizeof buf, "%.4g", pn->y1);
    ca.cairo_move_to(cr, pn->left + 4, MARGIN + 8);
    ca.cairo_show_text(cr, buf);
    ca.cairo_move_to(cr, pn->left + 8, PANEL / 2);
    ca.cairo_show_text(cr, yl);
}

static void ranges(const double *x, uint64_t n, size_t step, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (uint64_t i = 0; i < n; i++) {
        const double v = x[i * step];
        if (v < *lo) *lo = v;
        if (v > *hi) *hi = v;
    }
}

fd_status dpc_plot_write(const char *path, const dpc_points *p, const double *rho, const double *delta,
                         const int32_t *labels, const int32_t *core, const int64_t *centers, uint32_t k,
                         double gamma_thr)
{
    fd_status st = FD_OK;
    FD_TRY(dpc_plot_ready());
    const int two = p->d == 2, width = two ? 2 * PANEL : PANEL;
    char *tmp = fd_tmp_name(path);
    if (!tmp) return fd_fail(FD_ERR_NOMEM, "out of memory");
    cairo_surface_t *s = ca.cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, PANEL);
    cairo_t *cr = ca.cairo_create(s);
    if (ca.cairo_status(cr) != CAIRO_STATUS_SUCCESS) {
        st = fd_fail(FD_ERR_NOMEM, "%s: cairo: %s", path, ca.cairo_status_to_string(ca.cairo_status(cr)));
        goto done;
    }
    ca.cairo_set_source_rgb(cr, 1, 1, 1);
    ca.cairo_paint(cr);
    ca.cairo_surface_flush(s);
    unsigned char *data = ca.cairo_image_surface_get_data(s);
    const int stride = ca.cairo_image_surface_get_stride(s);
    /* The decision graph: every point grey, the centres on top. */
    panel dg = {0, 0, 0, 0, 0};
    ranges(rho, p->n, 1, &dg.x0, &dg.x1);
    ranges(delta, p->n, 1, &dg.y0, &dg.y1);
    const double grey[3] = {0.55, 0.55, 0.55};
    for (uint64_t i = 0; i < p->n; i++) {
        double px, py;
        to_px(&dg, rho[i], delta[i], &px, &py);
        put(data, stride, width, px, py, grey);
    }
    panel sc = {0, 0, 0, 0, PANEL};
    if (two) {
        ranges(p->x, p->n, 2, &sc.x0, &sc.x1);
        ranges(p->x + 1, p->n, 2, &sc.y0, &sc.y1);
        for (uint64_t i = 0; i < p->n; i++) {
            double px, py, rgb[3];
            colour(core ? core[i] : labels[i], rgb);
            to_px(&sc, p->x[2 * i], p->x[2 * i + 1], &px, &py);
            put(data, stride, width, px, py, rgb);
        }
    }
    ca.cairo_surface_mark_dirty(s);
    for (uint32_t q = 0; q < k; q++) {
        const int64_t i = centers[q];
        double px, py, rgb[3];
        colour((int32_t)(q + 1), rgb);
        to_px(&dg, rho[i], delta[i], &px, &py);
        ca.cairo_arc(cr, px, py, 5, 0, 2 * M_PI);
        ca.cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        ca.cairo_fill_preserve(cr);
        ca.cairo_set_source_rgb(cr, 0, 0, 0);
        ca.cairo_stroke(cr);
        if (two) {
            to_px(&sc, p->x[2 * i], p->x[2 * i + 1], &px, &py);
            ca.cairo_arc(cr, px, py, 5, 0, 2 * M_PI);
            ca.cairo_set_source_rgb(cr, 0, 0, 0);
            ca.cairo_stroke(cr);
        }
    }
    /* The outlier rule's threshold: points above the curve rho delta =
     * gamma_thr are outliers of gamma (dashed). */
    if (isfinite(gamma_thr) && gamma_thr > 0 && dg.x1 > 0) {
        int started = 0;
        for (int step = 0; step <= 200; step++) {
            const double r = dg.x0 + (dg.x1 - dg.x0) * step / 200.0;
            if (!(r > 0)) continue;
            const double d = gamma_thr / r;
            if (d > dg.y1 * 1.05) continue;
            double px, py;
            to_px(&dg, r, d, &px, &py);
            if (!started) ca.cairo_move_to(cr, px, py);
            else ca.cairo_line_to(cr, px, py);
            started = 1;
        }
        if (started) {
            const double dash[] = {6, 4};
            ca.cairo_set_dash(cr, dash, 2, 0);
            ca.cairo_set_source_rgb(cr, 0.8, 0.1, 0.1);
            ca.cairo_set_line_width(cr, 1.5);
            ca.cairo_stroke(cr);
            ca.cairo_set_dash(cr, NULL, 0, 0);
            ca.cairo_set_line_width(cr, 1);
        }
    }
    char title[128];
    if (isfinite(gamma_thr))
        snprintf(title, sizeof title, "decision graph: %u centres (dashed: gamma = %.3g, outliers above)", k, gamma_thr);
    else
        snprintf(title, sizeof title, "decision graph: %u centres", k);
    frame(cr, &dg, title, "rho", "delta");
    if (two) {
        snprintf(title, sizeof title, "%llu points, %u clusters%s", (unsigned long long)p->n, k,
                 core ? " (halo grey)" : "");
        frame(cr, &sc, title, "x1", "x2");
    }
    ca.cairo_surface_flush(s);
    cairo_status_t cs = ca.cairo_surface_write_to_png(s, tmp);
    if (cs != CAIRO_STATUS_SUCCESS) {
        st = fd_fail(FD_ERR_IO, "%s: cannot write the PNG: %s", tmp, ca.cairo_status_to_string(cs));
        goto done;
    }
    if (rename(tmp, path) != 0) st = fd_fail(FD_ERR_IO, "%s: cannot rename %s into place", path, tmp);
done:
    if (st != FD_OK) unlink(tmp);
    ca.cairo_destroy(cr);
    ca.cairo_surface_destroy(s);
    free(tmp);
    return st;
}
