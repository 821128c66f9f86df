/* tlsvar.c — see tlsvar.h. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <sys/uio.h>
#include "tlsvar.h"

#define TLS_OFFSET_MAX (1LL << 30)

static int read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return errno == ESRCH || errno == EPERM ? -errno : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

static int main_offset(Elf *e, uint64_t sym_value, int64_t *off, const char **why)
{
	size_t nph = 0;

	if (elf_getphdrnum(e, &nph))
		return -ENOENT;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_TLS)
			continue;
		uint64_t align = ph.p_align ? ph.p_align : 1;
		uint64_t size = (ph.p_memsz + align - 1) / align * align;
		if (sym_value >= ph.p_memsz || size > TLS_OFFSET_MAX) {
			*why = "TLS symbol outside the TLS block";
			return -EPROTO;
		}
		*off = (int64_t)sym_value - (int64_t)size;
		return 0;
	}
	*why = "no PT_TLS";
	return -ENOENT;
}

/* The relocation (TLSDESC or TPOFF64) against the variable in a library. */
static int lib_offset(Elf *e, pid_t pid, uint64_t bias, const char *var, int64_t *off,
		      const char **why)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *d, *syms;
		Elf_Scn *symscn;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(e, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || !(syms = elf_getdata(symscn, NULL)))
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			const char *name;
			uint32_t type;

			if (!gelf_getrela(d, (int)i, &r))
				continue;
			type = (uint32_t)GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_TLSDESC && type != R_X86_64_TPOFF64)
				continue;
			if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
			    !(name = elf_strptr(e, symsh.sh_link, sym.st_name)) ||
			    strcmp(name, var))
				continue;
			/* TLSDESC: {resolver, argument}; the argument of a static
			 * TLS descriptor is the offset. TPOFF64: the offset. */
			uint64_t at = bias + r.r_offset + (type == R_X86_64_TLSDESC ? 8 : 0);
			int64_t v;
			int err = read_mem(pid, at, &v, sizeof(v));
			if (err)
				return err;
			if (v == 0) /* not relocated yet (ld.so still at work) */
				return -EAGAIN;
			if (v > 0 || v < -TLS_OFFSET_MAX) {
				*why = "TLS descriptor for dynamic TLS (a library not in static TLS)";
				return -EPROTO;
			}
			*off = v;
			return 0;
		}
	}
	*why = "no TLS relocation for the variable (legacy general-dynamic, or dynamic TLS)";
	return -ENOENT;
}

int tlsvar__offset(int fd, pid_t pid, uint64_t bias, bool main, const char *var, uint64_t sym_value,
		   int64_t *off, const char **why)
{
	const char *dummy;
	Elf *e;
	int err;

	why = why ? why : &dummy;
	*why = NULL;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		return -ENOENT;
	err = main ? main_offset(e, sym_value, off, why) : lib_offset(e, pid, bias, var, off, why);
	elf_end(e);
	return err;
}
