/* test_labels.c — unit tests of pprof-style labels: the app-side header
 * (include/pmubpf/labels.h: set semantics, truncation, threads, the
 * registration record) and the profiler-side reader (user/labels.c), which
 * reads sets out of a forked child exactly as pmubpf does (record -> TLS
 * word at thread pointer + tls_offset -> id -> set), and must reject
 * hostile records and sets without crashing.
 *
 * The first test must stay first: it checks that the record was made
 * valid by the header's constructor, before any API call.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pmubpf/labels.h>
#include "procs/labels.h"
#include "testing.h"

/* Value of key in an in-process set, or NULL. */
static const char *lget(const pmubpf_labels *s, const char *key)
{
	for (unsigned i = 0; i < s->count; i++)
		if (!strcmp((const char *)s + s->labels[i].key_off, key))
			return (const char *)s + s->labels[i].value_off;
	return NULL;
}

static const char *lkey(const pmubpf_labels *s, unsigned i)
{
	return (const char *)s + s->labels[i].key_off;
}

static const char *pair_get(const struct label_set *s, const char *key)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(s->pairs[i].key, key))
			return s->pairs[i].value;
	return NULL;
}

/* ---- app side ----------------------------------------------------------- */

static bool record_valid_before_first_call(void)
{
	/* No API call has run yet: only the constructor can have done this. */
	CHECK_EQ_INT(pmubpf__labels_next_id, 0);
	CHECK(pmubpf_labels_current() == NULL);
	const struct pmubpf_labels_record *r = &pmubpf_labels_record;
	CHECK(r->magic == PMUBPF_LABELS_RECORD_MAGIC);
	CHECK(!memcmp(&r->magic, "PMUBPFLB", 8));
	CHECK_EQ_INT(r->version, 1);
	CHECK_EQ_INT(r->size, 64);
	CHECK_EQ_INT(__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE), 1);
	CHECK_EQ_INT(r->tls_size, 8);
	CHECK_EQ_INT(r->set_magic, PMUBPF_LABELS_SET_MAGIC);
	CHECK_EQ_INT(r->set_header_size, 152);
	CHECK_EQ_INT(r->set_max_size, 5272);
	CHECK_EQ_INT(r->max_labels, 16);
	CHECK_EQ_INT(r->max_key_len, 63);
	CHECK_EQ_INT(r->max_value_len, 255);
	CHECK((char *)__builtin_thread_pointer() + r->tls_offset ==
	      (char *)&pmubpf__tls_current);
	return true;
}

static void *tls_thread(void *arg)
{
	*(bool *)arg = (char *)__builtin_thread_pointer() +
		pmubpf_labels_record.tls_offset == (char *)&pmubpf__tls_current;
	return NULL;
}

static bool tls_offset_same_in_threads(void)
{
	bool ok[2] = { false, false };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, tls_thread, &ok[i]) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(ok[0] && ok[1]);
	bool main_ok = false;
	tls_thread(&main_ok);
	CHECK(main_ok);
	return true;
}

static bool new_basic(void)
{
	const pmubpf_labels *s = pmubpf_labels_new(NULL, "endpoint", "/render",
						   "phase", "parse", NULL);
	CHECK(s);
	CHECK(s->id != 0);
	CHECK_EQ_INT(s->magic, PMUBPF_LABELS_SET_MAGIC);
	CHECK_EQ_INT(s->count, 2);
	CHECK_EQ_INT(s->flags, 0);
	CHECK_STR(lkey(s, 0), "endpoint");
	CHECK_STR(lkey(s, 1), "phase");
	CHECK_STR(lget(s, "endpoint"), "/render");
	CHECK_STR(lget(s, "phase"), "parse");
	CHECK_EQ_INT(s->total_size, 152 + 9 + 8 + 6 + 6);
	pmubpf_labels_free(s);

	const pmubpf_labels *e = pmubpf_labels_new(NULL, NULL);
	CHECK(e);
	CHECK_EQ_INT(e->count, 0);
	CHECK_EQ_INT(e->total_size, 152);
	const pmubpf_labels *v = pmubpf_labels_new(e, "k", "", NULL);
	CHECK(v);
	CHECK_STR(lget(v, "k"), "");
	pmubpf_labels_free(v);
	pmubpf_labels_free(e);
	return true;
}

