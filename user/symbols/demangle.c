/* demangle.c — see demangle.h. Calls libstdc++'s demangler through its
 * C linkage; the binary links -lstdc++ for it. */
#include "demangle.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MANGLED 16384 /* longer names stay as they are */

/* From <cxxabi.h>; declared here because this is a C file. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *name)
{
	int status = 0;
	char *out;

	if (!name || name[0] != '_' || name[1] != 'Z' ||
	    strnlen(name, MAX_MANGLED + 1) > MAX_MANGLED)
		return NULL;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
