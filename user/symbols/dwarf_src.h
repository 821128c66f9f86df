/* dwarf_src.h — the ELF image under a dwarfobj (dwarf.c, internal to
 * symbols/): where its bytes come from, and libdw begun and ended on them
 * as often as dwarf.c loads and releases the object.
 *
 * Root-owned files are mapped here (nobody else can truncate them under
 * us), others read by libelf; the pages of compressed sections are
 * dropped once libdw has decompressed them, and sections a symbolizer
 * never reads are hidden from libdw (dwarf_src.c says why).
 */
#ifndef PMUBPF_DWARF_SRC_H
#define PMUBPF_DWARF_SRC_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>

struct dwarf_src {
	int fd;           /* the file, -1 for an image in memory */
	bool use_map;     /* fd is mapped (root-owned) rather than read */
	void *mem;        /* dwarf__open_mem's copy (owned), or NULL */
	size_t memlen;
	/* while begun */
	void *map;        /* our mapping of fd */
	size_t maplen;
	Elf *elf;
};

/* Begin libdw on the source: the Dwarf, or NULL with *err -ENOEXEC (not
 * ELF) or -ENODATA (no DWARF). */
Dwarf *dwarf_src__begin(struct dwarf_src *s, int *err);
/* End what begin made (dw may be NULL); the source stays. */
void dwarf_src__end(struct dwarf_src *s, Dwarf *dw);
/* Close the source itself (fd, image). */
void dwarf_src__close(struct dwarf_src *s);

#endif
