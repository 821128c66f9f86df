/* pmubpf/labels.h — per-thread pprof-style labels for C and C++, readable by
 * the pmubpf profiler (one header, libc only, MIT licence).
 *
 * Version 1.0 (PMUBPF_LABELS_VERSION_MAJOR / _MINOR below); publishes the
 * label ABI version 1 (PMUBPF_LABELS_ABI_VERSION).
 *
 * WHAT IT IS
 *   Like Go's pprof.Do / pprof.Labels: a label set is an immutable list of
 *   key=value pairs (its parent's pairs plus new ones, a new key overriding
 *   the parent's value). A thread makes a set "current" for the duration of
 *   some work; every sample pmubpf takes of the thread meanwhile carries
 *   the set's labels, and the profile can be filtered/grouped by them
 *   (go tool pprof -tagfocus phase=parse, -tags, ...).
 *
 * QUICK START
 *   #include <pmubpf/labels.h>         // no IMPLEMENTATION define needed
 *
 *   const pmubpf_labels *req = pmubpf_labels_new(NULL,
 *           "endpoint", "/render", "tenant", "acme", NULL);
 *   const pmubpf_labels *parse = pmubpf_labels_new(req, "phase", "parse", NULL);
 *
 *   const pmubpf_labels *prev = pmubpf_labels_set(parse);
 *   parse_request();                    // samples: endpoint, tenant, phase
 *   pmubpf_labels_set(prev);            // restore
 *
 *   pmubpf_labels_do(req, render, ctx); // set, call render(ctx), restore
 *
 *   pmubpf_labels_free(parse);          // once no thread has it current
 *   pmubpf_labels_free(req);
 *
 *   Build: nothing special (gcc prog.c). See LINKING for shared libraries.
 *
 * API
 *   const pmubpf_labels *pmubpf_labels_new(const pmubpf_labels *parent,
 *                                          const char *key, ...);
 *       New set: parent's labels (parent may be NULL) plus the NULL-
 *       terminated key, value, key, value, ..., NULL pairs. A key already
 *       in parent (or repeated in the list) takes the last value, keeping
 *       its position; new keys are appended in order. Returns NULL when
 *       malloc fails, a key has no value (odd count) or a key is empty
 *       ("": pprof has no empty label keys; values may be). The strings are
 *       copied; the parent may be freed afterwards. Thread-safe; NOT
 *       async-signal-safe (malloc).
 *   const pmubpf_labels *pmubpf_labels_set(const pmubpf_labels *labels);
 *       Make labels the calling thread's current set (NULL = none); returns
 *       the previous one. A load and a store of one thread-local word: no
 *       syscall, no allocation, no lock; async-signal-safe.
 *   const pmubpf_labels *pmubpf_labels_current(void);
 *       The calling thread's current set (NULL = none). Pass it to another
 *       thread and pmubpf_labels_set() it there to make that thread's work
 *       count under the same labels. New threads start with none.
 *   void pmubpf_labels_do(const pmubpf_labels *labels,
 *                         void (*fn)(void *), void *arg);
 *       set(labels), fn(arg), set(previous). Not restored if fn longjmps
 *       or throws (in C++ use a small RAII guard around set()).
 *   void pmubpf_labels_free(const pmubpf_labels *labels);
 *       Free a set that no thread has current any more (and that is not a
 *       "previous" value some code will restore). NULL is a no-op. The set's
 *       id and magic are cleared first, so the profiler never reads a freed
 *       (or reused) set as a live one.
 *
 * LIMITS
 *   - At most PMUBPF_LABELS_MAX (16) labels per set; keys up to 63 bytes,
 *     values up to 255 bytes (PMUBPF_LABELS_MAX_KEY_LEN / _VALUE_LEN, not
 *     counting the NUL).
 *   - Longer input never overflows: a long key or value is cut to fit and
 *     ends with "..." (the last 3 of the 63/255 bytes; the cut never splits
 *     a UTF-8 sequence, so it may be up to 3 bytes shorter), and the set's
 *     PMUBPF_LABELS_F_TRUNCATED flag is set. Keys are compared after that
 *     cut. With more than 16 distinct keys after the parent/override merge,
 *     the first 16 are kept (parent's first, then new ones in argument
 *     order) and the flag is set. A set made from a truncated parent is
 *     truncated too.
 *   - The region a set covers is what runs between set() and the restore in
 *     program order. Both stores are volatile and fenced for the compiler,
 *     so memory accesses and calls stay inside; pure register arithmetic
 *     inlined around them may still be scheduled across.
 *   - Profiler support needs x86-64 or aarch64 (the record's tls_offset is
 *     computed from the thread pointer); elsewhere the API works but the
 *     record never becomes ready. Needs ELF TLS; tested with glibc.
 *   - After fork() the child has copies of the parent's sets and the
 *     forking thread's current set; ids stay unique within each process.
 *   - Reserved keys: pid, tid, comm and pmubpf_* are pmubpf's own sample
 *     labels. Such a key is accepted here, and the profile shows it as
 *     pmubpf_app_KEY (docs/labels-abi.md, "Reserved label names").
 *
 * LINKING (one TLS word and one record per process)
 *   Everything is static inline or a weak default-visibility definition, so
 *   including the header in many translation units, in C and in C++, links
 *   to one TLS word and one record. Shared libraries that include it and
 *   are linked into the executable at build time need nothing either: ld
 *   exports the executable's definitions because the library defines them
 *   too, and the dynamic linker binds the library to them.
 *   A library that is only dlopen()ed and includes the header would get its
 *   own TLS word unless the executable exports its symbols: link the
 *   executable with -rdynamic, or export just the three pmubpf_ ones:
 *     -Wl,--export-dynamic-symbol='pmubpf_*'      (binutils >= 2.35)
 *   The same flags put the record in the executable's .dynsym, which is
 *   what lets pmubpf find it in a *stripped* executable; a non-stripped
 *   one (plain `gcc prog.c`) is found through .symtab.
 *   The TLS word uses the initial-exec model; a dlopen()ed library that
 *   defines it relies on glibc's static TLS reserve (it has room for it).
 *
 * ABI (version 1; full text in pmubpf's docs/labels-abi.md)
 *   The structs below, marked "ABI", are what the profiler reads; their
 *   layout is fixed by version 1 (native byte order, x86-64/aarch64 LP64).
 *   - TLS word: `__thread const pmubpf_labels *pmubpf__tls_current`,
 *     initial-exec, weak, default visibility: the current set's address,
 *     0 = none. Address = thread pointer + record.tls_offset in every
 *     thread (x86-64: fs base, tls_offset < 0; aarch64: TPIDR_EL0, > 0).
 *   - Registration record: `struct pmubpf_labels_record
 *     pmubpf_labels_record`, weak, default visibility; found by ELF symbol
 *     name. Statically initialized (magic, version, size, set layout), then
 *     a constructor (and pmubpf_labels_new) computes tls_offset and stores
 *     ready = 1 last, with release ordering.
 *   - A set: struct pmubpf_labels: u64 id (unique per process, never 0),
 *     u32 magic, u16 count, u16 flags, u32 total_size, u32 reserved, then
 *     16 fixed {key_off, key_len, value_off, value_len} u16 entries, then
 *     the NUL-terminated strings. Offsets are from the start of the set;
 *     total_size <= PMUBPF_LABELS_SET_MAX_SIZE. The profiler reads the
 *     first 8 bytes (the id) at every sample, the rest once per (pid, id).
 *     pmubpf_labels_free() zeroes id, then magic, then free()s.
 *   Ids are an atomic counter times an odd 64-bit constant (a bijection,
 *   so unique and never 0, but unlikely to match stale memory by chance).
 *
 * COMPILERS
 *   C99/C11 and C++11 and later, gcc and clang (GNU attributes and
 *   __atomic builtins), -Wall -Wextra -pedantic clean.
 *
 * HISTORY
 *   1.0  first release: ABI version 1.
 *
 * LICENCE (MIT)
 *   Copyright (c) the pmubpf authors.
 *   Permission is hereby granted, free of charge, to any person obtaining a
 *   copy of this software and associated documentation files (the
 *   "Software"), to deal in the Software without restriction, including
 *   without limitation the rights to use, copy, modify, merge, publish,
 *   distribute, sublicense, and/or sell copies of the Software, and to
 *   permit persons to whom the Software is furnished to do so, subject to
 *   the following conditions: The above copyright notice and this
 *   permission notice shall be included in all copies or substantial
 *   portions of the Software.
 *   THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS
 *   OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF
 *   MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.
 *   IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY
 *   CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT,
 *   TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE
 *   SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
 */
