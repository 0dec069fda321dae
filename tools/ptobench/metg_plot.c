// SPDX-License-Identifier: MIT
/*
 * SVG plots of ptobench --metg: efficiency against task granularity (log
 * scale), one curve per implementation, a dashed line at 0.5.  Written
 * here rather than through gnuplot so that the plots need nothing beyond
 * the C library and stay small enough to keep in the tree.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "metg.h"

/* A panel and its plotting area inside it. */
#define PANEL_W		480
#define PANEL_H		320
#define AREA_L		56
#define AREA_R		14
#define AREA_T		30
#define AREA_B		46
/* Efficiencies above this are drawn at the top edge. */
#define Y_MAX		1.2

struct frame {
	double x0, y0, w, h;	/* plotting area in SVG units */
	double lx0, lx1;	/* log10 of the x range */
};

static const char *color(const char *impl)
{
	static const struct { const char *name, *rgb; } map[] = {
		{ "pto", "#d62728" }, { "gomp", "#1f77b4" },
		{ "omp", "#2ca02c" }, { "starpu", "#9467bd" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(impl, map[i].name))
			return map[i].rgb;
	return "#7f7f7f";
}

static double px(const struct frame *f, double x)
{
	return f->x0 + (log10(x) - f->lx0) / (f->lx1 - f->lx0) * f->w;
}

static double py(const struct frame *f, double y)
{
	y = y < 0 ? 0 : y > Y_MAX ? Y_MAX : y;
	return f->y0 + f->h - y / Y_MAX * f->h;
}

/* The x range of every finite point, a little wider. */
static void x_range(const struct metg_series *s, struct frame *f)
{
	double lo = INFINITY, hi = -INFINITY;

	for (int c = 0; c < s->ncurves; c++)
		for (int i = 0; i < s->curve[c].n; i++) {
			double x = s->curve[c].x[i];

			if (isfinite(x) && x > 0) {
				lo = x < lo ? x : lo;
				hi = x > hi ? x : hi;
			}
		}
	if (!isfinite(lo)) {
		lo = 1;
		hi = 10;
	}
	f->lx0 = log10(lo) - 0.05;
	f->lx1 = log10(hi) + 0.05;
	if (f->lx1 - f->lx0 < 0.5)
		f->lx1 = f->lx0 + 0.5;
}

static void x_axis(FILE *out, const struct frame *f)
{
	double bottom = f->y0 + f->h;

	for (int d = (int)floor(f->lx0); d <= (int)ceil(f->lx1); d++) {
		for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
			double x = m * pow(10, d), X = px(f, x);

			if (log10(x) < f->lx0 || log10(x) > f->lx1)
				continue;
			fprintf(out, "<line x1='%.0f' y1='%.0f' x2='%.0f' "
				"y2='%.0f' stroke='%s'/>\n", X, f->y0, X,
				bottom, m == 1 ? "#ccc" : "#eee");
			fprintf(out, "<text x='%.0f' y='%.0f' "
				"text-anchor='middle'%s>%g</text>\n", X,
				bottom + 14, m == 1 ? "" : " fill='#666'", x);
		}
	}
	fprintf(out, "<text x='%.0f' y='%.0f' text-anchor='middle'>task "
		"granularity (us of kernel per task)</text>\n",
		f->x0 + f->w / 2, bottom + 32);
}

static void y_axis(FILE *out, const struct frame *f)
{
	for (int k = 0; k <= 4; k++) {
		double y = k * 0.25, Y = py(f, y);

		fprintf(out, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' "
			"stroke='#ccc'/>\n<text x='%.0f' y='%.0f' "
			"text-anchor='end'>%.2f</text>\n", f->x0, Y,
			f->x0 + f->w, Y, f->x0 - 4, Y + 4, y);
	}
	fprintf(out, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' "
		"stroke='#000' stroke-dasharray='4,3'/>\n", f->x0,
		py(f, 0.5), f->x0 + f->w, py(f, 0.5));
	fprintf(out, "<text transform='translate(%.0f,%.0f) rotate(-90)' "
		"text-anchor='middle'>efficiency</text>\n", f->x0 - 38,
		f->y0 + f->h / 2);
	fprintf(out, "<rect x='%.0f' y='%.0f' width='%.0f' height='%.0f' "
		"fill='none' stroke='#000'/>\n", f->x0, f->y0, f->w, f->h);
}

