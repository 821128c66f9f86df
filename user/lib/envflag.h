/* envflag.h — pmubpf's switches in the environment (PMUBPF_MAP_PREALLOC,
 * PMUBPF_HEAP_DEFAULT, ...): on when set to anything but empty or "0".
 * Callers pass getenv's answer itself, so that each name stays a literal
 * beside getenv (tests/integration/manpage.sh finds them that way).
 */
#ifndef PMUBPF_LIB_ENVFLAG_H
#define PMUBPF_LIB_ENVFLAG_H

#include <stdbool.h>
#include <string.h>

/* value: getenv's answer. */
static inline bool envflag_on(const char *value)
{
	return value && *value && strcmp(value, "0");
}

#endif
