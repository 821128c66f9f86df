/* main_dl.c — labels.h in the main program and in a dlopen()ed library
 * (libtu2.so): both must use one TLS word, record and counter. The program
 * is linked with -rdynamic (see the header's LINKING section). argv[1]:
 * the library's path. */
#include <dlfcn.h>
#include <pmubpf/labels.h>
#include "check.h"

#define SYM(name) (*(void **)&t.name = dlsym(h, "tu2_" #name)) == NULL

int main(int argc, char **argv)
{
	struct lc_tu2 t;
	void *h;
	if (argc < 2)
		LC_FAIL("usage: main_dl LIB");
	/* a set current before the library is loaded stays visible to it */
	const pmubpf_labels *before = pmubpf_labels_new(NULL, "when", "before dlopen", NULL);
	pmubpf_labels_set(before);
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h)
		LC_FAIL("dlopen: %s", dlerror());
	if (SYM(tls_addr) || SYM(record_addr) || SYM(counter_addr) ||
	    (*(void **)&t.make = dlsym(h, "tu2_new")) == NULL || SYM(set) || SYM(current))
		LC_FAIL("dlsym: %s", dlerror());
	if (t.current() != before)
		LC_FAIL("library does not see the set current before dlopen");
	pmubpf_labels_set(NULL);
	pmubpf_labels_free(before);
	if (lc_check(&t))
		return 1;
	dlclose(h);
	return 0;
}
