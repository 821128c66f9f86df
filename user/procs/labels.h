/* labels.h — the profiler's reader of pprof-style label sets in a target
 * process (the app side is include/pmubpf/labels.h; ABI in
 * docs/labels-abi.md).
 *
 * At first sight of a process, userspace finds the registration record by
 * ELF symbol (LABELS_RECORD_SYMBOL) in the mapped objects, reads it with
 * labels__read_record and hands tls_offset to BPF (struct
 * pmubpf_label_slot). BPF then tags samples with the 64-bit id at the
 * start of the current set; at the first sample of (pid, id) it sends a
 * copy of the set (labels__parse_set checks it) and its address
 * (labels__read_set, the fallback when the copy failed).
 *
 * The target's memory is hostile: every read here is one process_vm_readv
 * of a bounded size into a local buffer, parsed by byte offset, with every
 * count, offset and length checked against the bounds of ABI version 1.
 * Nothing in the target is ever dereferenced or trusted to be terminated.
 * Both functions are thread-safe and allocate nothing.
 *
 * Errors (negative errno): -EFAULT: memory unreadable (unmapped, partial
 * read, or address range wraps); -ESRCH: no such process; -EPERM: no
 * permission to read it (ptrace access mode); -EPROTO: the bytes are
 * not a valid record/set (*why says what); -EAGAIN: record not ready yet;
 * -ESTALE: the set is freed or the memory now holds another set;
 * -EINVAL: bad arguments.
 */
#ifndef PMUBPF_USER_LABELS_H
#define PMUBPF_USER_LABELS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LABELS_RECORD_SYMBOL "pmubpf_labels_record"
#define LABELS_ABI_VERSION 1
#define LABELS_MAX 16
#define LABELS_KEY_MAX 64    /* bytes with the NUL */
#define LABELS_VALUE_MAX 256 /* bytes with the NUL */

struct labels_record_info {
	int64_t tls_offset; /* TLS word address minus the thread pointer */
	uint32_t version;   /* record version (1) */
};

/* Read and validate the record at addr (its run-time address) in pid.
 * Returns 0, -EAGAIN (valid but not ready: the process has not run its
 * constructors yet; retry later), -EPROTO (bad magic, version, size, set
 * layout or tls_offset; *why set), -EFAULT, -ESRCH, -EPERM. why may be
 * NULL; when set it points to a static string. */
int labels__read_record(pid_t pid, uint64_t addr, struct labels_record_info *out,
			const char **why);

struct label_pair {
	char key[LABELS_KEY_MAX];     /* NUL-terminated, never empty */
	char value[LABELS_VALUE_MAX]; /* NUL-terminated, may be empty */
};

struct label_set {
	uint64_t id;
	uint32_t n;      /* pairs used, <= LABELS_MAX */
	bool truncated;  /* the app cut a key/value or dropped labels */
	struct label_pair pairs[LABELS_MAX]; /* in the set's order, keys unique */
};

/* Read the set at addr in pid and check that its id is still id (sets are
 * immutable; the id is checked again after the strings are read, so a set
 * freed meanwhile is not returned). Returns 0, -ESTALE (id differs: the set
 * was freed, or its memory reused), -EPROTO (malformed; *why set), -EFAULT,
 * -ESRCH, -EPERM, -EINVAL (id 0). out is written only on success. */
int labels__read_set(pid_t pid, uint64_t addr, uint64_t id, struct label_set *out,
		     const char **why);

/* Keys pmubpf itself puts on samples are reserved: pid, tid, comm, and
 * every key that starts with "pmubpf_" (pmubpf_labels=[unread]). A
 * program's label with a reserved key would mix with pmubpf's own and
 * count twice in `go tool pprof -tags`, so the profile gets it renamed to
 * LABELS_APP_PREFIX + key (pid -> pmubpf_app_pid). The new name is in the
 * reserved namespace and distinct keys stay distinct, so it never
 * collides with another key of the set. */
#define LABELS_APP_PREFIX "pmubpf_app_"
#define LABELS_PROFILE_KEY_MAX (sizeof(LABELS_APP_PREFIX) - 1 + LABELS_KEY_MAX)
bool labels__key_reserved(const char *key);
/* key as the profile writes it: key itself, or buf holding the renamed
 * reserved key. */
const char *labels__profile_key(const char *key, char buf[LABELS_PROFILE_KEY_MAX]);

/* Validate and decode a copy of a set (buf, len bytes: what BPF copied out
 * of the sampled thread), checking that its id is id. Same returns as
 * labels__read_set except the ones about reading memory. */
int labels__parse_set(const void *buf, size_t len, uint64_t id, struct label_set *out,
		      const char **why);

#endif