#ifndef PMUBPF_LABELS_H
#define PMUBPF_LABELS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PMUBPF_LABELS_VERSION_MAJOR 1
#define PMUBPF_LABELS_VERSION_MINOR 0

/* ---- ABI constants (version 1) ------------------------------------------ */
#define PMUBPF_LABELS_ABI_VERSION 1
/* Record magic: the bytes "PMUBPFLB" in memory (little-endian u64). */
#define PMUBPF_LABELS_RECORD_MAGIC 0x424c465042554d50ULL
/* Set magic: the bytes "LSET" in memory (little-endian u32). */
#define PMUBPF_LABELS_SET_MAGIC 0x5445534cU
#define PMUBPF_LABELS_MAX 16
#define PMUBPF_LABELS_MAX_KEY_LEN 63    /* bytes, without the NUL */
#define PMUBPF_LABELS_MAX_VALUE_LEN 255 /* bytes, without the NUL */
#define PMUBPF_LABELS_F_TRUNCATED 0x1   /* flags: something was cut */
#define PMUBPF_LABELS_SET_HEADER_SIZE 152 /* offset of the first string */
#define PMUBPF_LABELS_SET_MAX_SIZE (PMUBPF_LABELS_SET_HEADER_SIZE + \
	PMUBPF_LABELS_MAX * (PMUBPF_LABELS_MAX_KEY_LEN + 1 + \
			     PMUBPF_LABELS_MAX_VALUE_LEN + 1)) /* 5272 */