/* A polyline per run of finite points, and a dot per point. */
static void curve(FILE *out, const struct frame *f,
		  const struct metg_curve *c)
{
	const char *rgb = color(c->name);
	bool open = false;

	for (int i = 0; i < c->n; i++) {
		bool ok = isfinite(c->x[i]) && c->x[i] > 0 &&
			  isfinite(c->y[i]);

		if (ok && !open)
			fprintf(out, "<polyline fill='none' stroke='%s' "
				"stroke-width='1.5' points='", rgb);
		if (ok)
			fprintf(out, "%.0f,%.0f ", px(f, c->x[i]),
				py(f, c->y[i]));
		if (!ok && open)
			fprintf(out, "'/>\n");
		open = ok;
	}
	if (open)
		fprintf(out, "'/>\n");
	for (int i = 0; i < c->n; i++)
		if (isfinite(c->x[i]) && c->x[i] > 0 && isfinite(c->y[i]))
			fprintf(out, "<circle cx='%.0f' cy='%.0f' r='2' "
				"fill='%s'/>\n", px(f, c->x[i]),
				py(f, c->y[i]), rgb);
}

/* Top left, where the curves are low: small tasks, low efficiency. */
static void legend(FILE *out, const struct frame *f,
		   const struct metg_series *s)
{
	for (int c = 0; c < s->ncurves; c++) {
		double y = f->y0 + 14 + 14 * c;

		fprintf(out, "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' "
			"stroke='%s' stroke-width='2'/>\n<text x='%.0f' "
			"y='%.0f'>%s</text>\n", f->x0 + 8, y - 4, f->x0 + 26,
			y - 4, color(s->curve[c].name), f->x0 + 30, y,
			s->curve[c].name);
	}
}

static void panel(FILE *out, const struct metg_series *s, double ox,
		  double oy)
{
	struct frame f = {
		.x0 = ox + AREA_L, .y0 = oy + AREA_T,
		.w = PANEL_W - AREA_L - AREA_R,
		.h = PANEL_H - AREA_T - AREA_B,
	};

	x_range(s, &f);
	fprintf(out, "<text x='%.0f' y='%.0f' text-anchor='middle' "
		"font-weight='bold'>%s</text>\n", f.x0 + f.w / 2, oy + 18,
		s->title);
	x_axis(out, &f);
	y_axis(out, &f);
	for (int c = 0; c < s->ncurves; c++)
		curve(out, &f, &s->curve[c]);
	legend(out, &f, s);
}

int metg_plot_svg(const char *path, const struct metg_series *s, int n,
		  int ncols)
{
	int rows = (n + ncols - 1) / ncols;
	FILE *out = fopen(path, "w");

	if (!out) {
		fprintf(stderr, "ptobench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(out, "<?xml version='1.0' encoding='UTF-8'?>\n"
		"<svg xmlns='http://www.w3.org/2000/svg' width='%d' "
		"height='%d' font-family='sans-serif' font-size='11'>\n"
		"<rect width='100%%' height='100%%' fill='#fff'/>\n",
		PANEL_W * (n < ncols ? n : ncols), PANEL_H * rows);
	for (int i = 0; i < n; i++)
		panel(out, &s[i], (i % ncols) * PANEL_W,
		      (i / ncols) * PANEL_H);
	fprintf(out, "</svg>\n");
	if (fclose(out)) {
		fprintf(stderr, "ptobench: %s: write failed\n", path);
		return -1;
	}
	return 0;
}