static bool new_parent_override(void)
{
	const pmubpf_labels *p = pmubpf_labels_new(NULL, "a", "1", "b", "2", NULL);
	const pmubpf_labels *c = pmubpf_labels_new(p, "b", "3", "c", "4", NULL);
	CHECK(p && c);
	CHECK(p->id != c->id);
	CHECK_EQ_INT(c->count, 3);
	CHECK_STR(lkey(c, 0), "a");
	CHECK_STR(lkey(c, 1), "b"); /* overridden in place */
	CHECK_STR(lkey(c, 2), "c");
	CHECK_STR(lget(c, "a"), "1");
	CHECK_STR(lget(c, "b"), "3");
	CHECK_STR(lget(c, "c"), "4");
	CHECK_STR(lget(p, "b"), "2"); /* parent untouched */
	CHECK_EQ_INT(p->count, 2);
	/* A repeated key in one call: the last value wins. */
	const pmubpf_labels *r = pmubpf_labels_new(c, "a", "x", "a", "y", NULL);
	CHECK(r);
	CHECK_EQ_INT(r->count, 3);
	CHECK_STR(lget(r, "a"), "y");
	/* The child owns copies: freeing the parent first is fine. */
	pmubpf_labels_free(p);
	CHECK_STR(lget(c, "a"), "1");
	const pmubpf_labels *copy = pmubpf_labels_new(c, NULL);
	CHECK(copy && copy->id != c->id && copy->count == 3);
	CHECK_STR(lget(copy, "c"), "4");
	pmubpf_labels_free(copy);
	pmubpf_labels_free(r);
	pmubpf_labels_free(c);
	return true;
}

static bool odd_args_null(void)
{
	CHECK(pmubpf_labels_new(NULL, "a", NULL) == NULL);
	CHECK(pmubpf_labels_new(NULL, "a", "1", "b", NULL) == NULL);
	const pmubpf_labels *p = pmubpf_labels_new(NULL, "a", "1", NULL);
	CHECK(pmubpf_labels_new(p, "x", NULL) == NULL);
	pmubpf_labels_free(p);
	pmubpf_labels_free(NULL); /* no-op */
	return true;
}

/* pprof has no empty label keys: the header refuses one (NULL), like an
 * odd count, wherever it is in the list. */
static bool empty_key_null(void)
{
	CHECK(pmubpf_labels_new(NULL, "", "v", NULL) == NULL);
	CHECK(pmubpf_labels_new(NULL, "a", "1", "", "v", NULL) == NULL);
	const pmubpf_labels *p = pmubpf_labels_new(NULL, "a", "", NULL); /* empty value: fine */
	CHECK(p && p->count == 1 && p->labels[0].value_len == 0);
	CHECK(pmubpf_labels_new(p, "", "x", NULL) == NULL);
	pmubpf_labels_free(p);
	return true;
}

static bool ids_unique(void)
{
	uint64_t ids[64];
	for (int i = 0; i < 64; i++) {
		const pmubpf_labels *s = pmubpf_labels_new(NULL, "i", "x", NULL);
		CHECK(s && s->id != 0);
		ids[i] = s->id;
		pmubpf_labels_free(s); /* memory reused: ids must not be */
	}
	for (int i = 0; i < 64; i++)
		for (int j = 0; j < i; j++)
			CHECK(ids[i] != ids[j]);
	return true;
}