#define PMUBPF_LABELS_RECORD_SIZE 64

#ifdef __cplusplus
extern "C" {
#endif

/* ABI: one label of a set; offsets from the start of the set, lengths
 * without the NUL that follows each string. */
struct pmubpf_label_ref {
	uint16_t key_off;   /* 0 */
	uint16_t key_len;   /* 2: <= 63 */
	uint16_t value_off; /* 4 */
	uint16_t value_len; /* 6: <= 255 */
};

/* ABI: a label set in memory (malloc'ed, immutable once made). */
struct pmubpf_labels {
	uint64_t id;         /* 0: unique per process, never 0; 0 once freed */
	uint32_t magic;      /* 8: PMUBPF_LABELS_SET_MAGIC; 0 once freed */
	uint16_t count;      /* 12: labels used, <= PMUBPF_LABELS_MAX */
	uint16_t flags;      /* 14: PMUBPF_LABELS_F_* */
	uint32_t total_size; /* 16: bytes, header + strings,
	                      *     <= PMUBPF_LABELS_SET_MAX_SIZE */
	uint32_t reserved;   /* 20: 0 */
	struct pmubpf_label_ref labels[PMUBPF_LABELS_MAX]; /* 24: [count] used */
	/* 152: the strings, each NUL-terminated */
};
typedef struct pmubpf_labels pmubpf_labels;

/* ABI: the registration record, one per process. */
struct pmubpf_labels_record {
	uint64_t magic;           /* 0: PMUBPF_LABELS_RECORD_MAGIC */
	uint32_t version;         /* 8: PMUBPF_LABELS_ABI_VERSION (1) */
	uint32_t size;            /* 12: sizeof(struct pmubpf_labels_record) */
	int64_t tls_offset;       /* 16: &TLS word - thread pointer */
	uint32_t ready;           /* 24: 1 once tls_offset is valid (stored
	                           *     last, release); 0 before */
	uint32_t tls_size;        /* 28: bytes of the TLS word (8 on LP64) */
	uint32_t set_magic;       /* 32: PMUBPF_LABELS_SET_MAGIC */
	uint32_t set_header_size; /* 36: PMUBPF_LABELS_SET_HEADER_SIZE (152) */
	uint32_t set_max_size;    /* 40: PMUBPF_LABELS_SET_MAX_SIZE (5272) */
	uint16_t max_labels;      /* 44: 16 */
	uint16_t max_key_len;     /* 46: 63 */
	uint16_t max_value_len;   /* 48: 255 */
	uint16_t reserved0;       /* 50: 0 */
	uint32_t reserved1;       /* 52: 0 */
	uint64_t reserved2;       /* 56: 0 */
};

/* Layout checks (C99-compatible: a negative array size fails). */
typedef char pmubpf__labels_check_set[
	(offsetof(struct pmubpf_labels, labels) == 24 &&
	 sizeof(struct pmubpf_labels) == PMUBPF_LABELS_SET_HEADER_SIZE) ? 1 : -1];
typedef char pmubpf__labels_check_record[
	(offsetof(struct pmubpf_labels_record, ready) == 24 &&
	 offsetof(struct pmubpf_labels_record, max_labels) == 44 &&
	 sizeof(struct pmubpf_labels_record) == PMUBPF_LABELS_RECORD_SIZE) ? 1 : -1];

/* ABI: the TLS word. One per process (weak, default visibility). Volatile,
 * so every set/restore is a real store the compiler cannot merge away. */
extern __thread const pmubpf_labels *volatile pmubpf__tls_current;
__attribute__((weak, used, visibility("default"), tls_model("initial-exec")))
__thread const pmubpf_labels *volatile pmubpf__tls_current = NULL;

/* ABI: the registration record. One per process. */
extern struct pmubpf_labels_record pmubpf_labels_record;
__attribute__((weak, used, visibility("default")))
struct pmubpf_labels_record pmubpf_labels_record = {
	PMUBPF_LABELS_RECORD_MAGIC, PMUBPF_LABELS_ABI_VERSION,
	PMUBPF_LABELS_RECORD_SIZE, 0, 0, (uint32_t)sizeof(void *),
	PMUBPF_LABELS_SET_MAGIC,
	PMUBPF_LABELS_SET_HEADER_SIZE, PMUBPF_LABELS_SET_MAX_SIZE,
	PMUBPF_LABELS_MAX, PMUBPF_LABELS_MAX_KEY_LEN,
	PMUBPF_LABELS_MAX_VALUE_LEN, 0, 0, 0
};

/* Not ABI: the id counter, shared like the rest. */
extern uint64_t pmubpf__labels_next_id;
__attribute__((weak, used, visibility("default")))
uint64_t pmubpf__labels_next_id = 0;

/* ---- implementation (everything below is static inline) ----------------- */

static inline void *pmubpf__thread_pointer(void)
{
#if defined(__x86_64__) && !defined(__clang__) && defined(__GNUC__) && __GNUC__ < 11
	void *tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp)); /* psABI: fs:0 holds the TP */
	return tp;
