/* goversion.h — which Go a binary was built with, and where that Go
 * keeps a goroutine's pprof labels (issue 12; docs/labels-abi.md, "Go").
 *
 * The version comes from the binary's buildinfo (section .go.buildinfo,
 * the format of go1.18 and later: the version string inline after the
 * header). Offsets come from a table per Go release (goversion.c), taken
 * from each release's runtime sources and checked for the Go the tests
 * build with against the binary's own DWARF (tests/tools/gooffsets); a
 * release not in the table is refused, never read with guessed offsets.
 */
#ifndef PMUBPF_GOVERSION_H
#define PMUBPF_GOVERSION_H

#include <stddef.h>
#include <stdint.h>
#include "pmubpf_abi.h"

struct go_info {
	char version[32];          /* "go1.19.8" */
	unsigned major, minor;     /* 1, 19 */
	struct pmubpf_go_slot slot;/* everything but pgen */
};

/* The offsets and layout for go<major>.<minor> into *slot (g_tls not
 * set). Returns 0 or -EPROTONOSUPPORT (not in the table). */
int goversion__offsets(unsigned major, unsigned minor, struct pmubpf_go_slot *slot);

/* Parse a Go version string ("go1.19.8", "go1.24rc1") into major.minor.
 * Returns 0 or -EINVAL. */
int goversion__parse(const char *v, unsigned *major, unsigned *minor);

/* The version string in the bytes of a .go.buildinfo section (n bytes)
 * into out. Returns 0, -EPROTONOSUPPORT (older than go1.18's format, or
 * 32-bit), -EPROTO (malformed). *why set on error. */
int goversion__buildinfo(const uint8_t *b, size_t n, char *out, size_t outsz, const char **why);

/* Read the Go binary at path (e.g. /proc/PID/exe). Returns 0, -ENOENT
 * (not a Go binary: no buildinfo), -EPROTONOSUPPORT (a Go this table
 * does not know, or a buildinfo older than go1.18, or not x86-64;
 * out->version says which when known), -EPROTO (malformed; *why), or
 * -errno of the open. why may be NULL. st, if not NULL, gets the fstat
 * of the file read (st_ino 0 if it was not opened): what the answer is
 * about. */
struct stat;
int goversion__read(const char *path, struct go_info *out, const char **why, struct stat *st);

#endif
