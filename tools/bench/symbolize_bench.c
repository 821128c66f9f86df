/* symbolize_bench.c — how fast and how big pmubpf's symbolizer is, next
 * to eu-addr2line and GNU addr2line on the same addresses.
 *
 * Usage: symbolize_bench FILE [N] [SEED]
 * Picks N (default 100000) random addresses inside FILE's executable
 * PT_LOAD segments, then symbolizes them three times, each in a child
 * process whose wall time and peak RSS (wait4) are measured:
 *   pmubpf:       elfsym + debuginfo + dwarf + demangle, as a profile's
 *                 locations are (inline frames included, names demangled)
 *   eu-addr2line: -f -i -C -e FILE, the addresses on stdin
 *   addr2line:    -f -i -C -e FILE (binutils), the addresses on stdin
 * and prints one markdown table row per tool:
 *   | FILE | tool | seconds | addresses/s | peak RSS MiB | named |
 * "named": addresses whose outermost function got a name (for the
 * addr2line tools: first function line per address not "??").
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "symbols/debuginfo.h"
#include "symbols/demangle.h"
#include "symbols/dwarf.h"
#include "symbols/elfsym.h"

struct seg { uint64_t lo, hi; };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int exec_segments(const char *path, struct seg *segs, int max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	size_t phnum = 0;
	Elf *e;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (e && elf_getphdrnum(e, &phnum) == 0) {
		for (size_t i = 0; i < phnum && n < max; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X) && ph.p_memsz)
				segs[n++] = (struct seg){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz };
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return n;
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Our symbolizer, in the child: returns how many got a name. */
static long run_ours(const char *path, const uint64_t *pcs, long n)
{
	struct symcache *c = symcache__new();
	struct debuginfo *dbg = debuginfo__new(NULL, 0);
	struct elfobj *o = c ? symcache__get_path(c, path) : NULL;
	struct dwarf_frame f[DWARF_MAX_FRAMES];
	long named = 0;
	size_t chars = 0;

	if (!o || !dbg)
		return -1;
	debuginfo__note(dbg, o, open(path, O_RDONLY | O_CLOEXEC), 0, path, false);
	for (long i = 0; i < n; i++) {
		int k = dwarf__lookup(debuginfo__dwarf(o), pcs[i], f, DWARF_MAX_FRAMES);
		const struct elfsym *s = debuginfo__symbol(o, pcs[i]);
		const char *name = k > 0 && f[k - 1].linkage_name ? f[k - 1].linkage_name
				 : k > 0 && f[k - 1].name ? f[k - 1].name : s ? s->name : NULL;
		char *d = demangle(name);

		for (int j = 0; j + 1 < k; j++) { /* inlined frames: demangle too */
			char *di = demangle(f[j].linkage_name);
			chars += di ? strlen(di) : 0;
			free(di);
		}
		named += name != NULL;
		chars += d ? strlen(d) : name ? strlen(name) : 0;
		free(d);
	}
	symcache__free(c);
	debuginfo__free(dbg);
	return chars ? named : named; /* chars keeps the work observable */
}

/* Count addresses whose first function line is not "??". */
static long count_named(const char *out_path, long n)
{
	FILE *f = fopen(out_path, "r");
	char line[8192];
	long named = 0, addr = 0;
	bool want_func = true;

	if (!f)
		return -1;
	/* Output per address: "0x..." echo line (-a), then pairs. */
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "0x", 2)) {
			addr++;
			want_func = true;
			continue;
		}
		if (want_func) {
			named += strncmp(line, "??", 2) != 0;
			want_func = false;
		}
	}
	fclose(f);
	return addr == n ? named : -addr;
}

static void row(const char *file, const char *tool, double secs, long n,
		const struct rusage *ru, long named)
{
	printf("| %s | %s | %.2f | %.0f | %.0f | %ld of %ld |\n", file, tool, secs,
	       secs > 0 ? (double)n / secs : 0, (double)ru->ru_maxrss / 1024.0, named, n);
	fflush(stdout);
}

/* Run a tool on the addresses; wall time and peak RSS of the child. */
static void run_tool(const char *file, const char *tool, const char *in_path,
		     const char *out_path, long n)
{
	struct rusage ru;
	int status;
	double t0 = now();
	pid_t pid = fork();

	if (pid == 0) {
		int in = open(in_path, O_RDONLY), out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0)
			_exit(127);
		execlp(tool, tool, "-a", "-f", "-i", "-C", "-e", file, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return;
	double secs = now() - t0;
	/* eu-addr2line exits 1 when some address has no answer: still a run. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
		printf("| %s | %s | failed (status %d) | | | |\n", file, tool, status);
		return;
	}
	row(file, tool, secs, n, &ru, count_named(out_path, n));
}

int main(int argc, char **argv)
{
	struct seg segs[16];
	long n = argc > 2 ? atol(argv[2]) : 100000;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 0x5eed, total = 0;
	char in_path[] = "/tmp/pmubpf-symbench.XXXXXX", out_path[64];
	int nseg, fd;

	if (argc < 2 || n <= 0) {
		fprintf(stderr, "usage: symbolize_bench FILE [N] [SEED]\n");
		return 2;
	}
	nseg = exec_segments(argv[1], segs, 16);
	if (nseg <= 0) {
		fprintf(stderr, "symbolize_bench: %s: no executable segment\n", argv[1]);
		return 1;
	}
	for (int i = 0; i < nseg; i++)
		total += segs[i].hi - segs[i].lo;
	uint64_t *pcs = malloc((size_t)n * sizeof(*pcs));
	if (!pcs || (fd = mkstemp(in_path)) < 0)
		return 1;
	FILE *in = fdopen(fd, "w");
	for (long i = 0; i < n; i++) {
		uint64_t r = rng(&seed) % total;
		int s = 0;
		while (r >= segs[s].hi - segs[s].lo)
			r -= segs[s].hi - segs[s].lo, s++;
		pcs[i] = segs[s].lo + r;
		fprintf(in, "0x%llx\n", (unsigned long long)pcs[i]);
	}
	fclose(in);
	snprintf(out_path, sizeof(out_path), "%s.out", in_path);

	/* Ours, in a child like the others, so its RSS is its own. */
	struct rusage ru;
	int status, pipefd[2];
	long named = -1;
	double t0 = now();
	if (pipe(pipefd))
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		long r = run_ours(argv[1], pcs, n);
		if (write(pipefd[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(r < 0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &named, sizeof(named)) != sizeof(named))
		named = -1;
	wait4(pid, &status, 0, &ru);
	row(argv[1], "pmubpf", now() - t0, n, &ru, named);
	run_tool(argv[1], "eu-addr2line", in_path, out_path, n);
	run_tool(argv[1], "addr2line", in_path, out_path, n);
	unlink(in_path);
	unlink(out_path);
	free(pcs);
	return 0;
}