static bool set_current_restore_nesting(void)
{
	const pmubpf_labels *a = pmubpf_labels_new(NULL, "l", "a", NULL);
	const pmubpf_labels *b = pmubpf_labels_new(a, "l", "b", NULL);
	CHECK(pmubpf_labels_current() == NULL);
	const pmubpf_labels *p0 = pmubpf_labels_set(a);
	CHECK(p0 == NULL);
	CHECK(pmubpf_labels_current() == a);
	CHECK(pmubpf__tls_current == a); /* the word the profiler reads */
	const pmubpf_labels *p1 = pmubpf_labels_set(b);
	CHECK(p1 == a);
	CHECK(pmubpf_labels_current() == b);
	const pmubpf_labels *p2 = pmubpf_labels_set(NULL);
	CHECK(p2 == b);
	CHECK(pmubpf_labels_current() == NULL);
	pmubpf_labels_set(p2);
	CHECK(pmubpf_labels_current() == b);
	pmubpf_labels_set(p1);
	CHECK(pmubpf_labels_current() == a);
	pmubpf_labels_set(p0);
	CHECK(pmubpf_labels_current() == NULL);
	pmubpf_labels_free(b);
	pmubpf_labels_free(a);
	return true;
}

struct do_ctx {
	const pmubpf_labels *inner;
	const pmubpf_labels *seen_outer, *seen_inner, *after_inner;
};

static void do_inner(void *arg)
{
	struct do_ctx *c = arg;
	c->seen_inner = pmubpf_labels_current();
}

static void do_outer(void *arg)
{
	struct do_ctx *c = arg;
	c->seen_outer = pmubpf_labels_current();
	pmubpf_labels_do(c->inner, do_inner, c);
	c->after_inner = pmubpf_labels_current();
}

static bool do_sets_and_restores(void)
{
	const pmubpf_labels *outer = pmubpf_labels_new(NULL, "o", "1", NULL);
	const pmubpf_labels *base = pmubpf_labels_new(NULL, "base", "1", NULL);
	struct do_ctx c = { .inner = pmubpf_labels_new(outer, "i", "2", NULL) };
	pmubpf_labels_set(base);
	pmubpf_labels_do(outer, do_outer, &c);
	CHECK(c.seen_outer == outer);
	CHECK(c.seen_inner == c.inner);
	CHECK(c.after_inner == outer);
	CHECK(pmubpf_labels_current() == base);
	pmubpf_labels_do(NULL, do_inner, &c);
	CHECK(c.seen_inner == NULL);
	CHECK(pmubpf_labels_current() == base);
	pmubpf_labels_do(outer, NULL, NULL); /* NULL fn: set + restore */
	CHECK(pmubpf_labels_current() == base);
	pmubpf_labels_set(NULL);
	pmubpf_labels_free(c.inner);
	pmubpf_labels_free(outer);
	pmubpf_labels_free(base);
	return true;
}

struct thr_ctx {
	const pmubpf_labels *adopt;
	const pmubpf_labels *at_start, *after_set;
};

static void *thr_fn(void *arg)
{
	struct thr_ctx *c = arg;
	c->at_start = pmubpf_labels_current();
	pmubpf_labels_set(c->adopt);
	c->after_set = pmubpf_labels_current();
	return NULL;
}

static bool new_thread_starts_with_none(void)
{
	const pmubpf_labels *a = pmubpf_labels_new(NULL, "who", "main", NULL);
	pmubpf_labels_set(a);
	struct thr_ctx c = { .adopt = pmubpf_labels_current() };
	pthread_t t;
	CHECK(pthread_create(&t, NULL, thr_fn, &c) == 0);
	pthread_join(t, NULL);
	CHECK(c.at_start == NULL);
	CHECK(c.after_set == a);
	CHECK(pmubpf_labels_current() == a); /* the thread's set was its own */
	pmubpf_labels_set(NULL);
	pmubpf_labels_free(a);
	return true;
}

