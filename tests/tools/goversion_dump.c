/* goversion_dump — what pmubpf's Go table says for a binary (goversion.c):
 * "go1.19.8 m=48 curg=192 labels=360 g_tls=-8 layout=map", for
 * tests/integration/golabels.sh to compare with the binary's own DWARF
 * (tests/tools/gooffsets). Exit 1 with the reason if pmubpf refuses it. */
#include <stdio.h>
#include <string.h>
#include "procs/goversion.h"

int main(int argc, char **argv)
{
	struct go_info gi;
	const char *why = NULL;
	int err;

	if (argc != 2) {
		fprintf(stderr, "usage: goversion_dump BINARY\n");
		return 2;
	}
	err = goversion__read(argv[1], &gi, &why, NULL);
	if (err) {
		fprintf(stderr, "goversion_dump: %s: %s (%s) %s\n", argv[1], strerror(-err),
			why ? why : "", gi.version);
		return 1;
	}
	printf("%s m=%u curg=%u labels=%u g_tls=%lld layout=%s\n", gi.version, gi.slot.g_m,
	       gi.slot.m_curg, gi.slot.g_labels, (long long)gi.slot.g_tls,
	       gi.slot.layout == PMUBPF_GO_MAP ? "map" : "slice");
	return 0;
}
