/* fuzz.h — helpers shared by the libFuzzer targets in tests/fuzz/.
 *
 * Parsers take text (NUL-terminated), fields (argv, sysfs files) or
 * files (kallsyms): these turn the fuzzer's bytes into those shapes
 * without adding checks the parsers themselves should make.
 */
#ifndef PMUBPF_FUZZ_H
#define PMUBPF_FUZZ_H
#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A NUL-terminated copy of the input (embedded NULs stay: the parser
 * sees the text up to the first one, as it would a file with a NUL). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Split buf (NUL-terminated, modified in place) at every sep into at most
 * max fields; the last field keeps any further separators. */
static inline int fuzz_split(char *buf, char sep, char **fields, int max)
{
	int n = 0;

	while (n < max) {
		fields[n++] = buf;
		if (n == max || !(buf = strchr(buf, sep)))
			break;
		*buf++ = '\0';
	}
	return n;
}

/* An error message must be there and be one line. Messages may quote the
 * input, and an input with control characters is quoted as given (the
 * printer, main.c, makes those printable): only the parser's own words
 * are checked then. */
static inline bool fuzz_bad_err(const char *err, const uint8_t *in, size_t n)
{
	if (!err[0])
		return true;
	for (size_t i = 0; i < n; i++)
		if ((in[i] && in[i] < 0x20) || in[i] == 0x7f) /* NUL: a separator */
			return false;
	return strchr(err, '\n') != NULL;
}

/* ---- a fake sysfs PMU tree (events, CLI, HTTP targets) ---------------- */

static char fuzz_sysfs_dir[256];

static inline int fuzz_rm(const char *path, const struct stat *st, int flag,
			  struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(path);
}

static inline void fuzz_sysfs_cleanup(void)
{
	if (fuzz_sysfs_dir[0])
		nftw(fuzz_sysfs_dir, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write root/rel (its directories made), content plus a newline. */
static inline void fuzz_put(const char *root, const char *rel, const char *content,
			    size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = strchr(path + strlen(root) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			abort();
		*s = '/';
	}
	f = fopen(path, "w");
	if (!f || fwrite(content, 1, len, f) != len || fputc('\n', f) == EOF || fclose(f))
		abort();
}

/* The tree, made once per process and removed at exit: a "cpu" PMU with
 * Intel-like formats and aliases, a "software" PMU, an "odd" one with a
 * split field, a full-width field and a malformed format. In $TMPDIR,
 * else /dev/shm where there is one (the pmu_sysfs target rewrites files
 * per input); a run killed by a crash leaves it behind. */
static inline const char *fuzz_sysfs(void)
{
	static const char *const files[][2] = {
		{ "cpu/type", "4" },
		{ "cpu/format/event", "config:0-7" },
		{ "cpu/format/umask", "config:8-15" },
		{ "cpu/format/cmask", "config:24-31" },
		{ "cpu/format/inv", "config:23" },
		{ "cpu/format/ldlat", "config1:0-15" },
		{ "cpu/events/cache-misses", "event=0x2e,umask=0x41" },
		{ "cpu/events/loop", "loop" },
		{ "cpu/events/nest", "cache-misses,inv" },
		{ "software/type", "1" },
		{ "odd/type", "42" },
		{ "odd/format/split", "config2:0-3,8-11" },
		{ "odd/format/wide", "config:0-63" },
		{ "odd/format/bad", "confi:0-7" },
	};

	if (fuzz_sysfs_dir[0])
		return fuzz_sysfs_dir;
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(fuzz_sysfs_dir, sizeof(fuzz_sysfs_dir), "%s/pmubpf-fuzz-sysfs.XXXXXX", tmp);
	if (!mkdtemp(fuzz_sysfs_dir))
		abort();
	atexit(fuzz_sysfs_cleanup);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		fuzz_put(fuzz_sysfs_dir, files[i][0], files[i][1], strlen(files[i][1]));
	return fuzz_sysfs_dir;
}

#endif
