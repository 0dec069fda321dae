/* SPDX-License-Identifier: MIT */
/*
 * ptobench --metg: what the driver (metg.c) and its SVG plots
 * (metg_plot.c) share.
 */
#ifndef PTOBENCH_METG_H
#define PTOBENCH_METG_H

#include "ptobench.h"

#define METG_MAX_WIDTHS	8
#define METG_MAX_GRAINS	40

enum metg_kind {
	METG_NA,	/* a run failed */
	METG_NONE,	/* below 0.5 already at the largest granularity */
	METG_FOUND,	/* crosses 0.5 within the sweep */
	METG_BELOW,	/* still >= 0.5 at the smallest granularity */
};

struct metg_result {
	enum metg_kind kind;
	double us;		/* interpolated METG (BELOW: smallest grain) */
	double measured_us;	/* smallest measured grain with eff >= 0.5 */
};

/* One implementation's efficiency (y) by granularity in us (x). */
struct metg_curve {
	const char *name;
	int n;
	double x[METG_MAX_GRAINS];
	double y[METG_MAX_GRAINS];
};

/* One pattern and width: a panel of the plot. */
struct metg_series {
	char title[64];
	int ncurves;
	struct metg_curve curve[NUM_IMPLS];
};

/*
 * Write n panels, ncols per row, as one SVG file.  Points that are NAN
 * are left out.  Returns 0 or -1 (with a message).
 */
int metg_plot_svg(const char *path, const struct metg_series *s, int n,
		  int ncols);

#endif /* PTOBENCH_METG_H */
