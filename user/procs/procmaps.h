/* procmaps.h — read /proc/PID/maps into executable mappings.
 *
 * Used at first sight of a process (a BPF notice): the snapshot must
 * outlive the process, so it records everything symbolization needs.
 * Read with the PROCMAP_QUERY ioctl where the kernel has it, one VMA a
 * call, no text; else as text, where a line looks like:
 *   55d0c7a00000-55d0c7a21000 r-xp 00002000 08:01 1835043   /usr/bin/cat
 *   7f2a1c000000-7f2a1c021000 r-xp 00000000 00:00 0         [vdso]
 *   7f2a1d000000-7f2a1d100000 r-xp 00000000 08:01 42        /tmp/x (deleted)
 */
#ifndef PMUBPF_PROCMAPS_H
#define PMUBPF_PROCMAPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define PROCMAP_BUILD_ID_MAX 20 /* the kernel's BUILD_ID_SIZE_MAX: SHA-1 */

struct procmap {
	uint64_t start, end; /* [start, end) virtual addresses */
	uint64_t pgoff;      /* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool exec;           /* 'x' in perms */
	bool deleted;        /* path ended in " (deleted)" (suffix removed) */
	/* The mapped file's GNU build-id, as the kernel read it from the
	 * page cache (PROCMAP_QUERY only; 0 bytes: not known): the object
	 * cache may know the file by it without opening it. */
	uint8_t build_id_len;
	uint8_t build_id[PROCMAP_BUILD_ID_MAX];
	char *path;          /* "" for anonymous; "[vdso]", "[stack]", ... */
};

struct procmaps {
	struct procmap *maps;
	size_t n;
};

/* Give back the array's room beyond its n mappings (kept for as long as
 * a process record is: images put together from the kernel's reports
 * grow from 16 slots, and hold 4 or 5 mappings). */
void procmaps__fit(struct procmaps *m);

/* Parse maps text (the whole file's contents). exec_only keeps only
 * executable mappings. Returns 0 or -errno (-EINVAL on a malformed line,
 * which is skipped; parsing continues and the last error is returned only
 * if no line parsed). */
int procmaps__parse(const char *text, bool exec_only, struct procmaps *out);
/* Read /proc/PID/maps: by the PROCMAP_QUERY ioctl (Linux 6.11+), else
 * as text (procmaps__reader). Returns 0 or -errno (-ESRCH if gone). A
 * process without an address space (a kernel thread, a zombie) has no
 * mappings: 0, nothing. */
int procmaps__read(pid_t pid, bool exec_only, struct procmaps *out);
/* The two readers procmaps__read chooses between, for tests. The ioctl
 * returns -EOPNOTSUPP on a kernel without it. They give the same
 * mappings, but for x86's [vsyscall] gate page, which only the text has
 * (no VMA of the process: no sample's user IP is ever there). */
int procmaps__read_text(pid_t pid, bool exec_only, struct procmaps *out);
int procmaps__query(pid_t pid, bool exec_only, struct procmaps *out);
/* "PROCMAP_QUERY" or "text": the reader procmaps__read uses, chosen at
 * its first use for the whole run. The environment variable
 * PMUBPF_NO_PROCMAP_QUERY (set, not "0") forces the text: a test and
 * debug switch, so that both readers are exercised on a new kernel. */
const char *procmaps__reader(void);
/* Open the file mapped by m in process tgid (read-only, close-on-exec)
 * and fstat it into *st. Tried in order:
 *   1. /proc/PID/map_files/START-END: the mapped file itself, also when
 *      deleted or in another mount namespace;
 *   2. /proc/PID/root/PATH: the path as the process sees it (map_files
 *      refused, or the mapping gone since the maps were read);
 *   3. PATH here: the process is gone (a mapping known from an mmap
 *      report), only when m->inode is known.
 * A file reached by path (2, 3) is taken only if it has m's inode (when
 * known): else a binary replaced since it was mapped would name another
 * file's symbols. The device is not compared: through a path, btrfs
 * subvolumes and overlayfs report another st_dev than /proc/PID/maps.
 * tgid 0: the process is gone (its mappings known from the kernel's
 * reports): 3 only.
 * Returns the fd, or -errno (-ESTALE: only another file at that path). */
int procmaps__open(uint32_t tgid, const struct procmap *m, struct stat *st);
/* Mapping containing addr, or NULL (binary search; maps sorted by start). */
const struct procmap *procmaps__find(const struct procmaps *m, uint64_t addr);
void procmaps__free(struct procmaps *m);

#endif
