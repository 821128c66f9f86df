/* labels.c — reads label records and label sets out of a target process
 * (see labels.h and docs/labels-abi.md).
 *
 * Independent of include/pmubpf/labels.h on purpose: the bytes are parsed
 * by the offsets docs/labels-abi.md gives, from local copies made with
 * process_vm_readv, so a layout drift between the two shows up in the
 * unit tests (which read sets the header made) rather than being hidden by
 * a shared struct. Every read is bounded by ABI constants, never by a size
 * the target supplies beyond them.
 */
#include "labels.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

/* ABI version 1 constants (docs/labels-abi.md). */
#define REC_MAGIC 0x424c465042554d50ULL /* "PMUBPFLB" */
#define REC_SIZE_V1 64u
#define REC_SIZE_MAX 4096u /* later versions may append, not this much */
#define SET_MAGIC 0x5445534cu /* "LSET" */
#define SET_HDR 152u
#define SET_MAX (SET_HDR + LABELS_MAX * (LABELS_KEY_MAX + LABELS_VALUE_MAX))
#define TLS_OFFSET_MAX (1LL << 30)

static uint16_t get16(const unsigned char *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static int fail(const char **why, const char *reason, int err)
{
	if (why)
		*why = reason;
	return err;
}

/* Exactly len bytes at addr in pid, or a negative errno. */
static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (addr + len < addr || addr > UINTPTR_MAX - len)
		return -EFAULT;
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0) {
		int e = errno;
		if (e == ESRCH || e == EPERM || e == ENOMEM)
			return -e;
		return -EFAULT;
	}
	return (size_t)n == len ? 0 : -EFAULT;
}

int labels__read_record(pid_t pid, uint64_t addr, struct labels_record_info *out,
			const char **why)
{
	unsigned char b[REC_SIZE_V1];
	int err;

	if (!out)
		return fail(why, "no output", -EINVAL);
	if (addr & 7)
		return fail(why, "misaligned record address", -EPROTO);
	err = peek(pid, addr, b, sizeof(b));
	if (err)
		return fail(why, "record unreadable", err);
	if (get64(b + 0) != REC_MAGIC)
		return fail(why, "bad record magic", -EPROTO);
	uint32_t version = get32(b + 8);
	if (version != LABELS_ABI_VERSION)
		return fail(why, "unsupported record version", -EPROTO);
	uint32_t size = get32(b + 12);
	if (size < REC_SIZE_V1 || size > REC_SIZE_MAX)
		return fail(why, "bad record size", -EPROTO);
	if (get32(b + 28) != 8)
		return fail(why, "unsupported TLS word size", -EPROTO);
	if (get32(b + 32) != SET_MAGIC || get32(b + 36) != SET_HDR ||
	    get32(b + 40) != SET_MAX || get16(b + 44) != LABELS_MAX ||
	    get16(b + 46) != LABELS_KEY_MAX - 1 ||
	    get16(b + 48) != LABELS_VALUE_MAX - 1)
		return fail(why, "unsupported set layout", -EPROTO);
	uint32_t ready = get32(b + 24);
	if (ready == 0)
		return fail(why, "record not ready", -EAGAIN);
	if (ready != 1)
		return fail(why, "bad ready flag", -EPROTO);
	int64_t off = (int64_t)get64(b + 16);
#if defined(__x86_64__)
	bool sign_ok = off < 0; /* variant II: TLS below the thread pointer */
#elif defined(__aarch64__)
	bool sign_ok = off > 0; /* variant I: TLS above the TCB */
#else
	bool sign_ok = true;
#endif
	if (!sign_ok || off % 8 != 0 || off < -TLS_OFFSET_MAX || off > TLS_OFFSET_MAX)
		return fail(why, "implausible tls_offset", -EPROTO);
	out->tls_offset = off;
	out->version = version;
	if (why)
		*why = NULL;
	return 0;
}

/* Check the string at [off, off+len] of the set copy b (total bytes). */
static const char *check_str(const unsigned char *b, uint32_t total, uint32_t off,
			     uint32_t len, uint32_t max)
{
	if (len > max)
		return "label string too long";
	if (off < SET_HDR || off + len + 1 > total)
		return "label string out of bounds";
	if (b[off + len] != 0)
		return "label string not NUL-terminated";
	if (memchr(b + off, 0, len))
		return "NUL inside a label string";
	return NULL;
}

