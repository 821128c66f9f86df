/* elfutil.h — small libelf helpers shared by the symbol readers.
 *
 * elfsym (symbol tables), debuginfo (separate debug files) and dwarf all
 * need the same few questions answered about an untrusted ELF handle:
 * its GNU build-id, a section by name, whether it carries DWARF; elfsym
 * and dwarf both open images held in memory from a copy of their own.
 * Every size and index is checked, so hostile files give "not found",
 * never a read out of bounds.
 */
#ifndef PMUBPF_ELFUTIL_H
#define PMUBPF_ELFUTIL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

#define ELFUTIL_BUILD_ID_MAX 64 /* bytes; hex form is twice that + NUL */

/* GNU build-id as lowercase hex into out (2 * ELFUTIL_BUILD_ID_MAX + 1
 * bytes), from PT_NOTE segments, else SHT_NOTE sections; "" if none. */
void elfutil__build_id(Elf *elf, char *out);
/* The section called name (first match), with its header in *sh, or NULL. */
Elf_Scn *elfutil__section(Elf *elf, const char *name, GElf_Shdr *sh);
/* Does the file hold DWARF: a non-empty .debug_info (or compressed
 * .zdebug_info) with contents in the file (not SHT_NOBITS)? */
bool elfutil__has_dwarf(Elf *elf);
/* A dynamic object's DT_NEEDED names, in order, each to fn(name, arg),
 * and its library search path (DT_RUNPATH, else DT_RPATH; "" if none)
 * into runpath[0, rplen), filled before fn is first called (rplen 0:
 * not asked). Names are as the file has them (bounded by
 * its string table). The number of names, or -1 if elf has no dynamic
 * section. */
int elfutil__needed(Elf *elf, void (*fn)(const char *name, void *arg), void *arg,
		    char *runpath, size_t rplen);
/* A malloc'd copy of the ELF image buf[0, len), for elf_memory over
 * memory the caller owns until elf_end (a vDSO read out of a process, a
 * decompressed MiniDebugInfo). NULL + errno: EINVAL (no image), ENOMEM. */
void *elfutil__copy_image(const void *buf, size_t len);

#endif
