/* datafaults.c — a workload that faults known numbers of fresh pages into
 * four kinds of data, for --data-addr (tests/integration/dataaddr.sh):
 * two globals in .bss (glob_a, glob_b), a heap buffer (brk: [heap]) and
 * a private mapping of a file it creates, DIR/datafaults.dat.
 *
 * Every page is written once, in a shuffled order across the four, so
 * each write is one minor fault (anonymous and private-file write faults
 * map one page; transparent huge pages are refused with madvise). The
 * ground truth is the number of pages of each, written as "truth NAME
 * PAGES" lines to DIR/truth: NAME is the data frame pmubpf should name
 * (glob_a, glob_b, [heap], the file's path).
 *
 * pmubpf names a data mapping from the process's maps as it read them
 * while the process lived (at first sight, at the kernel's mmap reports,
 * at the scheduled re-reads): on a loaded machine its loop can run late,
 * so the workload keeps its mappings for half a second after the faults.
 *
 * Usage: datafaults DIR
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096
#define NA 1200
#define NB 600
#define NH 800
#define NF 400

char glob_a[NA * PAGE] __attribute__((aligned(PAGE)));
char glob_b[NB * PAGE] __attribute__((aligned(PAGE)));

static __attribute__((noinline)) void touch(volatile char *p)
{
	*p = 1;
}

int main(int argc, char **argv)
{
	static char *pages[NA + NB + NH + NF];
	char path[4096], truth[4096];
	size_t n = 0;
	FILE *t;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: datafaults DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/datafaults.dat", argv[1]);
	snprintf(truth, sizeof(truth), "%s/truth", argv[1]);
	/* The heap buffer from brk, not an mmap of its own. */
	mallopt(M_MMAP_THRESHOLD, 256 << 20);
	mallopt(M_TOP_PAD, 0);
	char *heap = malloc((NH + 1) * PAGE);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (!heap || fd < 0 || ftruncate(fd, (off_t)NF * PAGE)) {
		perror("datafaults");
		return 1;
	}
	char *file = mmap(NULL, (size_t)NF * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (file == MAP_FAILED) {
		perror("datafaults: mmap");
		return 1;
	}
	char *heap_page = (char *)(((uintptr_t)heap + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	madvise(glob_a, sizeof(glob_a), MADV_NOHUGEPAGE);
	madvise(glob_b, sizeof(glob_b), MADV_NOHUGEPAGE);
	madvise(heap_page, (size_t)NH * PAGE, MADV_NOHUGEPAGE);
	for (int i = 0; i < NA; i++)
		pages[n++] = glob_a + (size_t)i * PAGE;
	for (int i = 0; i < NB; i++)
		pages[n++] = glob_b + (size_t)i * PAGE;
	for (int i = 0; i < NH; i++)
		pages[n++] = heap_page + (size_t)i * PAGE;
	for (int i = 0; i < NF; i++)
		pages[n++] = file + (size_t)i * PAGE;
	srand(12345);
	for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
		size_t j = (size_t)rand() % (i + 1);
		char *x = pages[i];

		pages[i] = pages[j];
		pages[j] = x;
	}
	for (size_t i = 0; i < n; i++)
		touch(pages[i]);
	t = fopen(truth, "w");
	if (!t) {
		perror("datafaults: truth");
		return 1;
	}
	fprintf(t, "truth glob_a %d\ntruth glob_b %d\ntruth [heap] %d\ntruth %s %d\n",
		NA, NB, NH, path, NF);
	fclose(t);
	usleep(500000);
	return 0;
}
