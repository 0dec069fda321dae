/* SPDX-License-Identifier: MIT */
/*
 * ptotop's views of the model's current sample: batch text and JSON
 * (view_text.c) and the interactive screen (view_tui.c).
 */
#ifndef PTOTOP_VIEW_H
#define PTOTOP_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

/**
 * pt_print_text() - print the current sample as text, like "top -b"
 * @st: the state, with its filters
 * @out: where to print; flushed afterwards
 */
void pt_print_text(const struct pt_state *st, FILE *out);

/**
 * pt_print_json() - print the current sample as one line of JSON
 * @st: the state, with its filters
 * @out: where to print; flushed afterwards
 *
 * The field names are documented in ptotop(1) and must stay stable.
 */
void pt_print_json(const struct pt_state *st, FILE *out);

/**
 * pt_ui_run() - the interactive screen, until the user quits
 * @st: the state; sampled every st->delay_s seconds, and changed by the
 *	keys (sort order, filter, interval)
 *
 * Stops after st->iterations samples when that is not 0.
 * Return: 0; -ENOTTY, having drawn nothing, when curses does not know
 * the terminal (TERM unset or unknown).
 */
int pt_ui_run(struct pt_state *st);

/**
 * pt_fmt_bytes() - a byte count for humans: "512B", "1.5K", "2.0M"
 * @buf: where to write
 * @len: size of buf
 * @bytes: the count
 */
void pt_fmt_bytes(char *buf, size_t len, uint64_t bytes);

/**
 * pt_fmt_clock() - the local time of day, "HH:MM:SS"
 * @buf: where to write
 * @len: size of buf
 * @real_ns: CLOCK_REALTIME in nanoseconds
 */
void pt_fmt_clock(char *buf, size_t len, uint64_t real_ns);

/**
 * pt_fmt_advice() - sizing advice in pto_print_stats()'s words
 * @buf: where to write
 * @len: size of buf
 * @p: the row
 * @ring: the task ring
 * @res: the resource
 * @adv: from pt_ring_advice(p, ring, res, adv), not PT_ADVICE_NONE
 *
 * "ring 1 heap ring: full 3 times, 4.1 ms waited; PTO_HEAP_SIZE=... would
 * let the orchestrator run further ahead", without libpto's indent.
 */
void pt_fmt_advice(char *buf, size_t len, const struct pt_proc *p, int ring,
		   enum pto_ring res, const struct pt_advice *adv);

/**
 * pt_fmt_skipped() - why a runtime is not shown: its page's version
 * @buf: where to write
 * @len: size of buf
 * @sp: a page of another version
 */
void pt_fmt_skipped(char *buf, size_t len, const struct pt_skipped_page *sp);

#endif /* PTOTOP_VIEW_H */
