/* errmsg.h — the one-line error of every parser: formatted into the
 * caller's buffer, -EINVAL returned, so that a check reads
 *   return errmsg(err, errlen, "bad period '-c %s': ...", arg);
 * The message has no trailing newline and no "pmubpf:" prefix: the
 * caller that prints it adds those.
 */
#ifndef PMUBPF_ERRMSG_H
#define PMUBPF_ERRMSG_H

#include <stddef.h>

/* Format into err (errlen bytes, cut to fit; nothing written if err is
 * NULL or errlen 0). Returns -EINVAL. */
int errmsg(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
