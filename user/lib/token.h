/* token.h — a secret read from a file (--http-token-file,
 * --push-token-file): its first line, printable ASCII without spaces.
 */
#ifndef PMUBPF_TOKEN_H
#define PMUBPF_TOKEN_H

#include <stddef.h>

/* The token of file path into buf (len bytes: a token of at most len - 2
 * bytes, so that a longer one is seen). 0, or < 0 with one line in err
 * naming option `opt`. */
int token__read(const char *path, const char *opt, char *buf, size_t len, char *err,
		size_t errlen);

#endif
