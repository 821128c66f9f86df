/* hex.h — hex numbers in the kernel's text files (/proc/PID/maps,
 * /proc/kallsyms), parsed by hand: strtoull's locale and base handling
 * were a fifth of the parse of kallsyms' ~120,000 lines.
 */
#ifndef PMUBPF_LIB_HEX_H
#define PMUBPF_LIB_HEX_H

#include <stdbool.h>
#include <stdint.h>

/* Parse the hex digits at *p (at least one, either case, no more than
 * 64 bits) into *v and move *p past them. False, *p and *v unchanged,
 * if there is no digit or the number overflows. */
static inline bool hex_parse(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int n = 0;

	for (;; s++, n++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (x >> 60)
			return false; /* would overflow */
		x = x << 4 | d;
	}
	if (!n)
		return false;
	*p = s;
	*v = x;
	return true;
}

#endif