static bool truncation_long_key_value(void)
{
	char key[200], val[1000], k63[64];
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = 0;
	memset(val, 'v', sizeof(val) - 1);
	val[sizeof(val) - 1] = 0;
	memset(k63, 'e', 63);
	k63[63] = 0;

	const pmubpf_labels *exact = pmubpf_labels_new(NULL, k63, "x", NULL);
	CHECK(exact);
	CHECK_EQ_INT(exact->flags, 0);
	CHECK_EQ_INT(exact->labels[0].key_len, 63);
	pmubpf_labels_free(exact);

	const pmubpf_labels *s = pmubpf_labels_new(NULL, key, "short", "v", val, NULL);
	CHECK(s);
	CHECK(s->flags & PMUBPF_LABELS_F_TRUNCATED);
	CHECK_EQ_INT(s->count, 2);
	const char *k = lkey(s, 0);
	CHECK_EQ_INT(strlen(k), 63);
	CHECK(!strncmp(k, key, 60));
	CHECK_STR(k + 60, "...");
	const char *v = lget(s, "v");
	CHECK(v);
	CHECK_EQ_INT(strlen(v), 255);
	CHECK(!strncmp(v, val, 252));
	CHECK_STR(v + 252, "...");
	CHECK_STR(lget(s, k), "short");

	/* The same long key again overrides (keys compare after the cut). */
	const pmubpf_labels *o = pmubpf_labels_new(s, key, "new", NULL);
	CHECK(o && o->count == 2);
	CHECK_STR(lget(o, k), "new");
	CHECK(o->flags & PMUBPF_LABELS_F_TRUNCATED); /* inherited */
	pmubpf_labels_free(o);
	pmubpf_labels_free(s);
	return true;
}

static bool truncation_keeps_utf8_whole(void)
{
	/* 251 'a' then "é" (2 bytes) then more: the cut at 252 would split é */
	char val[300];
	memset(val, 'a', 251);
	memcpy(val + 251, "\xc3\xa9", 2);
	memset(val + 253, 'b', 20);
	val[273] = 0;
	const pmubpf_labels *s = pmubpf_labels_new(NULL, "u", val, NULL);
	CHECK(s && (s->flags & PMUBPF_LABELS_F_TRUNCATED));
	const char *v = lget(s, "u");
	CHECK_EQ_INT(strlen(v), 254);
	CHECK_STR(v + 251, "...");
	pmubpf_labels_free(s);
	return true;
}

static bool truncation_more_than_16(void)
{
	const pmubpf_labels *p = pmubpf_labels_new(NULL,
		"k0", "0", "k1", "1", "k2", "2", "k3", "3", "k4", "4", "k5", "5",
		"k6", "6", "k7", "7", "k8", "8", "k9", "9", NULL);
	CHECK(p && p->count == 10 && p->flags == 0);
	const pmubpf_labels *c = pmubpf_labels_new(p,
		"n0", "0", "n1", "1", "n2", "2", "n3", "3", "n4", "4", "n5", "5",
		"k3", "override", "n6", "6", "n7", "7", NULL);
	CHECK(c);
	CHECK_EQ_INT(c->count, 16);
	CHECK(c->flags & PMUBPF_LABELS_F_TRUNCATED);
	CHECK_STR(lget(c, "k3"), "override"); /* an override still applies */
	CHECK_STR(lget(c, "n5"), "5");
	CHECK(lget(c, "n6") == NULL && lget(c, "n7") == NULL);
	CHECK_STR(lkey(c, 15), "n5");
	/* at 16 an override still works without the flag from this call */
	const pmubpf_labels *full = pmubpf_labels_new(NULL,
		"a", "", "b", "", "c", "", "d", "", "e", "", "f", "", "g", "", "h", "",
		"i", "", "j", "", "k", "", "l", "", "m", "", "n", "", "o", "", "p", "",
		NULL);
	CHECK(full && full->count == 16 && full->flags == 0);
	const pmubpf_labels *f2 = pmubpf_labels_new(full, "p", "x", NULL);
	CHECK(f2 && f2->count == 16 && f2->flags == 0);
	CHECK_STR(lget(f2, "p"), "x");
	pmubpf_labels_free(f2);
	pmubpf_labels_free(full);
	pmubpf_labels_free(c);
	pmubpf_labels_free(p);
	return true;
}

/* ---- reader: a forked child that holds sets ----------------------------- */

struct child {
	pid_t pid;
	int cmd, reply; /* parent -> child, child -> parent */
};

struct child_sets {
	uint64_t addr[4], id[4]; /* 0: req, 1: nested, 2: truncated, 3: to free */
	uint64_t tp;             /* the worker thread's thread pointer */
};

/* Holds its own set current until released. fds: [0] the release pipe,
 * [1] where to send the thread pointer. */
