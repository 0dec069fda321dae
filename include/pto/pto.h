/* SPDX-License-Identifier: MIT */
/*
 * libpto: run orchestration functions on a2a3 accelerators.
 *
 * An orchestration function is plain C that submits tasks; each task names
 * a kernel, the worker type it runs on and its parameters.  The runtime
 * infers dependencies from the declared tensor regions, allocates OUTPUT
 * buffers from a heap ring, frees them when their scope has ended and their
 * consumers have finished, and runs the tasks on the device (the in-process
 * simulator by default, or /dev/ptoN).
 *
 * See Documentation/libpto.rst and libpto(3).
 *
 * ABI: the library is libpto.so.0.  Structs the caller allocates and the
 * library fills or reads (struct pto_config, struct pto_stats) only grow
 * at the end, and the library learns the caller's size (the size field of
 * struct pto_config, the size argument of pto_get_stats_sized()), so a
 * program built against an older header keeps working with a newer
 * library, and one built against a newer header is told clearly when the
 * library lacks what it asks for.
 */
#ifndef PTO_PTO_H
#define PTO_PTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <pto/pto_uapi.h>

#ifdef __cplusplus
#include <pto/pto_cxx.h>

extern "C" {
#endif

#define PTO_VERSION_MAJOR 0
#define PTO_VERSION_MINOR 2

struct pto_runtime;

/**
 * pto_version() - the version of the libpto in use
 *
 * Return: "MAJOR.MINOR.PATCH", the version of the whole PTO release this
 * library comes from (the tools' --version, pto.ko's MODULE_VERSION and
 * the packages carry the same string).  PTO_VERSION_MAJOR/MINOR are the
 * header's; this is the library's, which may be newer.
 */
const char *pto_version(void);

/* Kinds of cores; the values are the device ABI's. */
enum pto_worker_type {
	PTO_WORKER_CUBE = PTO_UAPI_WORKER_CUBE,
	PTO_WORKER_VECTOR = PTO_UAPI_WORKER_VECTOR,
	PTO_WORKER_AICPU = PTO_UAPI_WORKER_AICPU,
	PTO_WORKER_ACCEL = PTO_UAPI_WORKER_ACCEL,
	PTO_NUM_WORKER_TYPES = PTO_UAPI_NUM_WORKER_TYPES
};

/* ---- tensor views ------------------------------------------------------ */

/**
 * struct pto_view - an N-D strided view of a tensor
 * @base: the tensor's memory; it also names the tensor, so every view of
 *	one tensor (and every byte range of it) must give the same @base
 * @offset: elements from @base to the view's first element
 * @dtype: enum pto_dtype
 * @ndim: dimensions, 1..PTO_MAX_DIMS
 * @shape: elements along each dimension, outermost first
 * @stride: elements from one index to the next along each dimension
 *	(0 repeats the same elements: a broadcast, fine for reading)
 *
 * A view is a plain value: make one with pto_view_nd() or pto_view_2d(),
 * cut tiles and slices out of it with pto_view_slice() and
 * pto_view_tile_2d(), swap dimensions with pto_view_transpose().  Two
 * views depend on each other only when they share a byte (see
 * Documentation/libpto.rst, "Tensor views").  A kernel receives a view
 * parameter as the address of a struct pto_view_desc (pto_arg_view()).
 */
struct pto_view {
	void *base;
	uint64_t offset;
	uint32_t dtype;
	uint32_t ndim;
	uint64_t shape[PTO_MAX_DIMS];
	uint64_t stride[PTO_MAX_DIMS];
};

/**
 * pto_dtype_name() - "f32", "bf16", ...
 * @dtype: enum pto_dtype
 *
 * Return: the name, or "?" for an unknown type.
 */
const char *pto_dtype_name(uint32_t dtype);

/* A row-major (C order) contiguous tensor of ndim dimensions. */
static inline struct pto_view pto_view_nd(void *base, uint32_t dtype,
					  uint32_t ndim,
					  const uint64_t *shape)
{
	struct pto_view v;
	uint64_t stride = 1;
	uint32_t d;

	__builtin_memset(&v, 0, sizeof(v));
	v.base = base;
	v.dtype = dtype;
	v.ndim = ndim;
	for (d = ndim < PTO_MAX_DIMS ? ndim : PTO_MAX_DIMS; d-- > 0;) {
		v.shape[d] = shape[d];
		v.stride[d] = stride;
		stride *= shape[d];
	}
	return v;
}

/* A rows x cols matrix whose rows start ld elements apart. */
static inline struct pto_view pto_view_2d(void *base, uint32_t dtype,
					  uint64_t rows, uint64_t cols,
					  uint64_t ld)
{
	struct pto_view v;

	__builtin_memset(&v, 0, sizeof(v));
	v.base = base;
	v.dtype = dtype;
	v.ndim = 2;
	v.shape[0] = rows;
	v.shape[1] = cols;
	v.stride[0] = ld;
	v.stride[1] = 1;
	return v;
}

/*
 * Indices [start, start + len) of dimension dim of v.  A range past the
 * dimension's end, or a dimension v does not have, makes a view of no
 * dimensions, which a submission refuses, naming the parameter: the
 * slice's shape alone could not tell that it reaches past v's memory.
 */
static inline struct pto_view pto_view_slice(struct pto_view v, uint32_t dim,
					     uint64_t start, uint64_t len)
{
	if (dim < v.ndim && dim < PTO_MAX_DIMS && start <= v.shape[dim] &&
	    len <= v.shape[dim] - start) {
		v.offset += start * v.stride[dim];
		v.shape[dim] = len;
	} else {
		v.ndim = 0;
	}
	return v;
}

/* The rows x cols tile of a 2-D view whose first element is (row, col). */
static inline struct pto_view pto_view_tile_2d(struct pto_view v,
					       uint64_t row, uint64_t col,
					       uint64_t rows, uint64_t cols)
{
	return pto_view_slice(pto_view_slice(v, 0, row, rows), 1, col, cols);
}

/*
 * v with dimensions d0 and d1 swapped (a transpose of a matrix); as with
 * pto_view_slice(), a dimension v does not have makes a refused view.
 */
static inline struct pto_view pto_view_transpose(struct pto_view v,
						 uint32_t d0, uint32_t d1)
{
	uint64_t t;

	if (d0 < v.ndim && d1 < v.ndim && v.ndim <= PTO_MAX_DIMS) {
		t = v.shape[d0];
		v.shape[d0] = v.shape[d1];
		v.shape[d1] = t;
		t = v.stride[d0];
		v.stride[d0] = v.stride[d1];
		v.stride[d1] = t;
	} else {
		v.ndim = 0;
	}
	return v;
}

/* A kernel argument (an address as uint64_t) as a pointer of type T. */
#ifndef __cplusplus
#define PTO_ADDR_PTR_(T, a) ((T)(uintptr_t)(a))
#endif

/* In a C kernel: the view that parameter i (a view parameter) passes. */
static inline const struct pto_view_desc *pto_arg_view(const uint64_t *args,
							uint32_t i)
{
	return PTO_ADDR_PTR_(const struct pto_view_desc *, args[i]);
}

/* In a C kernel: the address of element (i, j) of a 2-D view. */
static inline void *pto_view_desc_at2(const struct pto_view_desc *d,
				      uint64_t i, uint64_t j)
{
	return PTO_ADDR_PTR_(void *, d->addr + (i * d->stride[0] +
						j * d->stride[1]) *
					       d->elem_size);
}

enum pto_param_kind {
	PTO_PARAM_INPUT,		/* read base+offset..+size */
	PTO_PARAM_OUTPUT,		/* runtime allocates size bytes, *ref = addr */
	PTO_PARAM_INOUT,		/* read and write base+offset..+size */
	PTO_PARAM_OUTPUT_EXISTING,	/* write base+offset..+size */
	PTO_PARAM_NODEP,		/* address passed, access not tracked */
	PTO_PARAM_SCALAR,		/* value passed */
	/*
	 * Or'ed into any kind but SCALAR: the tensor is the N-D view
	 * ->view points to, not a byte range (see "Tensor views" below).
	 */
	PTO_PARAM_VIEW = 0x100
};

/* The anonymous union is C11: quiet under -std=c99 -pedantic too. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
/**
 * struct pto_param - one parameter of a task
 * @kind: enum pto_param_kind, optionally with PTO_PARAM_VIEW
 * @base: the tensor: its first byte, which also names it (every region
 *	of one tensor must give the same @base); for a buffer the runtime
 *	made (OUTPUT, pto_alloc()), the pointer it gave, else -EINVAL
 * @ref: OUTPUT: receives the buffer's address
 * @view: with PTO_PARAM_VIEW: the view (an OUTPUT view is filled in)
 * @offset: bytes from @base to the region
 * @size: bytes of the region
 * @value: SCALAR: the value
 *
 * Use the PTO_IN()... makers below rather than filling it by hand.
 */
struct pto_param {
	uint32_t kind;
	void *base;
	union {
		void **ref;
		struct pto_view *view;
	};
	uint64_t offset;
	uint64_t size;
	uint64_t value;
};

#pragma GCC diagnostic pop

/*
 * The parameter makers below are for C and C++ alike: C gets a compound
 * literal (usable in initializers), C++, which has none, inline functions
 * returning the same struct, written so that the makers compile without
 * warnings under -Wold-style-cast, -Wcast-qual and
 * -Wzero-as-null-pointer-constant.
 */
#ifdef __cplusplus
static inline struct pto_param pto_param_make(uint32_t kind,
					      const void *base, void **ref,
					      uint64_t offset, uint64_t size,
					      uint64_t value)
{
	struct pto_param p;

	p.kind = kind;
	/* only OUTPUT_EXISTING and INOUT write, as the kind says */
	p.base = PTO_UNCONST_(void *, base);
	p.ref = ref;
	p.offset = offset;
	p.size = size;
	p.value = value;
	return p;
}

static inline struct pto_param pto_param_view(uint32_t kind,
					      const struct pto_view *v)
{
	struct pto_param p = pto_param_make(kind | PTO_PARAM_VIEW, nullptr,
					    nullptr, 0, 0, 0);

	/* only an OUT view is written, as the kind says */
	p.view = PTO_UNCONST_(struct pto_view *, v);
	return p;
}

#define PTO_REGION_(k, b, o, s)						\
	pto_param_make((k), (b), nullptr, (o), (s), 0)
#define PTO_OUT(ref, size)						\
	pto_param_make(PTO_PARAM_OUTPUT, nullptr, pto_param_ref_(ref), 0, \
		       (size), 0)
#define PTO_SCALAR(v)							\
	pto_param_make(PTO_PARAM_SCALAR, nullptr, nullptr, 0, 0,	\
		       pto_param_scalar_(v))
#define PTO_VIEW_PARAM_(k, v) pto_param_view((k), (v))
#else
/*
 * A pointer to const taken as the plain one the struct holds (only the
 * kinds that write, write), through an integer so that -Wcast-qual has
 * nothing to say, and through const void * so that a non-pointer (a
 * float) is still refused.
 */
#define PTO_UNCONST_C_(T, p) ((T)(uintptr_t)(const void *)(p))
#define PTO_VIEW_PARAM_(k, v)						\
	((struct pto_param){ .kind = (k) | PTO_PARAM_VIEW,		\
			     .view = PTO_UNCONST_C_(struct pto_view *, v) })
#define PTO_PARAM_(k, b, r, o, s, v)					\
	((struct pto_param){ .kind = (k),				\
			     .base = PTO_UNCONST_C_(void *, b),		\
			     .ref = PTO_UNCONST_C_(void **, r),		\
			     .offset = (o), .size = (s), .value = (v) })
#define PTO_REGION_(k, b, o, s) PTO_PARAM_(k, b, NULL, o, s, 0)
#define PTO_OUT(ref, size) \
	PTO_PARAM_(PTO_PARAM_OUTPUT, NULL, ref, 0, size, 0)
/*
 * A float would be truncated to an integer (0.5f to 0): refused at compile
 * time, as in C++.  0 * sizeof of a struct holding the assertion is the
 * C11 way to assert inside an expression; C99 has no _Generic, so there
 * the float is not caught.
 */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ < 201112L
#define PTO_SCALAR_NOT_FLOAT_(v) 0
#else
#define PTO_SCALAR_NOT_FLOAT_(v)					\
	(0 * sizeof(struct {						\
		_Static_assert(!_Generic((v), default: 0, float: 1,	\
					 double: 1, long double: 1),	\
			       "PTO_SCALAR() takes an integer, an enum or " \
			       "a pointer: pass a float as pto_f32_bits()"); \
		char c_;						\
	}))
#endif
#define PTO_SCALAR(v)							\
	PTO_PARAM_(PTO_PARAM_SCALAR, NULL, NULL, 0, 0,			\
		   (uint64_t)(v) + PTO_SCALAR_NOT_FLOAT_(v))
#endif
#define PTO_IN(base, off, size) PTO_REGION_(PTO_PARAM_INPUT, base, off, size)
#define PTO_INOUT(base, off, size) \
	PTO_REGION_(PTO_PARAM_INOUT, base, off, size)
#define PTO_OUT_EXISTING(base, off, size) \
	PTO_REGION_(PTO_PARAM_OUTPUT_EXISTING, base, off, size)
#define PTO_NODEP(base, off, size) PTO_REGION_(PTO_PARAM_NODEP, base, off, size)

/* The same kinds on an N-D view (const struct pto_view *; OUT fills it). */
#define PTO_IN_VIEW(v)		PTO_VIEW_PARAM_(PTO_PARAM_INPUT, v)
#define PTO_OUT_VIEW(v)		PTO_VIEW_PARAM_(PTO_PARAM_OUTPUT, v)
#define PTO_INOUT_VIEW(v)	PTO_VIEW_PARAM_(PTO_PARAM_INOUT, v)
#define PTO_OUT_EXISTING_VIEW(v) \
	PTO_VIEW_PARAM_(PTO_PARAM_OUTPUT_EXISTING, v)
#define PTO_NODEP_VIEW(v)	PTO_VIEW_PARAM_(PTO_PARAM_NODEP, v)

/* A float scalar, passed as its bit pattern (what the built-in ops expect). */
static inline uint64_t pto_f32_bits(float f)
{
	uint32_t u;

	__builtin_memcpy(&u, &f, sizeof(u));	/* C and C++ alike */
	return u;
}

/*
 * Parameters one task may take.  Up to PTO_MAX_ARGS travel in the task's
 * descriptor; a C kernel on the simulator may take up to PTO_MAX_PARAMS,
 * the rest of them then costing the task a heap block of 8 bytes each.
 * Built-in ops take at most PTO_MAX_ARGS.
 */
#define PTO_MAX_PARAMS 128

typedef void (*pto_kernel_fn)(const uint64_t *args, uint32_t nargs);
typedef int (*pto_orch_fn)(struct pto_runtime *rt, void *arg);

/* Task rings a runtime may have: one per scope depth, the last shared. */
#define PTO_MAX_DEPTH_RINGS PTO_MAX_RINGS

/**
 * struct pto_ring_config - sizes of one task ring
 * @task_window: task slots, a power of two
 * @dep_pool_size: dependency list entries
 * @tensormap_pool_size: TensorMap entries
 * @__pad: zero
 * @heap_size: heap ring bytes
 *
 * A field left 0 takes the value of the same field of struct pto_config.
 */
struct pto_ring_config {
	uint32_t task_window;
	uint32_t dep_pool_size;
	uint32_t tensormap_pool_size;
	uint32_t __pad;
	uint64_t heap_size;
};

/**
 * struct pto_config - how a runtime is set up
 * @device: "sim" (the default, also for NULL) or a device node such as
 *	"/dev/pto0"
 * @task_window: task slots of each task ring, a power of two
 * @heap_size: heap ring bytes of each task ring
 * @dep_pool_size: dependency list entries of each task ring
 * @tensormap_pool_size: TensorMap entries of each task ring
 * @cores: simulator only: cores of each worker type
 * @stall_timeout_ms: no progress for this long while blocked on a ring is
 *	a deadlock (-EDEADLK)
 * @trace_path: write a Chrome/Perfetto JSON trace there when set
 * @arena_size: bytes pto_malloc() may hand out
 * @size: sizeof(struct pto_config) as the caller knows it, set by
 *	pto_config_init(); 0 means a program built against libpto 0.1
 * @nrings: task rings, 1..PTO_MAX_DEPTH_RINGS: the tasks of a scope at
 *	depth d (the run's outer scope is depth 0) go to ring d, depths past
 *	the last share it; each ring is retired independently
 * @ring: per task ring, sizes that differ from the fields above
 * @sched: who schedules: PTO_SCHED_AUTO, PTO_SCHED_THREAD (a thread of
 *	its own), PTO_SCHED_WORKERS (the simulator's core threads, when
 *	they finish a task or run out of work) or PTO_SCHED_SHARDS (the
 *	core threads concurrently, with sharded ready queues)
 * @cpus: host CPUs to pin libpto's threads to, round robin, e.g. "0-3,8";
 *	"any": not pinned; NULL: the simulator's core threads are pinned
 *	softly (a CPU each, let go while another thread keeps it busy)
 *	where they fill the CPUs the process may use
 * @check: checked mode, 1 or 0 (PTO_CHECK): on the simulator, a C kernel
 *	writing past the end of an OUTPUT buffer fails its task with -EFAULT
 *	and a message instead of corrupting memory; slower (see libpto(3))
 *
 * Fill it with pto_config_init() (defaults, then PTO_* environment
 * overrides), then change what you need.  New fields are only ever added
 * at the end.
 */
struct pto_config {
	const char *device;
	uint32_t task_window;
	uint64_t heap_size;
	uint32_t dep_pool_size;
	uint32_t tensormap_pool_size;
	uint32_t cores[PTO_NUM_WORKER_TYPES];
	uint32_t stall_timeout_ms;
	const char *trace_path;
	uint64_t arena_size;
	uint32_t size;
	/* libpto 0.2 */
	uint32_t nrings;
	struct pto_ring_config ring[PTO_MAX_DEPTH_RINGS];
	uint32_t sched;
	const char *cpus;
	uint32_t check;
};

/* struct pto_config.sched */
enum pto_sched_policy {
	PTO_SCHED_AUTO = 0,	/* workers when CPUs are scarce, see libpto(3) */
	PTO_SCHED_THREAD = 1,
	PTO_SCHED_WORKERS = 2,
	/* the core threads, concurrently, with sharded ready queues */
	PTO_SCHED_SHARDS = 3,
};

/**
 * pto_config_init_sized() - defaults, then PTO_* environment overrides
 * @cfg: the configuration to fill
 * @size: sizeof(*cfg) as the caller was compiled with
 *
 * Call it through pto_config_init(), which passes the size.  Fields the
 * library does not know are zeroed.
 */
void pto_config_init_sized(struct pto_config *cfg, size_t size);

/*
 * pto_config_init() - pto_config_init_sized() with libpto 0.1's size
 * @cfg: the configuration to fill, as a libpto 0.1 program knows it
 *
 * The symbol programs built against libpto 0.1 call; the macro of the
 * same name calls pto_config_init_sized() with the caller's size.  (Not
 * kernel-doc: the parenthesised name, which keeps the macro away, is
 * beyond its parser.)
 */
void (pto_config_init)(struct pto_config *cfg);
#define pto_config_init(cfg) pto_config_init_sized((cfg), sizeof(*(cfg)))

/**
 * pto_runtime_create() - open a device and set up a runtime on it
 * @cfg: configuration, or NULL for pto_config_init()'s defaults
 * @rt: receives the runtime
 *
 * Return: 0; -EINVAL for a bad configuration (with a message naming the
 * field); -ENOENT, -EACCES or -ENODEV when the device cannot be opened;
 * -EPROTO when the device speaks another ABI; -ENOMEM (the sim's heap
 * is reserved whole: an address space limit, ulimit -v, may refuse it);
 * -EAGAIN when a thread cannot be started.  Each failure is said on
 * stderr.
 */
int pto_runtime_create(const struct pto_config *cfg, struct pto_runtime **rt);

/**
 * pto_runtime_destroy() - stop the device and free everything
 * @rt: a runtime, or NULL
 *
 * Not during a run, nor concurrently with any other call on @rt: called
 * while a run is in progress it refuses (and says so on stderr), leaving
 * the runtime intact.
 */
void pto_runtime_destroy(struct pto_runtime *rt);

/**
 * pto_trace_flush() - write out the trace and say whether all of it went
 * @rt: the runtime
 *
 * The trace (@trace_path, PTO_TRACE) is written as the runtime goes and
 * completed by pto_runtime_destroy(), which can only log a failure.  A
 * program that must know its trace is whole (a tool's exit status) calls
 * this after its last run.  Any thread, during a run too (never with
 * pto_runtime_destroy()).
 *
 * Return: 0 when every event so far is written, or when there is no
 * trace; -EINVAL for a NULL @rt; the negative errno of a failed write
 * (-ENOSPC for a full disk), after which the trace is incomplete.
 */
int pto_trace_flush(struct pto_runtime *rt);

/**
 * pto_kernel_register() - bind a kernel id to a C function (simulator)
 * @rt: the runtime
 * @kernel_id: id tasks name, below PTO_MAX_KERNELS
 * @type: the worker type whose cores run it
 * @fn: the kernel
 * @name: a name for messages, traces and statistics, or NULL ("kernel
 *	ID"); kept to 31 bytes, a control character written as its C escape
 *
 * Return: 0; -EEXIST when the id is bound; -EOPNOTSUPP on a device, which
 * runs built-in ops only; -EBUSY during a run; -EINVAL.
 */
int pto_kernel_register(struct pto_runtime *rt, uint32_t kernel_id,
			enum pto_worker_type type, pto_kernel_fn fn,
			const char *name);

/**
 * pto_kernel_register_builtin() - bind a kernel id to a built-in op
 * @rt: the runtime
 * @kernel_id: id tasks name, below PTO_MAX_KERNELS
 * @type: the worker type whose cores run it
 * @op: enum pto_op
 *
 * Return: 0; -EEXIST when the id is bound; -EBUSY during a run; -EINVAL.
 */
int pto_kernel_register_builtin(struct pto_runtime *rt, uint32_t kernel_id,
				enum pto_worker_type type, uint32_t op);

/**
 * pto_malloc() - device memory the host can read and write
 * @rt: the runtime
 * @size: bytes
 *
 * Return: a 64-byte aligned pointer valid until pto_free() or the
 * runtime's end; NULL, with a message on stderr, for 0 bytes or when the
 * arena (@arena_size of struct pto_config) has no free block that large.
 */
void *pto_malloc(struct pto_runtime *rt, size_t size);

/**
 * pto_free() - give back pto_malloc() memory
 * @rt: the runtime
 * @ptr: a pointer pto_malloc() returned, or NULL
 */
void pto_free(struct pto_runtime *rt, void *ptr);

/**
 * pto_run() - run an orchestration function to completion
 * @rt: the runtime
 * @fn: the orchestration function, called on this thread inside an outer
 *	scope
 * @arg: passed to @fn
 *
 * Returns once every submitted task has completed and been consumed.
 * The calling thread is the run's orchestrator thread: only it may
 * submit and open or close scopes until the run ends.  C kernels run on
 * libpto's threads (the simulator's "pto-coreN", and short ones also on
 * "pto-sched"), and with PTO_SCHED_WORKERS short ones also on this
 * thread while it waits (pto_wait(), the run's end), never while @fn
 * submits.  A C++ exception @fn throws reaches the caller once the
 * run has ended as if @fn had returned an error; one a kernel throws
 * ends the process.
 *
 * Return: 0; the run's first error (-EIO or -ETIMEDOUT for a failed
 * task, -EDEADLK, -ENOMEM, -ECANCELED after pto_run_cancel()), whatever
 * @fn returned then; else the negative
 * value @fn returned; -EINVAL when @fn returned a positive value or left
 * a scope open; -EBUSY when a run is in progress on @rt already (another
 * thread's, or a nested call).
 */
int pto_run(struct pto_runtime *rt, pto_orch_fn fn, void *arg);

/**
 * pto_run_cancel() - stop the run in progress
 * @rt: the runtime
 *
 * Asks the run in progress on @rt, if any, to stop: its tasks not yet
 * started complete as cancelled without running (a task already on a
 * core still finishes), the orchestration's later pto_submit_task()
 * calls return -ECANCELED, and pto_run() returns -ECANCELED once what
 * did start has finished.  The runtime is then ready for another run; a
 * request never reaches a later run.  May be called from any thread and
 * from a signal handler (it is async-signal-safe), e.g. on SIGINT.
 *
 * Return: 0 when it stopped the run in progress, which then returns
 * -ECANCELED even if all its tasks had run; -EALREADY when that run was
 * stopped by an earlier call (a second Ctrl-C may then mean "quit now");
 * -ENOENT when no run is in progress (also as one ends); -EINVAL when @rt
 * is NULL.
 */
int pto_run_cancel(struct pto_runtime *rt);

/**
 * pto_wait() - wait for the tasks submitted so far
 * @rt: the runtime, inside pto_run()
 *
 * Returns once every task the run has submitted so far has completed, so
 * that the orchestration may read what they wrote on the host — the
 * program's memory and the OUTPUT buffers of scopes still open — and
 * decide what to submit next (a solver's convergence test, a batch size
 * computed by a kernel).  Like OpenMP's taskwait it drains the device:
 * call it no more often than the decision needs.  Orchestrator thread
 * only.
 *
 * Return: 0; -ECANCELED when the run failed or was cancelled (the tasks
 * not started then completed without running); -EDEADLK when no task
 * completed for the stall timeout with no core busy; -EINVAL outside a
 * run; -EPERM on a thread other than the one inside pto_run().
 */
int pto_wait(struct pto_runtime *rt);

/**
 * pto_scope_begin() - open a scope inside a run
 * @rt: the runtime
 *
 * Tasks submitted until the matching pto_scope_end() that make buffers
 * (OUTPUT parameters, pto_alloc()) are held by this scope, and only this
 * one: their buffers live until it ends and their consumers are done.
 * Tasks that make none are not held.  Orchestrator thread only (see
 * libpto(3), THREADS).
 *
 * It returned void before libpto 0.2; programs built then still work
 * (they bind to pto_scope_begin@LIBPTO_0 and ignore the result).
 *
 * Return: 0; -EINVAL outside a run; -EPERM on a thread other than the
 * one inside pto_run(); -ENOMEM when its bookkeeping cannot grow: the
 * scope is not opened, later submissions return -ECANCELED and pto_run()
 * -ENOMEM.
 */
int pto_scope_begin(struct pto_runtime *rt);

/**
 * pto_scope_end() - close the innermost scope
 * @rt: the runtime
 *
 * Return: 0; -EINVAL when no scope of the orchestration is open or
 * outside a run; -EPERM on a thread other than the one inside pto_run().
 */
int pto_scope_end(struct pto_runtime *rt);

/**
 * pto_submit_task() - submit a task
 * @rt: the runtime, inside pto_run()
 * @kernel_id: a registered kernel
 * @type: the worker type it was registered for
 * @params: its parameters, in the order the kernel receives them
 * @nparams: at most PTO_MAX_PARAMS for a C kernel, PTO_MAX_ARGS for a
 *	built-in op
 *
 * Waits while a ring is full (back-pressure).  OUTPUT parameters receive
 * their buffer's address before it returns.
 *
 * Orchestrator thread only: -EINVAL outside a run, -EPERM on another
 * thread during one.  A built-in op's parameters are checked against
 * its arity and regions (-EINVAL with a message, see
 * Documentation/ops.rst).
 *
 * Return: the task's id (>= 0); -EINVAL, -EPERM, -ENOENT (unknown
 * kernel), -E2BIG (a buffer larger than its ring, or more than
 * PTO_MAX_ARGS parameters for a built-in op), -EFAULT (memory the device cannot
 * see), -ENODEV (no core of that type), -EDEADLK, -ECANCELED (an earlier
 * task failed; the run drains).
 */
int64_t pto_submit_task(struct pto_runtime *rt, uint32_t kernel_id,
			enum pto_worker_type type,
			const struct pto_param *params, uint32_t nparams);

/*
 * PTO_SUBMIT(rt, kernel_id, type, params...) - pto_submit_task() with the
 * parameters listed in the call and counted by the compiler, so that the
 * count cannot go stale when a parameter is added (a count one short
 * drops the last parameter's dependencies without a word).  At least one
 * parameter (a task with none: pto_submit_task(rt, id, type, NULL, 0));
 * C and C++ alike:
 *
 *	PTO_SUBMIT(rt, K_ADD, PTO_WORKER_VECTOR, PTO_IN(a, 0, n),
 *		   PTO_INOUT(acc, 0, n));
 */
#ifdef __cplusplus
#define PTO_SUBMIT(rt, kernel_id, type, ...)				\
	pto_submit_counted_((rt), (kernel_id), (type), __VA_ARGS__)
#else
#define PTO_NPARAMS_(...)						\
	((uint32_t)(sizeof((struct pto_param[]){ __VA_ARGS__ }) /	\
		    sizeof(struct pto_param)))
#define PTO_SUBMIT(rt, kernel_id, type, ...)				\
	pto_submit_task((rt), (kernel_id), (type),			\
			(const struct pto_param[]){ __VA_ARGS__ },	\
			PTO_NPARAMS_(__VA_ARGS__))
#endif

/**
 * pto_alloc() - a runtime-owned tensor that no task produces
 * @rt: the runtime, inside pto_run()
 * @view: in: @dtype, @ndim and @shape; out: @base of a new buffer,
 *	@offset 0 and row-major (C order) strides
 *
 * The buffer comes from the heap ring of the current scope's depth and
 * is freed like a task's OUTPUT: once the scope it was made in has ended
 * and every task that accessed it has finished.  Its contents are
 * undefined until a task writes them.  It takes a slot of the task ring
 * like a task, but is never dispatched to a core; like a task's OUTPUT
 * buffer it counts as written when it is made, so tasks that access it
 * are ordered after that.  Orchestrator thread only.
 *
 * Return: 0; -EINVAL (a bad view, outside a run), -EPERM (another
 * thread), -E2BIG (it and its view descriptor take more than the heap
 * ring), -EDEADLK, -ECANCELED.
 */
int pto_alloc(struct pto_runtime *rt, struct pto_view *view);

/**
 * pto_kernel_set_error() - fail the running task (from a C kernel)
 * @err: a negative errno; a positive one (EIO) counts as its negative,
 *	a value that is no errno (-4242) as -EIO, and so does -ECANCELED,
 *	the status of tasks the runtime did not run; 0 does nothing
 *
 * The run then reports the error and drains.  Outside a kernel, or once
 * the task has an error, it does nothing.
 */
void pto_kernel_set_error(int err);

/**
 * pto_core_id() - the core the calling C kernel runs on
 *
 * Cores are numbered from 0 in worker-type order (all cube cores, then
 * vector, aicpu and accel), stable for the runtime's life: a kernel may
 * index per-core scratch memory with it (allocate it with pto_malloc()
 * for as many cores as pto_get_stats() reports).
 *
 * Return: the core's number, or -1 outside a kernel.
 */
int pto_core_id(void);

/**
 * pto_arg_is_view() - is parameter i of the running C kernel's task a view?
 * @i: the parameter's index
 *
 * For a kernel that takes either a plain tensor (args[i] is its address)
 * or a view (args[i] is the address of its struct pto_view_desc).
 *
 * Any parameter of up to PTO_MAX_PARAMS may be asked about.
 *
 * Return: 1 or 0; -EINVAL outside a kernel; -ERANGE when @i is not below
 * the task's parameter count.
 */
int pto_arg_is_view(uint32_t i);

/*
 * In a C kernel: the first byte parameter i reaches, whether it was
 * passed as a byte range (args[i]) or as a view (its first element), for
 * a kernel that takes either.
 */
static inline void *pto_arg_data(const uint64_t *args, uint32_t i)
{
	return PTO_ADDR_PTR_(void *, pto_arg_is_view(i) == 1 ?
			     pto_arg_view(args, i)->addr : args[i]);
}

/* ---- helpers for tools ------------------------------------------------- */

/**
 * pto_worker_type_name() - "cube", "vector", "aicpu" or "accel"
 * @type: enum pto_worker_type
 *
 * Return: the name, or "?" for an unknown type.
 */
const char *pto_worker_type_name(uint32_t type);

/**
 * pto_parse_cores() - parse "cube=4,vector=8,aicpu=1,accel=1"
 * @s: any subset of the four, comma separated, each at most once
 * @cores: updated for the types named; left alone on error
 *
 * Return: 0, or -EINVAL.
 */
int pto_parse_cores(const char *s, uint32_t cores[PTO_NUM_WORKER_TYPES]);

/**
 * pto_parse_size() - parse a byte count with an optional K, M or G suffix
 * @s: "123", "0x40", "64K", "64KiB", "256MB", "1G" (binary units):
 *	decimal (a leading 0 is not octal) or 0x hex, then only the suffix
 * @out: the value
 *
 * Return: 0, or -EINVAL.
 */
int pto_parse_size(const char *s, uint64_t *out);

/**
 * pto_op_name() - name of a built-in op ("gemm_f32")
 * @op: enum pto_op
 *
 * Return: the name, or NULL for an unknown op.
 */
const char *pto_op_name(uint32_t op);

/**
 * pto_op_expf() - the exp the built-in ops use
 * @x: argument
 *
 * For references that must match the ops bit for bit.
 *
 * Return: e to the power x, computed the same way on every backend.
 */
float pto_op_expf(float x);

/* ---- flow-control statistics -------------------------------------------- */

enum pto_ring {
	PTO_RING_TASK,		/* task window slots */
	PTO_RING_HEAP,		/* heap ring bytes */
	PTO_RING_DEP,		/* dependency list entries */
	PTO_RING_TENSORMAP,	/* TensorMap entries */
	PTO_NUM_RINGS
};

struct pto_ring_stats {
	uint64_t size;		/* capacity */
	uint64_t in_use;	/* now */
	uint64_t high_water;	/* most ever in use */
	uint64_t stalls;	/* times the orchestrator had to wait */
	uint64_t stall_ns;	/* time it waited */
};

/**
 * struct pto_stats - a runtime's counters
 * @ring: per ring: size, use and stalls
 * @tasks_submitted: tasks submitted (pto_alloc() buffers included)
 * @tasks_completed: tasks done with, however they ended: ran, failed, or
 *	cancelled after a failure without running (never more than
 *	@tasks_submitted, also in a snapshot taken during a run)
 * @tasks_failed: tasks whose kernel or device reported an error
 * @edges: dependencies inferred on producers not yet retired when their
 *	consumer was submitted; one that had retired adds none, so for one
 *	program the count varies with timing and scheduling mode
 * @busy_ns: core time per worker type
 * @cores: cores per worker type
 * @runs: pto_run() calls
 * @run_ns: wall time inside pto_run(), the run in progress included
 * @nrings: task rings in use
 * @__pad: zero
 * @depth: per task ring (one per scope depth) and resource: size, use and
 *	stalls; @ring sums them (its high_water is the sum of theirs)
 *
 * New fields are only ever added at the end; pto_get_stats() fills as
 * much as the caller's size holds.
 */
struct pto_stats {
	struct pto_ring_stats ring[PTO_NUM_RINGS];
	uint64_t tasks_submitted;
	uint64_t tasks_completed;
	uint64_t tasks_failed;
	uint64_t edges;
	uint64_t busy_ns[PTO_NUM_WORKER_TYPES];
	uint32_t cores[PTO_NUM_WORKER_TYPES];
	uint64_t runs;
	uint64_t run_ns;
	/* libpto 0.2 */
	uint32_t nrings;
	uint32_t __pad;
	struct pto_ring_stats depth[PTO_MAX_DEPTH_RINGS][PTO_NUM_RINGS];
};

/**
 * pto_ring_name() - "task window", "heap ring", ...
 * @ring: enum pto_ring
 *
 * Return: the name, or "?".
 */
const char *pto_ring_name(enum pto_ring ring);

/**
 * pto_get_stats_sized() - copy a runtime's counters
 * @rt: the runtime; may be inside pto_run() on another thread
 * @st: filled up to @size bytes
 * @size: sizeof(*st) as the caller was compiled with
 *
 * Call it through pto_get_stats(), which passes the size.
 *
 * Return: 0, or -EINVAL.
 */
int pto_get_stats_sized(struct pto_runtime *rt, struct pto_stats *st,
			size_t size);

/*
 * pto_get_stats() - pto_get_stats_sized() with libpto 0.1's size
 * @rt: the runtime
 * @st: the counters, as a libpto 0.1 program knows them
 *
 * The symbol programs built against libpto 0.1 call; the macro of the
 * same name calls pto_get_stats_sized() with the caller's size.
 *
 * Return: 0, or -EINVAL.
 */
int (pto_get_stats)(struct pto_runtime *rt, struct pto_stats *st);
#define pto_get_stats(rt, st) pto_get_stats_sized((rt), (st), sizeof(*(st)))

/**
 * pto_print_stats() - a human-readable table with sizing advice
 * @rt: the runtime
 * @out: where to print it (NULL: nothing is printed, a message says why)
 */
void pto_print_stats(struct pto_runtime *rt, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* PTO_PTO_H */
