/* elfutil.c — see elfutil.h. Build-id notes, sections by name, DWARF
 * presence, copies of in-memory images; every count from the file is
 * bounded before use. */
#include "elfutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEADERS    65536     /* program/section headers scanned */
#define MAX_NOTE_BYTES (1u << 20) /* note segment/section read for build-id */

static bool scan_notes(Elf_Data *d, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	if (!d || !d->d_buf)
		return false;
	while (off < d->d_size &&
	       (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > off) {
		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    nh.n_descsz == 0 || nh.n_descsz > ELFUTIL_BUILD_ID_MAX ||
		    name_off > d->d_size || d->d_size - name_off < 4 ||
		    desc_off > d->d_size || d->d_size - desc_off < nh.n_descsz)
			continue;
		const unsigned char *b = d->d_buf;
		if (memcmp(b + name_off, "GNU", 4))
			continue;
		for (size_t i = 0; i < nh.n_descsz; i++) {
			out[2 * i] = hex[b[desc_off + i] >> 4];
			out[2 * i + 1] = hex[b[desc_off + i] & 15];
		}
		out[2 * nh.n_descsz] = '\0';
		return true;
	}
	return false;
}

void elfutil__build_id(Elf *elf, char *out)
{
	size_t phnum = 0;

	out[0] = '\0';
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && i < MAX_HEADERS; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
			    ph.p_filesz == 0 || ph.p_filesz > MAX_NOTE_BYTES)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset,
				(size_t)ph.p_filesz,
				ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			if (scan_notes(d, out))
				return;
		}
	}
	Elf_Scn *scn = NULL;
	for (size_t i = 0; i < MAX_HEADERS && (scn = elf_nextscn(elf, scn)); i++) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    sh.sh_size == 0 || sh.sh_size > MAX_NOTE_BYTES)
			continue;
		if (scan_notes(elf_getdata(scn, NULL), out))
			return;
	}
}

Elf_Scn *elfutil__section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	for (size_t i = 0; i < MAX_HEADERS && (scn = elf_nextscn(elf, scn)); i++) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

bool elfutil__has_dwarf(Elf *elf)
{
	GElf_Shdr sh;

	if ((elfutil__section(elf, ".debug_info", &sh) ||
	     elfutil__section(elf, ".zdebug_info", &sh)) &&
	    sh.sh_type != SHT_NOBITS && sh.sh_size > 0)
		return true;
	return false;
}

int elfutil__needed(Elf *elf, void (*fn)(const char *name, void *arg), void *arg,
		    char *runpath, size_t rplen)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Dyn dyn;
	Elf_Data *d;
	const char *rpath = NULL, *run = NULL, *s;
	size_t count;
	int n = 0;

	if (rplen)
		runpath[0] = 0;
	for (size_t i = 0; i < MAX_HEADERS && (scn = elf_nextscn(elf, scn)); i++)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC)
			break;
	if (!scn || !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
		return -1;
	count = sh.sh_size / sh.sh_entsize;
	if (count > MAX_HEADERS)
		count = MAX_HEADERS;
	/* Two passes over the entries: the run path (which may follow the
	 * names) is known before fn sees the first name. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < count && gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag != DT_NULL; i++) {
			bool name = dyn.d_tag == DT_NEEDED;

			if (name != (pass == 1) || (!name && dyn.d_tag != DT_RUNPATH && dyn.d_tag != DT_RPATH) ||
			    !(s = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)))
				continue;
			if (dyn.d_tag == DT_RUNPATH)
				run = s;
			else if (dyn.d_tag == DT_RPATH)
				rpath = s;
			else if (fn) {
				fn(s, arg);
				n++;
			}
		}
		if (!pass && rplen && (run || rpath))
			snprintf(runpath, rplen, "%s", run ? run : rpath);
	}
	return n;
}

void *elfutil__copy_image(const void *buf, size_t len)
{
	void *mem;

	if (!buf || !len) {
		errno = EINVAL;
		return NULL;
	}
	if (!(mem = malloc(len))) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(mem, buf, len);
	return mem;
}