static void *child_worker(void *arg)
{
	int *fds = arg;
	const pmubpf_labels *t = pmubpf_labels_new(NULL, "thread", "worker", NULL);
	pmubpf_labels_set(t);
	uint64_t tp = (uint64_t)(uintptr_t)__builtin_thread_pointer();
	if (write(fds[1], &tp, sizeof(tp)) != sizeof(tp))
		_exit(3);
	char c;
	if (read(fds[0], &c, 1) < 0)
		_exit(4);
	pmubpf_labels_set(NULL);
	pmubpf_labels_free(t);
	return NULL;
}

static void child_main(int cmd, int reply)
{
	char longv[400];
	memset(longv, 'z', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = 0;
	const pmubpf_labels *s[4];
	s[0] = pmubpf_labels_new(NULL, "endpoint", "/render", "req", "1", NULL);
	s[1] = pmubpf_labels_new(s[0], "phase", "b", "endpoint", "/api", NULL);
	s[2] = pmubpf_labels_new(NULL, "long", longv, NULL);
	s[3] = pmubpf_labels_new(NULL, "doomed", "yes", NULL);
	struct child_sets cs;
	for (int i = 0; i < 4; i++) {
		cs.addr[i] = (uint64_t)(uintptr_t)s[i];
		cs.id[i] = s[i]->id;
	}
	int hold[2], tpp[2];
	if (pipe(hold) || pipe(tpp))
		_exit(2);
	int wfds[2] = { hold[0], tpp[1] };
	pthread_t t;
	if (pthread_create(&t, NULL, child_worker, wfds))
		_exit(2);
	if (read(tpp[0], &cs.tp, sizeof(cs.tp)) != sizeof(cs.tp))
		_exit(2);
	if (write(reply, &cs, sizeof(cs)) != sizeof(cs))
		_exit(3);
	char c;
	while (read(cmd, &c, 1) == 1) {
		if (c == 'f' && s[3]) {
			pmubpf_labels_free(s[3]);
			s[3] = NULL;
			if (write(reply, "k", 1) != 1)
				_exit(3);
		} else if (c == 'q') {
			break;
		}
	}
	if (write(hold[1], "r", 1) != 1 || pthread_join(t, NULL))
		_exit(5);
	for (int i = 0; i < 4; i++)
		pmubpf_labels_free(s[i]);
	_exit(0);
}

static bool child_start(struct child *ch, struct child_sets *cs)
{
	int p2c[2], c2p[2];
	if (pipe(p2c) || pipe(c2p))
		return false;
	fflush(stdout);
	ch->pid = fork();
	if (ch->pid < 0)
		return false;
	if (ch->pid == 0) {
		close(p2c[1]);
		close(c2p[0]);
		child_main(p2c[0], c2p[1]);
	}
	close(p2c[0]);
	close(c2p[1]);
	ch->cmd = p2c[1];
	ch->reply = c2p[0];
	size_t got = 0;
	while (got < sizeof(*cs)) {
		ssize_t n = read(ch->reply, (char *)cs + got, sizeof(*cs) - got);
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

static void child_stop(struct child *ch)
{
	if (write(ch->cmd, "q", 1) != 1)
		kill(ch->pid, SIGKILL);
	close(ch->cmd);
	close(ch->reply);
	waitpid(ch->pid, NULL, 0);
}

static bool reader_reads_child_sets(void)
{
	struct child ch;
	struct child_sets cs;
	CHECK(child_start(&ch, &cs));
	bool ok = false;
	const char *why = NULL;
	struct labels_record_info ri;
	struct label_set set;
	int err = labels__read_record(ch.pid, (uint64_t)(uintptr_t)&pmubpf_labels_record,
				      &ri, &why);
	if (err) {
		printf("  read_record: %d %s\n", err, why ? why : "");
		goto out;
	}
	if (ri.version != 1 || ri.tls_offset != pmubpf_labels_record.tls_offset)
		goto out;

	err = labels__read_set(ch.pid, cs.addr[0], cs.id[0], &set, &why);
	if (err || set.n != 2 || set.truncated || set.id != cs.id[0] ||
	    strcmp(set.pairs[0].key, "endpoint") || strcmp(set.pairs[0].value, "/render") ||
	    strcmp(set.pairs[1].key, "req") || strcmp(set.pairs[1].value, "1")) {
		printf("  set 0: %d %s\n", err, why ? why : "");
		goto out;
	}
	err = labels__read_set(ch.pid, cs.addr[1], cs.id[1], &set, &why);
	if (err || set.n != 3 || !pair_get(&set, "phase") ||
	    strcmp(pair_get(&set, "endpoint"), "/api") ||
	    strcmp(pair_get(&set, "req"), "1") || strcmp(pair_get(&set, "phase"), "b")) {
		printf("  set 1: %d %s\n", err, why ? why : "");
		goto out;
	}
	err = labels__read_set(ch.pid, cs.addr[2], cs.id[2], &set, &why);
	if (err || set.n != 1 || !set.truncated || strlen(set.pairs[0].value) != 255 ||
	    strcmp(set.pairs[0].value + 252, "...")) {
		printf("  set 2: %d %s\n", err, why ? why : "");
		goto out;
	}
	ok = true;
out:
	child_stop(&ch);
	CHECK(ok);
	return true;
}

/* What BPF does: thread pointer + tls_offset -> word -> 8-byte id. */
static bool reader_follows_tls_word_like_bpf(void)
{
	struct child ch;
	struct child_sets cs;
	CHECK(child_start(&ch, &cs));
	bool ok = false;
	struct labels_record_info ri;
	struct label_set set;
	uint64_t word = 0, id = 0;
	if (labels__read_record(ch.pid, (uint64_t)(uintptr_t)&pmubpf_labels_record,
				&ri, NULL))
		goto out;
	uint64_t slot = cs.tp + (uint64_t)ri.tls_offset;
	struct iovec l = { &word, 8 }, r = { (void *)(uintptr_t)slot, 8 };
	if (process_vm_readv(ch.pid, &l, 1, &r, 1, 0) != 8 || !word)
		goto out;
	l.iov_base = &id;
	r.iov_base = (void *)(uintptr_t)word;
	if (process_vm_readv(ch.pid, &l, 1, &r, 1, 0) != 8 || !id)
		goto out;
	if (labels__read_set(ch.pid, word, id, &set, NULL) || set.n != 1 ||
	    strcmp(set.pairs[0].key, "thread") || strcmp(set.pairs[0].value, "worker"))
		goto out;
	ok = true;
out:
	child_stop(&ch);
	CHECK(ok);
	return true;
}

static bool reader_stale_and_freed(void)
{
	struct child ch;
	struct child_sets cs;
	CHECK(child_start(&ch, &cs));
	bool ok = false;
	struct label_set set;
	const char *why = NULL;
	char c;
	/* wrong id at a live set */
	if (labels__read_set(ch.pid, cs.addr[0], cs.id[0] + 1, &set, &why) != -ESTALE)
		goto out;
	/* another live set's id at this address (reuse) */
	if (labels__read_set(ch.pid, cs.addr[0], cs.id[1], &set, &why) != -ESTALE)
		goto out;
	if (labels__read_set(ch.pid, cs.addr[3], cs.id[3], &set, &why) != 0)
		goto out;
	if (write(ch.cmd, "f", 1) != 1 ||
	    read(ch.reply, &c, 1) != 1)
		goto out;
	int err = labels__read_set(ch.pid, cs.addr[3], cs.id[3], &set, &why);
	if (err != -ESTALE && err != -EFAULT) {
		printf("  freed set: %d %s\n", err, why ? why : "");
		goto out;
	}
	if (labels__read_set(ch.pid, cs.addr[0], 0, &set, &why) != -EINVAL)
		goto out;
	ok = true;
out:
	child_stop(&ch);
	CHECK(ok);
	return true;
}

static bool reader_dead_pid(void)
{
	fflush(stdout);
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	struct labels_record_info ri;
	CHECK_EQ_INT(labels__read_record(pid, (uint64_t)(uintptr_t)&pmubpf_labels_record,
					 &ri, NULL), -ESRCH);
	return true;
}

/* ---- reader: hostile memory (read from ourselves) ----------------------- */

static bool hostile_records(void)
{
	pid_t me = getpid();
	struct labels_record_info ri;
	const char *why = NULL;
	struct pmubpf_labels_record f;
	uint64_t fa = (uint64_t)(uintptr_t)&f;

	f = pmubpf_labels_record;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), 0);
	CHECK(why == NULL);

	f.magic ^= 1;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EPROTO);
	CHECK_STR(why, "bad record magic");
	f = pmubpf_labels_record;
	f.version = 2;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EPROTO);
	CHECK_STR(why, "unsupported record version");
	f = pmubpf_labels_record;
	f.size = 0xffffffffu;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EPROTO);
	CHECK_STR(why, "bad record size");
	f.size = 8;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EPROTO);
	f = pmubpf_labels_record;
	f.max_labels = 1000;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EPROTO);
	CHECK_STR(why, "unsupported set layout");
	f = pmubpf_labels_record;
	f.ready = 0;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EAGAIN);
	f.ready = 7;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EPROTO);
	f = pmubpf_labels_record;
	f.tls_offset = -3;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EPROTO);
	f.tls_offset = (int64_t)1 << 40;
	CHECK_EQ_INT(labels__read_record(me, fa, &ri, &why), -EPROTO);
	CHECK_STR(why, "implausible tls_offset");

	CHECK_EQ_INT(labels__read_record(me, 0x10, &ri, &why), -EFAULT);
	CHECK_EQ_INT(labels__read_record(me, 0, &ri, &why), -EFAULT);
	CHECK_EQ_INT(labels__read_record(me, UINT64_MAX - 7, &ri, &why), -EFAULT);
	CHECK_EQ_INT(labels__read_record(me, fa + 1, &ri, &why), -EPROTO);
	return true;
}

