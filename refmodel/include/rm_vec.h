/* rm_vec.h - the one grow-by-doubling function for rangeshift's arrays.
 *
 * Every growable array in the project (extent lists, op logs, directory
 * entries, report buffers) grows the same way: when it is full, its
 * capacity doubles (from a first capacity the caller picks), with the
 * size arithmetic checked, so one function replaces the hand-written
 * realloc loops.  On failure nothing changes and -ENOMEM (or -EOVERFLOW
 * when the byte count would not fit in size_t) comes back, kernel-style.
 *
 *	if ((err = RM_VEC_RESERVE(&l->v, &l->cap, l->n + 1, 4096)))
 *		return err;
 *	l->v[l->n++] = *op;
 */
#ifndef RM_VEC_H
#define RM_VEC_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Make room for @need elements of @elem bytes in *@vp (capacity *@capp).
 * The new capacity is the old one doubled until it holds @need, starting
 * from @first; *@vp and *@capp change only on success. */
static inline int rm_vec_reserve(void **vp, size_t *capp, size_t need,
				 size_t elem, size_t first)
{
	size_t cap = *capp;
	void *nv;

	if (need <= cap)
		return 0;
	if (!cap)
		cap = first ? first : 1;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return -EOVERFLOW;
		cap *= 2;
	}
	if (elem && cap > SIZE_MAX / elem)
		return -EOVERFLOW;
	nv = realloc(*vp, cap * elem);
	if (!nv)
		return -ENOMEM;
	*vp = nv;
	*capp = cap;
	return 0;
}

/* Typed front end: @vpp is a pointer to the array pointer. */
#define RM_VEC_RESERVE(vpp, capp, need, first)                                 \
	rm_vec_reserve((void **)(vpp), (capp), (need), sizeof(**(vpp)), (first))

#endif /* RM_VEC_H */
