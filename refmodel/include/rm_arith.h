/* rm_arith.h - saturating offset arithmetic shared by the model's users.
 *
 * File offsets are int64_t, as loff_t is; sums near the largest offset
 * must not overflow (undefined behaviour in C, an endless range loop in
 * practice), so callers that build ranges at the limits add through here.
 */
#ifndef RM_ARITH_H
#define RM_ARITH_H

#include <stdint.h>

/* a + b, clamped to [INT64_MIN, INT64_MAX] instead of overflowing. */
static inline int64_t rm_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

#endif /* RM_ARITH_H */