/* An 8-aligned copy of a real set that the tests then corrupt. */
static union {
	uint64_t align;
	unsigned char b[PMUBPF_LABELS_SET_MAX_SIZE + 64];
} fake;

static struct pmubpf_labels *fake_set(const pmubpf_labels *from)
{
	memcpy(fake.b, from, from->total_size);
	return (struct pmubpf_labels *)fake.b;
}

static bool hostile_sets(void)
{
	pid_t me = getpid();
	struct label_set set;
	const char *why = NULL;
	uint64_t fa = (uint64_t)(uintptr_t)fake.b;
	const pmubpf_labels *real = pmubpf_labels_new(NULL, "key", "value", "k2", "v2", NULL);
	CHECK(real);
	uint64_t id = real->id;
	struct pmubpf_labels *f;

	f = fake_set(real);
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), 0);
	CHECK(set.n == 2 && !strcmp(set.pairs[1].value, "v2"));

	f = fake_set(real);
	f->count = 1000;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "too many labels");
	f = fake_set(real);
	f->count = 17;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);

	f = fake_set(real); /* value not terminated: NUL overwritten */
	fake.b[f->labels[0].value_off + f->labels[0].value_len] = 'X';
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "label string not NUL-terminated");
	f = fake_set(real); /* last string runs to the end of the set */
	fake.b[f->total_size - 1] = 'X';
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	f = fake_set(real); /* length claims more than is there */
	f->labels[1].value_len = 200;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "label string out of bounds");
	f = fake_set(real);
	f->labels[0].key_len = 300;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "label string too long");
	f = fake_set(real); /* offset into the header */
	f->labels[0].key_off = 10;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	f = fake_set(real);
	f->labels[0].key_off = 0xffff;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	f = fake_set(real); /* NUL inside */
	fake.b[f->labels[0].key_off + 1] = 0;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "NUL inside a label string");
	f = fake_set(real); /* duplicate key: both refs at the same string */
	f->labels[1].key_off = f->labels[0].key_off;
	f->labels[1].key_len = f->labels[0].key_len;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "duplicate label key");
	f = fake_set(real); /* empty key: the writer refuses one, so must we */
	f->labels[1].key_len = 0;
	fake.b[f->labels[1].key_off] = 0;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "empty label key");
	f = fake_set(real);
	f->total_size = 0xffffffffu;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "bad set size");
	f->total_size = 100;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	f = fake_set(real);
	f->magic = 0x12345678;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -EPROTO);
	CHECK_STR(why, "bad set magic");
	f->magic = 0;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -ESTALE);
	f = fake_set(real);
	f->id = 0;
	CHECK_EQ_INT(labels__read_set(me, fa, id, &set, &why), -ESTALE);

	CHECK_EQ_INT(labels__read_set(me, 0x10, id, &set, &why), -EFAULT);
	CHECK_EQ_INT(labels__read_set(me, UINT64_MAX - 7, id, &set, &why), -EFAULT);
	CHECK_EQ_INT(labels__read_set(me, fa + 4, id, &set, &why), -EPROTO);

	/* Header readable, strings on an unmapped page: -EFAULT. */
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	CHECK(munmap(m + pg, (size_t)pg) == 0);
	unsigned char *at = m + pg - PMUBPF_LABELS_SET_HEADER_SIZE;
	memcpy(at, real, PMUBPF_LABELS_SET_HEADER_SIZE);
	int err = labels__read_set(me, (uint64_t)(uintptr_t)at, id, &set, &why);
	munmap(m, (size_t)pg);
	CHECK_EQ_INT(err, -EFAULT);

	pmubpf_labels_free(real);
	return true;
}

