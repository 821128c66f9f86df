/* fixtures.h — the programs some unit tests compile and the binutils
 * answers they are checked against: run a shell command, write a source
 * file, ask `nm -S` where a symbol is.
 *
 * Header only, like testing.h: test_dwarf, test_elfsym and test_debuginfo
 * build their fixtures with it into a temp directory of their own.
 */
#ifndef PMUBPF_FIXTURES_H
#define PMUBPF_FIXTURES_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Run the printf-formatted command with system(): true if it exited 0. */
static inline bool sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline bool sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0;
}

/* Create (or truncate) path holding text. */
static inline bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	fputs(text, f);
	return fclose(f) == 0;
}

/* Address and size of name per `nm -S path` (its first line for name);
 * both 0 when it is not there. */
static inline bool nm_sym(const char *path, const char *name, uint64_t *addr,
			  uint64_t *size)
{
	char cmd[512], line[512], sym[256], type;
	unsigned long long a, s;
	bool found = false;
	FILE *f;

	*addr = *size = 0;
	snprintf(cmd, sizeof(cmd), "nm -S %s", path);
	if (!(f = popen(cmd, "r")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (!found && sscanf(line, "%llx %llx %c %255s", &a, &s, &type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*addr = a;
			*size = s;
			found = true;
		}
	pclose(f);
	return found;
}

#endif
