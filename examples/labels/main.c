/* main.c — a small example of pmubpf labels: a fake request loop whose CPU
 * time pmubpf attributes to endpoint=/render|/api and phase=parse|render|
 * compress (see README.md next to it).
 *
 *   gcc -O2 -g -fno-omit-frame-pointer -Iinclude examples/labels/main.c \
 *       -lpthread -o labels-example
 *   ./labels-example [REQUESTS]
 */
#include <pmubpf/labels.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static void burn(unsigned long n) /* stand-in for real work */
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n * 100000; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	sink = x;
}

/* A helper thread does half of the rendering. New threads start with no
 * labels: it adopts the set its creator had current. */
static void *render_helper(void *labels)
{
	pmubpf_labels_set((const pmubpf_labels *)labels);
	burn(20);
	pmubpf_labels_set(NULL);
	return NULL;
}

static void render(void *req)
{
	(void)req;
	pthread_t helper;
	int threaded = pthread_create(&helper, NULL, render_helper,
				      (void *)pmubpf_labels_current()) == 0;
	burn(20);

	/* Nested: same labels, phase overridden for the compress step. */
	const pmubpf_labels *compress =
		pmubpf_labels_new(pmubpf_labels_current(), "phase", "compress", NULL);
	const pmubpf_labels *prev = pmubpf_labels_set(compress);
	burn(10);
	pmubpf_labels_set(prev);

	if (threaded)
		pthread_join(helper, NULL);
	pmubpf_labels_free(compress); /* no thread has it current any more */
}

static void handle(const pmubpf_labels *endpoint, int n)
{
	/* endpoint's labels plus the phase; a set is cheap to make, and
	 * setting one is two plain stores. */
	const pmubpf_labels *parse = pmubpf_labels_new(endpoint, "phase", "parse", NULL);
	const pmubpf_labels *rend = pmubpf_labels_new(endpoint, "phase", "render", NULL);

	const pmubpf_labels *prev = pmubpf_labels_set(parse);
	burn(10);
	pmubpf_labels_set(prev);

	pmubpf_labels_do(rend, render, &n); /* set, call, restore */

	pmubpf_labels_free(parse);
	pmubpf_labels_free(rend);
}

int main(int argc, char **argv)
{
	int requests = argc > 1 ? atoi(argv[1]) : 200;
	/* Long-lived sets, one per endpoint, made once. */
	const pmubpf_labels *ep_render = pmubpf_labels_new(NULL, "endpoint", "/render",
							   "service", "example", NULL);
	const pmubpf_labels *ep_api = pmubpf_labels_new(NULL, "endpoint", "/api",
							"service", "example", NULL);
	if (!ep_render || !ep_api)
		return 1;
	for (int i = 0; i < requests; i++)
		handle(i % 4 ? ep_render : ep_api, i); /* 3 /render per /api */
	printf("handled %d requests\n", requests);
	pmubpf_labels_free(ep_render);
	pmubpf_labels_free(ep_api);
	return 0;
}
