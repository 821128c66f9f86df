/* errmsg.c — see errmsg.h. */
#include "errmsg.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

int errmsg_v(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	return -EINVAL;
}

int errmsg(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	errmsg_v(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}
