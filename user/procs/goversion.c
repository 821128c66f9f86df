/* goversion.c — see goversion.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "goversion.h"

/* Offsets in the runtime's structures, linux/amd64, per release
 * (src/runtime/runtime2.go: g.m, m.curg, g.labels; runtime/pprof's
 * label.go for what g.labels points at). g.m and m.curg have not moved
 * since go1.11; g.labels moved with fields added before it. */
static const struct go_row {
	unsigned from, to; /* minor versions, inclusive */
	uint32_t g_m, m_curg, g_labels, layout;
} go_rows[] = {
	{ 18, 20, 48, 192, 360, PMUBPF_GO_MAP },
	{ 21, 22, 48, 192, 344, PMUBPF_GO_MAP },
	{ 23, 23, 48, 192, 352, PMUBPF_GO_MAP },
	/* go1.24: labels became a sorted list of key/value strings. */
	{ 24, 24, 48, 192, 352, PMUBPF_GO_SLICE },
};

int goversion__offsets(unsigned major, unsigned minor, struct pmubpf_go_slot *slot)
{
	if (major != 1)
		return -EPROTONOSUPPORT;
	for (size_t i = 0; i < sizeof(go_rows) / sizeof(go_rows[0]); i++) {
		const struct go_row *r = &go_rows[i];

		if (minor < r->from || minor > r->to)
			continue;
		memset(slot, 0, sizeof(*slot));
		slot->g_m = r->g_m;
		slot->m_curg = r->m_curg;
		slot->g_labels = r->g_labels;
		slot->layout = r->layout;
		return 0;
	}
	return -EPROTONOSUPPORT;
}

int goversion__parse(const char *v, unsigned *major, unsigned *minor)
{
	char tail;

	if (strncmp(v, "go", 2) || sscanf(v + 2, "%u.%u%c", major, minor, &tail) < 2)
		return -EINVAL;
	return 0;
}

#define BUILDINFO_MAGIC "\xff Go buildinf:"
#define BUILDINFO_HDR 32
#define BUILDINFO_INLINE 2 /* flags: strings inline (go1.18+) */

int goversion__buildinfo(const uint8_t *b, size_t n, char *out, size_t outsz, const char **why)
{
	uint64_t len = 0;
	size_t i = BUILDINFO_HDR;
	int shift = 0;

	if (n < BUILDINFO_HDR || memcmp(b, BUILDINFO_MAGIC, 14)) {
		*why = "bad buildinfo magic";
		return -EPROTO;
	}
	if (b[14] != 8 || !(b[15] & BUILDINFO_INLINE)) {
		*why = "buildinfo older than go1.18, or not 64-bit";
		return -EPROTONOSUPPORT;
	}
	for (;; shift += 7) { /* uvarint */
		if (i >= n || shift > 63) {
			*why = "truncated buildinfo";
			return -EPROTO;
		}
		len |= (uint64_t)(b[i] & 0x7f) << shift;
		if (!(b[i++] & 0x80))
			break;
	}
	if (len == 0 || len >= outsz || len > n - i) {
		*why = "bad buildinfo version length";
		return -EPROTO;
	}
	memcpy(out, b + i, len);
	out[len] = 0;
	return 0;
}

/* The Go binaries whose labels are read: this machine's own (BPF reads g
 * from TLS on x86-64, from x28 on arm64: labels.bpf.h go_g_base). */
#if defined(__aarch64__)
#define GO_MACHINE EM_AARCH64
#define GO_MACHINE_NAME "arm64"
#else
#define GO_MACHINE EM_X86_64
#define GO_MACHINE_NAME "x86-64"
#endif

/* x86-64 keeps g in TLS. An internally linked Go binary has no PT_TLS:
 * the runtime sets the fs base to &m.tls[1], so g is at -8. An
 * externally linked one (cgo) places runtime.tlsg in its PT_TLS block,
 * the executable's block, which ends at the thread pointer. */
static int64_t g_tls_offset(Elf *e)
{
	size_t nph = 0, shnum = 0, shstr;
	uint64_t memsz = 0, align = 1;
	bool have_tls = false;
	Elf_Scn *scn = NULL;

	if (elf_getphdrnum(e, &nph) == 0) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_TLS) {
				memsz = ph.p_memsz;
				align = ph.p_align ? ph.p_align : 1;
				have_tls = true;
			}
		}
	}
	if (!have_tls || elf_getshdrnum(e, &shnum) || elf_getshdrstrndx(e, &shstr))
		return -8;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_TLS)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "runtime.tlsg"))
				return (int64_t)sym.st_value - (int64_t)((memsz + align - 1) / align * align);
		}
	}
	return -8;
}

int goversion__read(const char *path, struct go_info *out, const char **why, struct stat *st)
{
	const char *dummy;
	size_t shstr;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd, err = -ENOENT;

	why = why ? why : &dummy;
	*why = NULL;
	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	if (st)
		st->st_ino = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (st && fstat(fd, st))
		st->st_ino = 0;
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstr)) {
		err = -ENOENT;
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstr, sh.sh_name)) ||
		    strcmp(name, ".go.buildinfo"))
			continue;
		d = elf_rawdata(scn, NULL);
		if (!d || !d->d_buf) {
			*why = "unreadable buildinfo";
			err = -EPROTO;
			goto out;
		}
		err = goversion__buildinfo(d->d_buf, d->d_size, out->version, sizeof(out->version), why);
		if (err)
			goto out;
		GElf_Ehdr eh;
		if (!gelf_getehdr(e, &eh) || eh.e_machine != GO_MACHINE) {
			*why = "not " GO_MACHINE_NAME;
			err = -EPROTONOSUPPORT;
			goto out;
		}
		if (goversion__parse(out->version, &out->major, &out->minor) ||
		    goversion__offsets(out->major, out->minor, &out->slot)) {
			*why = "Go version not in pmubpf's table";
			err = -EPROTONOSUPPORT;
			goto out;
		}
		out->slot.g_tls = g_tls_offset(e);
		err = 0;
		goto out;
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return err;
}
