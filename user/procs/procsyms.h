/* procsyms.h — a process's symbols that no mapped file holds.
 *
 * Two sources, read while the process exists (at its snapshot):
 *  - the vDSO: the kernel maps an ELF image, [vdso], into every process;
 *    its bytes are read out of the process (process_vm_readv) and parsed
 *    from memory, so frames in it are named (__vdso_clock_gettime, ...).
 *  - JIT code: anonymous executable memory named by the process's
 *    /tmp/perf-PID.map (perfmap.h), re-read (rate-limited) when an
 *    address is not found in it, since JITs append as they compile.
 */
#ifndef PMUBPF_PROCSYMS_H
#define PMUBPF_PROCSYMS_H

#include <stdbool.h>
#include <stdint.h>
#include "symbols/elfsym.h"
#include "symbols/perfmap.h"
#include "procmaps.h"

struct proc;

#define PROCSYMS_JIT_REREAD_MS 100 /* at most one re-read per process per ... */
#define PROCSYMS_JIT_MAX_READS 32  /* ... and this many in all */
#define PROCSYMS_JIT_POLL_MS 200

/* Is process tgid in another mount namespace than ours? A namespace is
 * known by its nsfs device and inode (ioctl_ns(2)): both compared when
 * /proc/PID/ns/mnt is asked. mntns, if not 0, is the inode BPF read from
 * the task at its first sample (all namespaces share the one nsfs
 * device): compared with ours, no path walked. The one test of it:
 * debuginfo and perf maps get the answer from here. */
bool procsyms__other_mntns(uint32_t tgid, uint32_t mntns);
/* Our own vDSO's object, kept between calls while the cache has not
 * evicted anything (the object could be gone then): under churn most
 * processes are named after they are gone, each with our vDSO. */
struct vdso_memo {
	struct elfobj *obj;
	const struct symcache *sc;
	size_t evicted;
};
/* The vDSO mapped at m in process tgid, as an object of sc, or NULL.
 * Of our own vDSO's length: ours (found through memo, which may be
 * NULL), not read. Of another length (another ABI's): read out of
 * process tgid; NULL for tgid 0 or a process gone. */
struct elfobj *procsyms__vdso(struct symcache *sc, uint32_t tgid,
			      const struct procmap *m, struct vdso_memo *memo);
/* Snapshot time: if pr may run JIT code (anonymous or memfd executable
 * memory), find out where its perf map is and read it if there; else
 * that waits for the maps re-read or poll that shows such memory. Uses
 * pr->other_mntns. */
void procsyms__jit_snapshot(struct proc *pr);
/* Re-read pr's perf map if it changed (called when its maps are re-read,
 * so code a JIT named after the snapshot is known before it exits). */
void procsyms__jit_refresh(struct proc *pr);
/* While sampling: re-read the map of a live process that may run JIT
 * code (anonymous executable memory) every PROCSYMS_JIT_POLL_MS, if it
 * changed, so code named just before the process exits is known. now_ms:
 * CLOCK_MONOTONIC in ms (one clock read per pass over the processes). */
void procsyms__jit_poll(struct proc *pr, int64_t now_ms);
/* The JIT symbol covering ip, or NULL (may re-read the map). */
const struct perfmap_sym *procsyms__jit_lookup(struct proc *pr, uint64_t ip);
/* Free what the snapshot kept. */
void procsyms__release(struct proc *pr);

#endif
