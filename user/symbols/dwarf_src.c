/* dwarf_src.c — see dwarf_src.h. */
#include "dwarf_src.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elfutil.h"

/* Root-owned files are mapped here rather than by libelf, so that the
 * pages of compressed sections can be dropped once decompressed (below).
 * MAP_PRIVATE with write access: libelf rewrites the headers of sections
 * it decompresses in place (private copies of those pages). */
static Elf *map_elf(struct dwarf_src *d)
{
	struct stat st;
	void *m;

	if (fstat(d->fd, &st) || st.st_size <= 0)
		return NULL;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, d->fd, 0);
	if (m == MAP_FAILED)
		return NULL;
	d->map = m;
	d->maplen = (size_t)st.st_size;
	return elf_memory(m, d->maplen);
}

/* Where the file's compressed sections lie: dwarf_begin_elf decompresses
 * every compressed debug section into the heap (Debian's debug files:
 * libc's 4 MB on disk become 11 MB) and never reads the compressed bytes
 * again, but the pages it read stay in our resident set (3.7 MB for
 * libc). An unwritten page of a private file mapping may be dropped at
 * any time (a later read faults it in from the page cache); only whole
 * pages inside a section are: libelf writes section headers, elsewhere. */
#define MAX_DROPS 64
struct drops { size_t n; uint64_t off[MAX_DROPS], len[MAX_DROPS]; };

static void find_compressed(Elf *elf, struct drops *dr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	dr->n = 0;
	while (dr->n < MAX_DROPS && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) &&
		    sh.sh_type != SHT_NOBITS) {
			dr->off[dr->n] = sh.sh_offset;
			dr->len[dr->n++] = sh.sh_size;
		}
}

static void drop_pages(const struct dwarf_src *d, const struct drops *dr)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < dr->n; i++) {
		uint64_t lo = (dr->off[i] + pg - 1) & ~(pg - 1);
		uint64_t hi = (dr->off[i] + dr->len[i]) & ~(pg - 1);

		if (dr->off[i] + dr->len[i] <= d->maplen && hi > lo)
			madvise((char *)d->map + lo, hi - lo, MADV_DONTNEED);
	}
}

/* dwarf_begin_elf reads (and decompresses) every debug section it
 * knows; these hold what a symbolizer never asks for (variables'
 * locations, macros, name and address indices (the unit index is
 * built from the units' own ranges): libc's location lists are 1.4 MB
 * decompressed). Made NOBITS in our copy of the headers, libdw leaves
 * them alone. */
static const char *const unread[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo", ".debug_aranges",
	".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames", ".debug_gnu_pubtypes",
};

static void hide_unread(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

		for (size_t i = 0; name && i < sizeof(unread) / sizeof(*unread); i++)
			if (!strcmp(name, unread[i]) && sh.sh_type != SHT_NOBITS) {
				sh.sh_type = SHT_NOBITS;
				gelf_update_shdr(scn, &sh);
				break;
			}
	}
}

Dwarf *dwarf_src__begin(struct dwarf_src *d, int *err)
{
	struct drops dr = { 0 };
	Dwarf *dw;

	elf_version(EV_CURRENT);
	d->elf = d->mem ? elf_memory(d->mem, d->memlen)
	       : d->use_map ? map_elf(d) : elf_begin(d->fd, ELF_C_READ, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF) {
		dwarf_src__end(d, NULL);
		*err = -ENOEXEC;
		return NULL;
	}
	if (d->map)
		find_compressed(d->elf, &dr);
	hide_unread(d->elf);
	if (!elfutil__has_dwarf(d->elf) || !(dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL))) {
		dwarf_src__end(d, NULL);
		*err = -ENODATA;
		return NULL;
	}
	if (d->map)
		drop_pages(d, &dr);
	return dw;
}

void dwarf_src__end(struct dwarf_src *d, Dwarf *dw)
{
	if (dw)
		dwarf_end(dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->map)
		munmap(d->map, d->maplen);
	d->elf = NULL;
	d->map = NULL;
}

void dwarf_src__close(struct dwarf_src *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->mem);
	d->fd = -1;
	d->mem = NULL;
}
