/* windows.c — see windows.h. */
#include "windows.h"
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/grow.h"
#include "pmubpf_abi.h"

int windows__flip(const struct windows *w, uint32_t *closed, char *err, size_t errlen)
{
	uint32_t old = __atomic_load_n(w->window, __ATOMIC_ACQUIRE) & 1, zero = 0;

	__atomic_store_n(w->window, old ^ 1, __ATOMIC_RELEASE);
	/* Returns after synchronize_rcu(): every sample that read `old`
	 * has finished writing it. */
	if (bpf_map_update_elem(w->grace_fd, &zero, &w->grace_inner_fd, BPF_ANY)) {
		int e = errno;

		snprintf(err, errlen, "waiting for the samples of the closing window: %s", strerror(e));
		return -e;
	}
	*closed = old;
	return 0;
}

int windows__empty_map(int fd, size_t key_size)
{
	/* Keys first, then delete: deleting while walking makes
	 * get_next_key restart from the first bucket each time. */
	size_t n = 0, cap = 0;
	char *keys = NULL, *k = malloc(key_size);
	int ret = 0;

	if (!k)
		return -ENOMEM;
	while (bpf_map_get_next_key(fd, n ? keys + (n - 1) * key_size : NULL, k) == 0) {
		void *v = keys;

		ret = grow__reserve(&v, &cap, n, 1, key_size, SIZE_MAX);
		keys = v;
		if (ret)
			goto out;
		memcpy(keys + n * key_size, k, key_size);
		n++;
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, keys + i * key_size) && errno != ENOENT) {
			ret = -errno;
			break;
		}
out:
	free(keys);
	free(k);
	return ret;
}

int windows__clear(const struct windows *w, uint32_t win)
{
	struct pmubpf_drop_val *zeros;
	int ret;

	win &= 1;
	ret = windows__empty_map(w->counts_fd[win], sizeof(struct pmubpf_key));
	if (!ret && w->data)
		ret = windows__empty_map(w->data_fd[win], sizeof(struct pmubpf_data_key));
	if (!ret)
		ret = windows__empty_map(w->stacks_fd[win], sizeof(uint64_t));
	if (ret)
		return ret;
	zeros = calloc(w->nr_cpus, sizeof(*zeros));
	if (!zeros)
		return -ENOMEM;
	for (uint32_t ev = 0; ev < PMUBPF_MAX_EVENTS && !ret; ev++)
		for (uint32_t r = 0; r < PMUBPF_DROP__MAX; r++) {
			uint32_t idx = PMUBPF_DROP_INDEX(win, ev, r);

			if (bpf_map_update_elem(w->drops_fd, &idx, zeros, BPF_ANY)) {
				ret = -errno;
				break;
			}
		}
	if (!ret && w->stacks_new_fd >= 0 &&
	    bpf_map_update_elem(w->stacks_new_fd, &win, zeros, BPF_ANY)) /* 8 bytes a CPU */
		ret = -errno;
	free(zeros);
	return ret;
}

int windows__stacks_stored(const struct windows *w, uint32_t win, uint64_t *n)
{
	uint64_t *v = calloc(w->nr_cpus > 0 ? w->nr_cpus : 1, sizeof(*v));
	int ret = 0;

	*n = 0;
	win &= 1;
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(w->stacks_new_fd, &win, v))
		ret = -errno;
	for (int c = 0; !ret && c < w->nr_cpus; c++)
		*n += v[c];
	free(v);
	return ret;
}
