// SPDX-License-Identifier: MIT
/*
 * ptotop's batch outputs: text like "top -b", and JSON (one document per
 * iteration, on one line).  Field names are documented in ptotop(1) and
 * Documentation/ptotop.rst and must stay stable.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "json.h"		/* util/: the project's one string escaper */
#include "ptotop.h"

void pt_fmt_bytes(char *buf, size_t len, uint64_t bytes)
{
	static const char units[] = "BKMGTP";
	double v = bytes;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.1f%c", v, units[u]);
}

static void fmt_pct(char *buf, size_t len, int width, double frac)
{
	if (isnan(frac))
		snprintf(buf, len, "%*s", width, "-");
	else
		snprintf(buf, len, "%*.1f", width, 100.0 * frac);
}

static void fmt_time(char *buf, size_t len, uint64_t real_ns)
{
	time_t t = real_ns / 1000000000ull;
	struct tm tm;

	localtime_r(&t, &tm);
	strftime(buf, len, "%H:%M:%S", &tm);
}

static int visible_procs(const struct pt_state *st)
{
	int i, n = 0;

	for (i = 0; i < st->cur.nprocs; i++)
		n += pt_proc_visible(st, &st->cur.procs[i]);
	return n;
}

/* ---- text ---------------------------------------------------------------- */

static void text_devices(struct pt_state *st, FILE *out)
{
	char used[16], total[16], pct[PTO_UAPI_NUM_WORKER_TYPES][16];
	int i, t;

	fprintf(out, "%-8s %-15s %6s %6s %6s %6s %5s %s\n", "DEVICE",
		"CORES C/V/A/X", "CUBE%", "VEC%", "AICPU%", "ACCEL%", "CTX",
		"MEM USED/TOTAL");
	for (i = 0; i < st->cur.ndevs; i++) {
		const struct pt_device *d = &st->cur.devs[i];
		char cores[32];

		if (!pt_device_visible(st, d))
			continue;
		snprintf(cores, sizeof(cores), "%u/%u/%u/%u", d->cores[0],
			 d->cores[1], d->cores[2], d->cores[3]);
		for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
			fmt_pct(pct[t], sizeof(pct[t]), 6,
				d->cores[t] ? d->util[t] : NAN);
		pt_fmt_bytes(used, sizeof(used), d->mem_used);
		if (d->mem_total)
			pt_fmt_bytes(total, sizeof(total), d->mem_total);
		else
			snprintf(total, sizeof(total), "-");
		fprintf(out, "%-8s %-15s %s %s %s %s %5llu %s/%s\n", d->name,
			cores, pct[0], pct[1], pct[2], pct[3],
			(unsigned long long)d->contexts, used, total);
	}
}

static void text_procs(struct pt_state *st, FILE *out)
{
	char rate[32], ring[PT_NRINGS][16];
	int i, r;

	fprintf(out, "%7s %-8s %-6s %9s %6s %5s %5s %5s %5s %7s %5s %s\n",
		"PID", "USER", "DEVICE", "TASKS/S", "INFLT", "TASK%", "HEAP%",
		"DEP%", "TMAP%", "STALLS", "FAIL", "COMMAND");
	for (i = 0; i < st->cur.nprocs; i++) {
		const struct pt_proc *p = &st->cur.procs[i];

		if (!pt_proc_visible(st, p))
			continue;
		if (isnan(p->tasks_per_s))
			snprintf(rate, sizeof(rate), "%9s", "-");
		else
			snprintf(rate, sizeof(rate), "%9.1f", p->tasks_per_s);
		for (r = 0; r < PT_NRINGS; r++)
			fmt_pct(ring[r], sizeof(ring[r]), 5,
				pt_ring_occupancy(p, r));
		fprintf(out,
			"%7d %-8.8s %-6.6s %s %6llu %s %s %s %s %7llu %5llu %s\n",
			p->pid, p->user, p->device, rate,
			(unsigned long long)p->in_flight, ring[0], ring[1],
			ring[2], ring[3], (unsigned long long)p->stalls,
			(unsigned long long)p->failed, p->command);
	}
}

void pt_print_text(struct pt_state *st, FILE *out)
{
	char when[32];
	int n = visible_procs(st);

	fmt_time(when, sizeof(when), st->cur.real_ns);
	fprintf(out, "ptotop - %s, iteration %ld, interval %.2f s, "
		"%d process%s\n", when, st->iteration, st->cur.interval_s, n,
		n == 1 ? "" : "es");
	if (!st->cur.ndevs && !st->cur.nprocs) {
		fprintf(out, "No PTO devices or runtimes found.\n\n");
		fflush(out);
		return;
	}
	text_devices(st, out);
	fputc('\n', out);
	text_procs(st, out);
	fputc('\n', out);
	fflush(out);
}

/* ---- JSON ---------------------------------------------------------------- */

/* A number, or null when unknown (NAN). */
static void json_num(FILE *out, double v)
{
	if (isnan(v))
		fputs("null", out);
	else
		fprintf(out, "%.9g", v);
}

static void json_u64(FILE *out, const char *name, uint64_t v, bool comma)
{
	fprintf(out, "\"%s\":%llu%s", name, (unsigned long long)v,
		comma ? "," : "");
}

static void json_types_u64(FILE *out, const char *name, const uint64_t *v)
{
	int t;

	fprintf(out, "\"%s\":{", name);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		json_u64(out, pt_type_names[t], v[t],
			 t + 1 < PTO_UAPI_NUM_WORKER_TYPES);
	fputc('}', out);
}

