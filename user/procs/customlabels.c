/* customlabels.c — see customlabels.h. */
#include <string.h>
#include "customlabels.h"

bool customlabels__name_ok(const char *path, bool main)
{
	const char *base = strrchr(path, '/');
	size_t n;

	if (main)
		return true;
	base = base ? base + 1 : path;
	n = strlen(base);
	if (!strcmp(base, "customlabels.node"))
		return true;
	/* libcustomlabels.*\.so$ */
	return !strncmp(base, "libcustomlabels", 15) && n >= 18 && !strcmp(base + n - 3, ".so");
}

