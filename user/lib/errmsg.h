/* errmsg.h — the one-line error of every parser: formatted into the
 * caller's buffer, -EINVAL returned, so that a check reads
 *   return errmsg(err, errlen, "bad period '-c %s': ...", arg);
 * The message has no trailing newline and no "pmubpf:" prefix: the
 * caller that prints it adds those.
 */
#ifndef PMUBPF_ERRMSG_H
#define PMUBPF_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>

/* Format into err (errlen bytes, cut to fit; nothing written if err is
 * NULL or errlen 0). Returns -EINVAL. */
int errmsg(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same with a va_list, for a caller's own variadic wrapper. */
int errmsg_v(char *err, size_t errlen, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