int labels__parse_set(const void *buf, size_t len, uint64_t id, struct label_set *out,
		      const char **why)
{
	const unsigned char *b = buf;
	const char *bad;

	if (!buf || !out || id == 0)
		return fail(why, "bad arguments", -EINVAL);
	if (len < SET_HDR)
		return fail(why, "set truncated", -EPROTO);
	if (get64(b + 0) != id)
		return fail(why, "set id changed (freed or reused)", -ESTALE);
	uint32_t magic = get32(b + 8);
	if (magic == 0) /* free() clears id then magic: caught in between */
		return fail(why, "set being freed", -ESTALE);
	if (magic != SET_MAGIC)
		return fail(why, "bad set magic", -EPROTO);
	uint32_t count = get16(b + 12);
	uint32_t flags = get16(b + 14);
	uint32_t total = get32(b + 16);
	if (count > LABELS_MAX)
		return fail(why, "too many labels", -EPROTO);
	if (total < SET_HDR || total > SET_MAX)
		return fail(why, "bad set size", -EPROTO);
	if (total > len)
		return fail(why, "set truncated", -EPROTO);
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *r = b + 24 + 8 * i;
		uint32_t koff = get16(r), klen = get16(r + 2);
		uint32_t voff = get16(r + 4), vlen = get16(r + 6);
		/* pprof has no empty label keys (our builder refuses one): a
		 * set with one is malformed, so that it costs only its own
		 * samples their labels, never the profile. */
		if (!klen)
			return fail(why, "empty label key", -EPROTO);
		if ((bad = check_str(b, total, koff, klen, LABELS_KEY_MAX - 1)) ||
		    (bad = check_str(b, total, voff, vlen, LABELS_VALUE_MAX - 1)))
			return fail(why, bad, -EPROTO);
		for (uint32_t j = 0; j < i; j++) {
			const unsigned char *q = b + 24 + 8 * j;
			if (get16(q + 2) == klen && !memcmp(b + get16(q), b + koff, klen))
				return fail(why, "duplicate label key", -EPROTO);
		}
	}
	out->id = id;
	out->n = count;
	out->truncated = flags & 0x1;
	for (uint32_t i = 0; i < count; i++) {
		const unsigned char *r = b + 24 + 8 * i;
		memcpy(out->pairs[i].key, b + get16(r), get16(r + 2) + 1u);
		memcpy(out->pairs[i].value, b + get16(r + 4), get16(r + 6) + 1u);
	}
	if (why)
		*why = NULL;
	return 0;
}

int labels__read_set(pid_t pid, uint64_t addr, uint64_t id, struct label_set *out,
		     const char **why)
{
	unsigned char b[SET_MAX];
	struct label_set tmp;
	uint32_t total;
	int err;

	if (!out || id == 0)
		return fail(why, "bad arguments", -EINVAL);
	if (addr & 7)
		return fail(why, "misaligned set address", -EPROTO);
	err = peek(pid, addr, b, SET_HDR);
	if (err)
		return fail(why, "set unreadable", err);
	if (get64(b) != id)
		return fail(why, "set id changed (freed or reused)", -ESTALE);
	total = get32(b + 16);
	if (total < SET_HDR || total > SET_MAX)
		return labels__parse_set(b, SET_HDR, id, out, why);
	err = peek(pid, addr + SET_HDR, b + SET_HDR, total - SET_HDR);
	if (err)
		return fail(why, "set strings unreadable", err);
	err = labels__parse_set(b, total, id, &tmp, why);
	if (err)
		return err;
	/* Sets are immutable while live; if the id is unchanged now, nothing
	 * freed or reused the memory while the strings were being read. */
	uint64_t again;
	err = peek(pid, addr, &again, sizeof(again));
	if (err)
		return fail(why, "set unreadable", err);
	if (again != id)
		return fail(why, "set freed while read", -ESTALE);
	*out = tmp;
	return 0;
}

bool labels__key_reserved(const char *key)
{
	static const char *const own[] = { "pid", "tid", "comm", "cgroup", "container_id", "pod_uid", "systemd_unit" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strcmp(key, own[i]))
			return true;
	return !strncmp(key, "pmubpf_", 7);
}

const char *labels__profile_key(const char *key, char buf[LABELS_PROFILE_KEY_MAX])
{
	if (!labels__key_reserved(key))
		return key;
	/* Keys of a parsed set fit LABELS_KEY_MAX; a longer one is cut. */
	snprintf(buf, LABELS_PROFILE_KEY_MAX, "%s%s", LABELS_APP_PREFIX, key);
	return buf;
}