#elif defined(__x86_64__) || defined(__aarch64__)
	return __builtin_thread_pointer();
#else
	return NULL;
#endif
}

/* Fill in the record's run-time part. Idempotent, thread-safe. */
static inline void pmubpf__labels_init(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
	void *tp;
	int64_t off;
	if (__atomic_load_n(&pmubpf_labels_record.ready, __ATOMIC_ACQUIRE))
		return;
	tp = pmubpf__thread_pointer();
	off = (int64_t)((uintptr_t)&pmubpf__tls_current - (uintptr_t)tp);
	__atomic_store_n(&pmubpf_labels_record.tls_offset, off, __ATOMIC_RELAXED);
	__atomic_store_n(&pmubpf_labels_record.ready, 1, __ATOMIC_RELEASE);
#endif
}

__attribute__((constructor)) static void pmubpf__labels_ctor(void)
{
	pmubpf__labels_init();
}

static inline const pmubpf_labels *pmubpf_labels_current(void)
{
	return pmubpf__tls_current;
}

static inline const pmubpf_labels *pmubpf_labels_set(const pmubpf_labels *labels)
{
	const pmubpf_labels *prev = pmubpf__tls_current;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pmubpf__tls_current = labels;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return prev;
}

static inline void pmubpf_labels_do(const pmubpf_labels *labels,
				    void (*fn)(void *), void *arg)
{
	const pmubpf_labels *prev = pmubpf_labels_set(labels);
	if (fn)
		fn(arg);
	pmubpf__tls_current = prev; /* restore: one store */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* One label string as it will be stored: s[0..pre) then "..." if dots. */
struct pmubpf__str {
	const char *s;
	unsigned pre, dots;
};

static inline unsigned pmubpf__str_len(const struct pmubpf__str *x)
{
	return x->pre + 3 * x->dots;
}

/* Clip s to at most max bytes; returns 1 if it had to be cut. */
static inline int pmubpf__clip(struct pmubpf__str *x, const char *s, unsigned max)
{
	unsigned n = 0, back = 0;
	while (n <= max && s[n])
		n++;
	x->s = s;
	if (n <= max) {
		x->pre = n;
		x->dots = 0;
		return 0;
	}
	n = max - 3;
	/* do not split a UTF-8 sequence (at most 3 continuation bytes) */
	while (n > 0 && back < 3 && ((unsigned char)s[n] & 0xC0) == 0x80) {
		n--;
		back++;
	}
	x->pre = n;
	x->dots = 1;
	return 1;
}

static inline int pmubpf__str_eq(const struct pmubpf__str *a,
				 const struct pmubpf__str *b)
{
	unsigned i, n = pmubpf__str_len(a);
	if (n != pmubpf__str_len(b))
		return 0;
	for (i = 0; i < n; i++) {
		char ca = i < a->pre ? a->s[i] : '.';
		char cb = i < b->pre ? b->s[i] : '.';
		if (ca != cb)
			return 0;
	}
	return 1;
}

/* Write x and its NUL at dst; returns the bytes written (len + 1). */
static inline unsigned pmubpf__str_put(char *dst, const struct pmubpf__str *x)
{
	memcpy(dst, x->s, x->pre);
	if (x->dots)
		memcpy(dst + x->pre, "...", 3);
	dst[pmubpf__str_len(x)] = 0;
	return pmubpf__str_len(x) + 1;
}

static inline const pmubpf_labels *pmubpf_labels_new(const pmubpf_labels *parent,
						     const char *key, ...)
{
	struct pmubpf__str k[PMUBPF_LABELS_MAX], v[PMUBPF_LABELS_MAX];
	unsigned n = 0, i, flags = 0, size = PMUBPF_LABELS_SET_HEADER_SIZE;
	const char *ks;
	pmubpf_labels *set;
	char *base;
	va_list ap;

	pmubpf__labels_init();
	if (parent) {
		for (i = 0; i < parent->count && i < PMUBPF_LABELS_MAX; i++) {
			const struct pmubpf_label_ref *r = &parent->labels[i];
			k[n].s = (const char *)parent + r->key_off;
			k[n].pre = r->key_len;
			k[n].dots = 0;
			v[n].s = (const char *)parent + r->value_off;
			v[n].pre = r->value_len;
			v[n].dots = 0;
			n++;
		}
		flags |= parent->flags & PMUBPF_LABELS_F_TRUNCATED;
	}
	va_start(ap, key);
	for (ks = key; ks; ks = va_arg(ap, const char *)) {
		const char *vs = va_arg(ap, const char *);
		struct pmubpf__str kx, vx;
		if (!vs || !*ks) {
			va_end(ap);
			return NULL; /* odd number of arguments, or an empty key */
		}
		if (pmubpf__clip(&kx, ks, PMUBPF_LABELS_MAX_KEY_LEN))
			flags |= PMUBPF_LABELS_F_TRUNCATED;
		if (pmubpf__clip(&vx, vs, PMUBPF_LABELS_MAX_VALUE_LEN))
			flags |= PMUBPF_LABELS_F_TRUNCATED;
		for (i = 0; i < n; i++)
			if (pmubpf__str_eq(&k[i], &kx))
				break;
		if (i < n) {
			v[i] = vx;
		} else if (n < PMUBPF_LABELS_MAX) {
			k[n] = kx;
			v[n] = vx;
			n++;
		} else {
			flags |= PMUBPF_LABELS_F_TRUNCATED;
		}
	}
	va_end(ap);

	for (i = 0; i < n; i++)
		size += pmubpf__str_len(&k[i]) + 1 + pmubpf__str_len(&v[i]) + 1;
	set = (pmubpf_labels *)malloc(size);
	if (!set)
		return NULL;
	memset(set, 0, PMUBPF_LABELS_SET_HEADER_SIZE);
	base = (char *)set;
	size = PMUBPF_LABELS_SET_HEADER_SIZE; /* now the write offset */
	for (i = 0; i < n; i++) {
		struct pmubpf_label_ref *r = &set->labels[i];
		r->key_off = (uint16_t)size;
		r->key_len = (uint16_t)pmubpf__str_len(&k[i]);
		size += pmubpf__str_put(base + size, &k[i]);
		r->value_off = (uint16_t)size;
		r->value_len = (uint16_t)pmubpf__str_len(&v[i]);
		size += pmubpf__str_put(base + size, &v[i]);
	}
	set->count = (uint16_t)n;
	set->flags = (uint16_t)flags;
	set->total_size = size;
	set->magic = PMUBPF_LABELS_SET_MAGIC;
	set->id = __atomic_add_fetch(&pmubpf__labels_next_id, 1, __ATOMIC_RELAXED) *
		  0x9E3779B97F4A7C15ULL;
	return set;
}

static inline void pmubpf_labels_free(const pmubpf_labels *labels)
{
	pmubpf_labels *set = (pmubpf_labels *)(uintptr_t)labels;
	if (!set)
		return;
	/* volatile: the compiler must not drop these stores before free() */
	*(volatile uint64_t *)&set->id = 0;
	*(volatile uint32_t *)&set->magic = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	free(set);
}

#ifdef __cplusplus
}
#endif

#endif /* PMUBPF_LABELS_H */
