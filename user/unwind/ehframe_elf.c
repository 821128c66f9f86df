/* ehframe_elf.c — find the CFI sections of an ELF object and hand them to
 * ehf__build (ehframe.h).
 *
 * A small reader of its own rather than libelf: it needs four sections of
 * possibly huge files (we do not want the whole file read, as libelf's
 * ELF_C_READ does, nor mmapped, which turns truncation into SIGBUS), and
 * the same code must read an image in memory (the vDSO). Every size and
 * offset is checked against the file; sections are capped.
 */
#include "ehframe.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define MAX_SHNUM     65536
#define MAX_SHSTRTAB  (16u << 20)
#define MAX_SECTION   (512u << 20) /* a CFI section, inflated or not */

struct img {
	int fd;              /* or -1: mem */
	const uint8_t *mem;
	uint64_t size;
};

static int read_at(const struct img *im, uint64_t off, void *buf, uint64_t len)
{
	if (off > im->size || len > im->size - off)
		return -EINVAL;
	if (im->fd < 0) {
		memcpy(buf, im->mem + off, len);
		return 0;
	}
	for (uint64_t done = 0; done < len;) {
		ssize_t n = pread(im->fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (uint64_t)n;
	}
	return 0;
}

/* A section's bytes (inflated if SHF_COMPRESSED), malloc'd. */
static int read_section(const struct img *im, const Elf64_Shdr *sh, uint8_t **out, size_t *len)
{
	uint8_t *raw;
	int err;

	*out = NULL;
	*len = 0;
	if (sh->sh_type == SHT_NOBITS || !sh->sh_size)
		return 0;
	if (sh->sh_size > MAX_SECTION)
		return -EFBIG;
	raw = malloc(sh->sh_size);
	if (!raw)
		return -ENOMEM;
	err = read_at(im, sh->sh_offset, raw, sh->sh_size);
	if (err) {
		free(raw);
		return err;
	}
	if (!(sh->sh_flags & SHF_COMPRESSED)) {
		*out = raw;
		*len = sh->sh_size;
		return 0;
	}
	Elf64_Chdr ch;
	if (sh->sh_size < sizeof(ch)) {
		free(raw);
		return -EINVAL;
	}
	memcpy(&ch, raw, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB || !ch.ch_size || ch.ch_size > MAX_SECTION) {
		free(raw);
		return -ENOTSUP;
	}
	uint8_t *dst = malloc(ch.ch_size);
	uLongf dlen = (uLongf)ch.ch_size;
	if (!dst) {
		free(raw);
		return -ENOMEM;
	}
	if (uncompress(dst, &dlen, raw + sizeof(ch), (uLong)(sh->sh_size - sizeof(ch))) != Z_OK ||
	    dlen != ch.ch_size) {
		free(raw);
		free(dst);
		return -EINVAL;
	}
	free(raw);
	*out = dst;
	*len = dlen;
	return 0;
}

static int build(const struct img *im, struct ehf_table *out)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL, sh0;
	char *names = NULL;
	uint8_t *eh_data = NULL, *dbg_data = NULL;
	struct ehf_input in = { 0 };
	uint64_t shnum, shstrndx;
	int err;

	memset(out, 0, sizeof(*out));
	err = read_at(im, 0, &eh, sizeof(eh));
	if (err)
		return err == -EINVAL ? -ENOEXEC : err;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -ENOEXEC;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	if (!eh.e_shoff || eh.e_shentsize != sizeof(Elf64_Shdr))
		return -ENOENT; /* no section headers */
	if (read_at(im, eh.e_shoff, &sh0, sizeof(sh0)))
		return -EINVAL;
	shnum = eh.e_shnum ? eh.e_shnum : sh0.sh_size;
	shstrndx = eh.e_shstrndx == SHN_XINDEX ? sh0.sh_link : eh.e_shstrndx;
	if (!shnum || shnum > MAX_SHNUM || shstrndx >= shnum)
		return -EINVAL;
	sh = malloc(shnum * sizeof(*sh));
	if (!sh)
		return -ENOMEM;
	err = read_at(im, eh.e_shoff, sh, shnum * sizeof(*sh));
	if (err)
		goto out;
	const Elf64_Shdr *ss = &sh[shstrndx];
	if (ss->sh_type != SHT_STRTAB || !ss->sh_size || ss->sh_size > MAX_SHSTRTAB) {
		err = -EINVAL;
		goto out;
	}
	names = malloc(ss->sh_size + 1);
	if (!names) {
		err = -ENOMEM;
		goto out;
	}
	err = read_at(im, ss->sh_offset, names, ss->sh_size);
	if (err)
		goto out;
	names[ss->sh_size] = '\0';

	const Elf64_Shdr *ehs = NULL, *dbg = NULL;
	for (uint64_t i = 1; i < shnum; i++) {
		const char *n = sh[i].sh_name < ss->sh_size ? names + sh[i].sh_name : "";

		if (!strcmp(n, ".eh_frame") && !ehs)
			ehs = &sh[i];
		else if (!strcmp(n, ".debug_frame") && !dbg)
			dbg = &sh[i];
		else if (!strcmp(n, ".got") && !in.datarel_base)
			in.datarel_base = sh[i].sh_addr;
		else if (!strcmp(n, ".text") && !in.textrel_base)
			in.textrel_base = sh[i].sh_addr;
	}
	if (ehs && (err = read_section(im, ehs, &eh_data, &in.eh_frame.size)))
		goto out;
	if (dbg && read_section(im, dbg, &dbg_data, &in.debug_frame.size))
		in.debug_frame.size = 0; /* optional: .eh_frame alone will do */
	if (!eh_data && !dbg_data) {
		err = -ENOENT;
		goto out;
	}
	in.eh_frame.data = eh_data;
	in.eh_frame.vaddr = ehs ? ehs->sh_addr : 0;
	in.debug_frame.data = dbg_data;
	in.debug_frame.vaddr = dbg ? dbg->sh_addr : 0;
	err = ehf__build(&in, out);
out:
	free(sh);
	free(names);
	free(eh_data);
	free(dbg_data);
	return err;
}

int ehf__build_fd(int fd, struct ehf_table *out)
{
	struct stat st;
	struct img im = { .fd = fd };

	memset(out, 0, sizeof(*out));
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	im.size = (uint64_t)st.st_size;
	return build(&im, out);
}

int ehf__build_mem(const void *image, size_t len, struct ehf_table *out)
{
	struct img im = { .fd = -1, .mem = image, .size = len };

	return build(&im, out);
}
