/* ksymnames.c — see ksymnames.h. */
#include "ksymnames.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "pmubpf_abi.h"
#include "ksymnames.skel.h"

struct ksymnames {
	struct ksymnames_bpf *skel;
	pthread_mutex_t lock; /* one batch in .bss at a time */
};

struct ksymnames *ksymnames__open(void)
{
	const char *env = getenv("PMUBPF_KALLSYMS");
	struct ksymnames *kn;
	int err;

	if (env && *env && strcmp(env, "0")) {
		errno = ENOTSUP;
		return NULL;
	}
	kn = calloc(1, sizeof(*kn));
	if (!kn)
		return NULL;
	kn->skel = ksymnames_bpf__open_and_load();
	if (!kn->skel || !kn->skel->bss) {
		err = errno ? errno : ENOTSUP;
		ksymnames_bpf__destroy(kn->skel);
		free(kn);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&kn->lock, NULL);
	return kn;
}

void ksymnames__close(struct ksymnames *kn)
{
	if (!kn)
		return;
	ksymnames_bpf__destroy(kn->skel);
	pthread_mutex_destroy(&kn->lock);
	free(kn);
}

/* BPF code (programs, trampolines, dispatchers) has no module to %pS;
 * kallsyms lists it as [bpf], and so do the profiles either way. */
static void bpf_module(struct ksym_text *t)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trampoline_", "bpf_dispatcher_" };

	if (t->module)
		return;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (t->name_len > strlen(prefixes[i]) && !strncmp(t->name, prefixes[i], strlen(prefixes[i]))) {
			t->module = "bpf";
			t->mod_len = 3;
			return;
		}
}

/* Name addrs[0..n) (n <= PMUBPF_KSYM_BATCH) into b: 0 or -errno. */
static int name_batch(struct ksymnames *kn, const uint64_t *addrs, size_t n, struct ksyms_builder *b)
{
	struct ksymnames_bpf__bss *bss = kn->skel->bss;
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err = 0;

	memcpy(bss->ksym_addrs, addrs, n * sizeof(*addrs));
	bss->ksym_n = (__u32)n;
	if (bpf_prog_test_run_opts(bpf_program__fd(kn->skel->progs.ksym_names), &opts))
		return -errno;
	for (size_t i = 0; !err && i < n; i++) {
		struct ksym_text t;
		char *text = bss->ksym_text[i];

		text[PMUBPF_KSYM_LEN - 1] = '\0';
		if (ksyms__parse_symbolic(text, addrs[i], &t)) {
			bpf_module(&t);
			err = ksyms__builder_add(b, &t);
		}
	}
	return err;
}

struct ksyms *ksymnames__table(void *ctx, const uint64_t *addrs, size_t n)
{
	struct ksymnames *kn = ctx;
	struct ksyms_builder *b = ksyms__builder();
	int err = b ? 0 : -ENOMEM;

	pthread_mutex_lock(&kn->lock);
	for (size_t i = 0; !err && i < n; i += PMUBPF_KSYM_BATCH)
		err = name_batch(kn, addrs + i, n - i < PMUBPF_KSYM_BATCH ? n - i : PMUBPF_KSYM_BATCH, b);
	pthread_mutex_unlock(&kn->lock);
	if (err) {
		ksyms__builder_free(b);
		errno = -err;
		return NULL;
	}
	return ksyms__build(b);
}
