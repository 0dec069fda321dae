/* SPDX-License-Identifier: MIT */
/*
 * What the libpto headers need to be C++ as well as C: the casts and the
 * parameter helpers, written in C++ so that a program built with
 * -Wold-style-cast, -Wcast-qual or -Wzero-as-null-pointer-constant
 * includes the headers and uses their macros without a warning.
 *
 * pto.h and pto_statspage.h include it for C++ only; a program does not
 * include it itself.  This file is C++, so it is kept out of the kernel
 * style check (checkpatch reads templates as comparisons).
 */
#ifndef PTO_PTO_CXX_H
#define PTO_PTO_CXX_H

#ifndef __cplusplus
#error "pto_cxx.h is included by pto.h for C++ only"
#endif
#if __cplusplus < 201103L
#error "the libpto headers need C++11 or later (-std=c++11)"
#endif

#include <stdint.h>

/*
 * A C++ program may include pto.h inside extern "C" { }, as is usual for
 * a C library's header: what follows is C++, templates and the standard
 * headers they need, which C linkage would refuse.
 */
extern "C++" {

#include <cstddef>
#include <type_traits>

/* a kernel argument (an address as uint64_t) as a pointer of type T */
#define PTO_ADDR_PTR_(T, a) reinterpret_cast<T>(static_cast<uintptr_t>(a))
/* a struct read as the 64-bit words it is made of */
#define PTO_WORDS_PTR_(T, p) reinterpret_cast<T>(p)
/* a parameter's pointer, const in the maker, stored in struct pto_param */
#define PTO_UNCONST_(T, p) const_cast<T>(p)

/* PTO_OUT(&p, size) for a pointer p of any type, const included */
template <typename T>
static inline void **pto_param_ref_(T **ref)
{
	typedef typename std::remove_cv<T>::type plain;

	return reinterpret_cast<void **>(const_cast<plain **>(ref));
}

/*
 * PTO_SCALAR(v) for v an integer or an enum (a float would be truncated:
 * refused, its bits are pto_f32_bits())...
 */
template <typename T>
static inline uint64_t pto_param_scalar_(T v)
{
	static_assert(!std::is_floating_point<T>::value,
		      "PTO_SCALAR() takes an integer, an enum or a pointer: "
		      "pass a float as pto_f32_bits()");
	return static_cast<uint64_t>(v);
}

static inline uint64_t pto_param_scalar_(uint64_t v)
{
	return v;
}

/* ... or a pointer, nullptr included */
template <typename T>
static inline uint64_t pto_param_scalar_(T *p)
{
	const uint64_t addr = reinterpret_cast<uintptr_t>(p);

	return addr;
}

static inline uint64_t pto_param_scalar_(std::nullptr_t)
{
	return 0;
}

/*
 * PTO_SUBMIT(rt, kernel, type, params...): pto_submit_task() with the
 * parameters counted.  Every name is a template parameter, so this file
 * needs nothing of pto.h: the call is looked up where the template is used,
 * after pto.h has declared pto_submit_task().
 */
template <typename R, typename K, typename T, typename... P>
static inline int64_t pto_submit_counted_(R *rt, K kernel_id, T type,
					  P... params)
{
	const typename std::common_type<P...>::type p[] = { params... };

	return pto_submit_task(rt, static_cast<uint32_t>(kernel_id), type, p,
			       static_cast<uint32_t>(sizeof...(P)));
}

} /* extern "C++" */

#endif /* PTO_PTO_CXX_H */