/* pmubpf's own label names are reserved: a program's pid, tid, comm or
 * pmubpf_* label is renamed, into names no other program key can have. */
static bool reserved_keys_renamed(void)
{
	char buf[LABELS_PROFILE_KEY_MAX], buf2[LABELS_PROFILE_KEY_MAX];
	char longkey[LABELS_KEY_MAX];
	const char *own[] = { "pid", "tid", "comm", "cgroup", "container_id", "pod_uid", "systemd_unit",
			      "pmubpf_labels", "pmubpf_app_pid" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		CHECK(labels__key_reserved(own[i]));
		CHECK(labels__profile_key(own[i], buf) == buf);
		CHECK(!strncmp(buf, LABELS_APP_PREFIX, strlen(LABELS_APP_PREFIX)));
		CHECK_STR(buf + strlen(LABELS_APP_PREFIX), own[i]);
		CHECK(labels__key_reserved(buf)); /* never meets an unreserved key */
	}
	const char *app[] = { "phase", "pids", "Pid", "app_pid", "pmubpf", "" };
	for (size_t i = 0; i < sizeof(app) / sizeof(app[0]); i++) {
		CHECK(!labels__key_reserved(app[i]));
		CHECK(labels__profile_key(app[i], buf) == app[i]);
	}
	/* The longest key a set can hold still fits, whole. */
	memset(longkey, 'k', sizeof(longkey) - 1);
	memcpy(longkey, "pmubpf_", 7);
	longkey[sizeof(longkey) - 1] = '\0';
	CHECK_EQ_INT(strlen(labels__profile_key(longkey, buf)),
		     strlen(LABELS_APP_PREFIX) + LABELS_KEY_MAX - 1);
	/* Distinct reserved keys stay distinct. */
	CHECK(strcmp(labels__profile_key("pid", buf), labels__profile_key("tid", buf2)));
	return true;
}

TEST_MAIN("labels",
	TEST(reserved_keys_renamed),
	TEST(record_valid_before_first_call),
	TEST(tls_offset_same_in_threads),
	TEST(new_basic),
	TEST(new_parent_override),
	TEST(odd_args_null),
	TEST(empty_key_null),
	TEST(ids_unique),
	TEST(set_current_restore_nesting),
	TEST(do_sets_and_restores),
	TEST(new_thread_starts_with_none),
	TEST(truncation_long_key_value),
	TEST(truncation_keeps_utf8_whole),
	TEST(truncation_more_than_16),
	TEST(reader_reads_child_sets),
	TEST(reader_follows_tls_word_like_bpf),
	TEST(reader_stale_and_freed),
	TEST(reader_dead_pid),
	TEST(hostile_records),
	TEST(hostile_sets))
