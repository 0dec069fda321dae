/* SPDX-License-Identifier: MIT */
/*
 * Writer side of the stats page a runtime publishes for ptotop.  The format
 * and the seqlock protocol are in <pto/pto_statspage.h>.
 *
 * The runtime creates one page per runtime, then from its scheduler thread
 * brackets every batch of counter updates with pto_statspage_begin() and
 * pto_statspage_end().  Only one thread may write a given page.
 *
 * Environment: PTO_STATS=0 disables publishing (create returns NULL);
 * PTO_STATS_DIR overrides the directory (pto_statspage_dir()).
 */
#ifndef PTO_LIB_STATSPAGE_H
#define PTO_LIB_STATSPAGE_H

#include <pto/pto_statspage.h>

/*
 * Create and map <dir>/pto-stats.<pid>.<seq> (0600), with magic, version,
 * size, pid, start_ns and device filled in.  NULL on any failure or when
 * disabled; the runtime then runs without publishing.
 */
struct pto_statspage *pto_statspage_create(const char *device);
/* Unmap the page and unlink its file.  NULL is allowed. */
void pto_statspage_destroy(struct pto_statspage *page);
/* Start an update: seq becomes odd.  NULL is allowed. */
void pto_statspage_begin(struct pto_statspage *page);
/* Finish an update: stamps update_ns, seq becomes even.  NULL is allowed. */
void pto_statspage_end(struct pto_statspage *page);

#endif /* PTO_LIB_STATSPAGE_H */