static void json_types_util(FILE *out, const uint32_t *cores,
			    const double *util)
{
	int t;

	fputs("\"utilisation\":{", out);
	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++) {
		fprintf(out, "\"%s\":", pt_type_names[t]);
		json_num(out, cores[t] ? util[t] : NAN);
		if (t + 1 < PTO_UAPI_NUM_WORKER_TYPES)
			fputc(',', out);
	}
	fputc('}', out);
}

static void json_cores(FILE *out, const uint32_t *cores)
{
	uint64_t v[PTO_UAPI_NUM_WORKER_TYPES];
	int t;

	for (t = 0; t < PTO_UAPI_NUM_WORKER_TYPES; t++)
		v[t] = cores[t];
	json_types_u64(out, "cores", v);
}

static void json_device(FILE *out, const struct pt_device *d)
{
	fputs("{\"name\":", out);
	pto_json_str(out, d->name);
	fprintf(out, ",\"kind\":\"%s\",", d->sim ? "sim" : "pto");
	json_cores(out, d->cores);
	fputc(',', out);
	json_types_u64(out, "busy_ns", d->busy_ns);
	fputc(',', out);
	json_types_util(out, d->cores, d->util);
	fputc(',', out);
	json_u64(out, "processes", d->nprocs, true);
	json_u64(out, "contexts", d->contexts, true);
	json_u64(out, "tasks_done", d->tasks_done, true);
	json_u64(out, "tasks_failed", d->tasks_failed, true);
	json_u64(out, "memory_used_bytes", d->mem_used, true);
	fputs("\"memory_total_bytes\":", out);
	if (d->mem_total)
		fprintf(out, "%llu", (unsigned long long)d->mem_total);
	else
		fputs("null", out);
	fputc('}', out);
}

static void json_rings(FILE *out, const struct pt_proc *p)
{
	bool first = true;
	int r;

	fputs("\"rings\":{", out);
	for (r = 0; r < PT_NRINGS; r++) {
		const struct pt_ring *g = &p->ring[r];

		if (!g->valid)
			continue;
		fprintf(out, "%s\"%s\":{", first ? "" : ",", pt_ring_names[r]);
		first = false;
		json_u64(out, "size", g->size, true);
		json_u64(out, "in_use", g->in_use, true);
		json_u64(out, "high_water", g->high_water, true);
		json_u64(out, "stalls", g->stalls, true);
		json_u64(out, "stall_ns", g->stall_ns, true);
		fputs("\"occupancy\":", out);
		json_num(out, pt_ring_occupancy(p, r));
		fputc('}', out);
	}
	fputc('}', out);
}

static void json_proc(FILE *out, const struct pt_proc *p)
{
	fprintf(out, "{\"pid\":%d,\"user\":", p->pid);
	pto_json_str(out, p->user);
	fputs(",\"command\":", out);
	pto_json_str(out, p->command);
	fputs(",\"device\":", out);
	pto_json_str(out, p->device);
	fprintf(out, ",\"sources\":[%s%s%s],", (p->src & PT_SRC_PAGE) ?
		"\"statspage\"" : "", p->src == (PT_SRC_PAGE | PT_SRC_FDINFO) ?
		"," : "", (p->src & PT_SRC_FDINFO) ? "\"fdinfo\"" : "");
	fputs("\"client_id\":", out);
	if (p->have_client_id)
		fprintf(out, "%llu", (unsigned long long)p->client_id);
	else
		fputs("null", out);
	fputs(",\"state\":", out);
	pto_json_str(out, p->state);
	fputs(",\"tasks_submitted\":", out);
	if (p->have_submitted)
		fprintf(out, "%llu", (unsigned long long)p->submitted);
	else
		fputs("null", out);
	fputc(',', out);
	json_u64(out, "tasks_completed", p->completed, true);
	json_u64(out, "tasks_failed", p->failed, true);
	json_u64(out, "tasks_in_flight", p->in_flight, true);
	json_u64(out, "runs", p->runs, true);
	fputs("\"tasks_per_s\":", out);
	json_num(out, p->tasks_per_s);
	fputc(',', out);
	json_cores(out, p->cores);
	fputc(',', out);
	json_types_u64(out, "busy_ns", p->busy_ns);
	fputc(',', out);
	json_types_util(out, p->cores, p->util);
	fputc(',', out);
	json_u64(out, "stalls", p->stalls, true);
	json_rings(out, p);
	fputs(",\"memory_bytes\":", out);
	if (p->have_mem)
		fprintf(out, "{\"heap\":%llu,\"window\":%llu}",
			(unsigned long long)p->mem_heap,
			(unsigned long long)p->mem_window);
	else
		fputs("null", out);
	fprintf(out, ",\"last_error\":%d}", p->last_error);
}

void pt_print_json(struct pt_state *st, FILE *out)
{
	bool first = true;
	int i;

	fprintf(out, "{\"ptotop_version\":1,\"iteration\":%ld,"
		"\"timestamp_ns\":%llu,\"interval_s\":", st->iteration,
		(unsigned long long)st->cur.real_ns);
	json_num(out, st->have_prev ? st->cur.interval_s : NAN);
	fputs(",\"devices\":[", out);
	for (i = 0; i < st->cur.ndevs; i++) {
		if (!pt_device_visible(st, &st->cur.devs[i]))
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		json_device(out, &st->cur.devs[i]);
	}
	fputs("],\"processes\":[", out);
	first = true;
	for (i = 0; i < st->cur.nprocs; i++) {
		if (!pt_proc_visible(st, &st->cur.procs[i]))
			continue;
		if (!first)
			fputc(',', out);
		first = false;
		json_proc(out, &st->cur.procs[i]);
	}
	fputs("]}\n", out);
	fflush(out);
}
