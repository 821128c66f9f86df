/* dwarf.h — source lines and inline frames of an address, from DWARF.
 *
 * Symbolization's third stage, after elfsym has turned a file offset into
 * a link-time address: libdw reads the object's (or its separate debug
 * file's) DWARF and answers with one frame per inlined function, leaf
 * first, each with its source file and line, and the function's own
 * declaration file and first line. The address-to-unit table is built on
 * first lookup (from each unit's ranges, not .debug_aranges, which clang
 * does not emit), each unit's function table on first lookup inside it;
 * both are sorted arrays searched by binary search. Strings returned
 * point into the object (lifetime: dwarf__lookup). The decoded line
 * tables held are bounded: past a budget the object starts over.
 */
#ifndef PMUBPF_DWARF_H
#define PMUBPF_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarfobj;

struct dwarf_frame {
	const char *name;         /* DW_AT_name, or NULL if the unit covers the
	                           * address but no function does */
	const char *linkage_name; /* mangled name (DW_AT_linkage_name) or NULL */
	const char *file;         /* source file of line, or NULL */
	int64_t line;             /* 0 = unknown */
	const char *decl_file;    /* file declaring the function, or NULL */
	int64_t decl_line;        /* the function's first line, 0 = unknown */
};

#define DWARF_MAX_FRAMES 32 /* inline depth reported per address */

/* Open the DWARF of an ELF file; takes ownership of fd in every case.
 * Root-owned files are mmapped, others read (a file truncated under us
 * cannot fault). NULL + errno: ENODATA if it has no DWARF, ENOEXEC if
 * not ELF. */
struct dwarfobj *dwarf__open_fd(int fd);
/* Same for an image in memory (copied): tests and the fuzzer. */
struct dwarfobj *dwarf__open_mem(const void *buf, size_t len);
void dwarf__free(struct dwarfobj *d);
/* Give back what lookups loaded (libdw's state, the decompressed
 * sections, the unit and function tables), keeping only the source (fd
 * or image): the next lookup loads it all again. Strings returned before
 * are invalid after. For a build that is done with an object (report's
 * symbolization names each object's frames in one go). */
void dwarf__release(struct dwarfobj *d);

/* Frames of link-time address vaddr, innermost (leaf) first, at most max.
 * Returns how many (0: no unit covers vaddr, or the DWARF is unreadable).
 * The strings in out stay valid until the next lookup, dwarf__release or
 * dwarf__free (a lookup may start the object over: see dwarf.c). */
int dwarf__lookup(struct dwarfobj *d, uint64_t vaddr, struct dwarf_frame *out,
		  int max);

struct dwarf_stats {
	size_t units, ranges, units_indexed, functions;
	bool loaded;     /* libdw's state held (not released) */
	size_t releases; /* dwarf__release calls that gave something back */
	size_t rows;     /* line rows decoded and held */
	size_t restarts; /* loaded again: the rows held passed a budget */
};
void dwarf__stats(const struct dwarfobj *d, struct dwarf_stats *st);

#endif
