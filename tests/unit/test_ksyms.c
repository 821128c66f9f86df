/* test_ksyms.c — unit tests of user/symbols/ksyms.c and
 * user/record/ksymnames.c.
 *
 * A small file in /proc/kallsyms format (unsorted, with module symbols,
 * data symbols and junk) checks parsing and lookup boundaries; an
 * all-zero file checks the kptr_restrict case; then, as root, the real
 * /proc/kallsyms must name the address of "schedule". The kernel's %pS
 * names are parsed, put into a table bounded by their sizes, and, as
 * root, asked of the kernel for "schedule" and its neighbours.
 */
#include "symbols/ksyms.h"
#include "record/ksymnames.h"
#include "testing.h"

#include <sys/utsname.h>

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static char tmp_path[64];

static bool write_tmp(const char *text)
{
	strcpy(tmp_path, "/tmp/test_ksyms.XXXXXX");
	int fd = mkstemp(tmp_path);
	if (fd < 0)
		return false;
	size_t len = strlen(text);
	bool ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok;
}

static const char sample[] =
	"ffffffff81000200 T second_fn\n"
	"ffffffffc0a01000 t xfs_fs_fill_super\t[xfs]\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t _text_local\n"
	"ffffffff82000000 D some_data\n"
	"ffffffff82000100 b some_bss\n"
	"ffffffff81000100 t first_fn\n"
	"ffffffffc0a02000 T xfs_other\t[xfs]\n"
	"ffffffffc0b00000 t ext4_thing\t[ext4]\n"
	"ffffffff81000300 W weak_fn\n"
	"ffffffff81000400 w weak_local\n"
	"not a line at all\n"
	"ffffffff81000500 T\n"
	"zzzz T bad_addr\n"
	"1ffffffff81000700 T too_wide\n"  /* 17 digits: more than 64 bits */
	" T no_addr\n"
	"ffffffff81000800x T trailing_junk\n"
	"FFFFFFFF81000900 T upper_hex\n"
	"ffffffff81000600 A abs_sym\n";

static bool parse_sample(void)
{
	CHECK(write_tmp(sample));
	struct ksyms *k = ksyms__load(tmp_path);
	unlink(tmp_path);
	CHECK(k != NULL);
	/* _stext, first_fn, second_fn, weak_fn, weak_local, upper_hex, 3
	 * module syms; _text_local shares _stext's address and loses to the
	 * global; the malformed addresses are left out. */
	CHECK_EQ_INT(ksyms__count(k), 9);

	const struct ksym *s = ksyms__lookup(k, 0xffffffff81000000);
	CHECK(s && s->addr == 0xffffffff81000000);
	CHECK_STR(s->name, "_stext");
	CHECK(s->module == NULL);

	CHECK(ksyms__lookup(k, 0xffffffff80ffffff) == NULL);
	CHECK(ksyms__lookup(k, 0) == NULL);
	CHECK_STR(ksyms__lookup(k, 0xffffffff810000ff)->name, "_stext");
	CHECK_STR(ksyms__lookup(k, 0xffffffff81000100)->name, "first_fn");
	CHECK_STR(ksyms__lookup(k, 0xffffffff810001ff)->name, "first_fn");
	CHECK_STR(ksyms__lookup(k, 0xffffffff81000250)->name, "second_fn");
	CHECK_STR(ksyms__lookup(k, 0xffffffff81000300)->name, "weak_fn");
	CHECK_STR(ksyms__lookup(k, 0xffffffff81000401)->name, "weak_local");
	CHECK_STR(ksyms__lookup(k, 0xffffffff810008ff)->name, "weak_local");
	CHECK_STR(ksyms__lookup(k, 0xffffffff81000900)->name, "upper_hex");
	/* Data symbols are not kept: their addresses fall to the last text. */
	CHECK_STR(ksyms__lookup(k, 0xffffffff82000000)->name, "upper_hex");

	s = ksyms__lookup(k, 0xffffffffc0a01010);
	CHECK_STR(s->name, "xfs_fs_fill_super");
	CHECK_STR(s->module, "xfs");
	const struct ksym *s2 = ksyms__lookup(k, 0xffffffffc0a02000);
	CHECK_STR(s2->name, "xfs_other");
	CHECK_STR(s2->module, "xfs");
	s = ksyms__lookup(k, 0xffffffffc0b00001);
	CHECK_STR(s->name, "ext4_thing");
	CHECK_STR(s->module, "ext4");
	/* Above everything: the last symbol. */
	CHECK_STR(ksyms__lookup(k, UINT64_MAX)->name, "ext4_thing");
	ksyms__free(k);
	ksyms__free(NULL);
	CHECK_EQ_INT(ksyms__count(NULL), 0);
	CHECK(ksyms__lookup(NULL, 1) == NULL);
	return true;
}

static bool restricted_is_eperm(void)
{
	CHECK(write_tmp("0000000000000000 T _stext\n"
			"0000000000000000 t foo\t[mod]\n"
			"0000000000000000 D data\n"));
	errno = 0;
	struct ksyms *k = ksyms__load(tmp_path);
	int err = errno;
	unlink(tmp_path);
	CHECK(k == NULL);
	CHECK_EQ_INT(err, EPERM);
	return true;
}

static bool missing_and_empty(void)
{
	errno = 0;
	CHECK(ksyms__load("/nonexistent/kallsyms") == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK(write_tmp(""));
	errno = 0;
	struct ksyms *k = ksyms__load(tmp_path);
	int err = errno;
	unlink(tmp_path);
	CHECK(k == NULL);
	CHECK_EQ_INT(err, ENODATA);
	return true;
}

/* Address of "schedule" as /proc/kallsyms lists it, or 0. */
static uint64_t kallsyms_addr_of(const char *want)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr;
	uint64_t found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 &&
		    !strcmp(name, want) && (type == 'T' || type == 't')) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

/* The first n distinct addresses of core kernel text symbols. */
static size_t kallsyms_text_addrs(uint64_t *v, size_t n)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], type;
	unsigned long long addr;
	size_t k = 0;

	while (f && k < n && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c", &addr, &type) == 2 && (type == 'T' || type == 't') &&
		    !strchr(line, '[') && (!k || v[k - 1] < addr))
			v[k++] = addr;
	if (f)
		fclose(f);
	return k;
}

static bool real_kallsyms(void)
{
	if (geteuid() != 0)
		SKIP("not root");
	uint64_t sched = kallsyms_addr_of("schedule");
	if (!sched)
		SKIP("no nonzero address for schedule in /proc/kallsyms (kptr_restrict?)");

	struct ksyms *k = ksyms__load("/proc/kallsyms");
	if (!k && errno == EPERM)
		SKIP("kallsyms addresses hidden (kptr_restrict)");
	CHECK(k != NULL);
	CHECK(ksyms__count(k) > 1000);
	const struct ksym *s = ksyms__lookup(k, sched);
	CHECK(s != NULL);
	CHECK(s->addr == sched);
	CHECK_STR(s->name, "schedule");
	CHECK(s->module == NULL);
	s = ksyms__lookup(k, sched + 1);
	CHECK(s && s->addr == sched);
	ksyms__free(k);
	return true;
}

static bool parse_symbolic(void)
{
	struct ksym_text t;

	CHECK(ksyms__parse_symbolic("do_syscall_64+0x82/0x190", 0xffffffff81a00082, &t));
	CHECK(t.start == 0xffffffff81a00000 && t.size == 0x190 && !t.module);
	CHECK(t.name_len == 13 && !strncmp(t.name, "do_syscall_64", t.name_len));
	CHECK(ksyms__parse_symbolic("xfs_fs_fill_super+0x0/0x6f0 [xfs]", 0xffffffffc0a01000, &t));
	CHECK(t.start == 0xffffffffc0a01000 && t.size == 0x6f0);
	CHECK(t.module && t.mod_len == 3 && !strncmp(t.module, "xfs", 3));
	CHECK(ksyms__parse_symbolic("vms_clear_ptes.part.0+0x1a/0x40", 0x101a, &t));
	CHECK(t.start == 0x1000 && t.name_len == 21);
	/* no symbol there: the kernel prints the address */
	CHECK(!ksyms__parse_symbolic("0xffffffff81000000", 0xffffffff81000000, &t));
	CHECK(!ksyms__parse_symbolic("", 0x1000, &t));
	CHECK(!ksyms__parse_symbolic("name_cut_short+0x1", 0x1001, &t)); /* no size */
	CHECK(!ksyms__parse_symbolic("+0x1/0x10", 0x1001, &t));           /* no name */
	CHECK(!ksyms__parse_symbolic("f+0x10/0x10", 0x1010, &t));         /* off >= size */
	CHECK(!ksyms__parse_symbolic("f+0x10/0x0", 0x1010, &t));
	CHECK(!ksyms__parse_symbolic("f+0x20/0x40", 0x10, &t));           /* below 0 */
	CHECK(!ksyms__parse_symbolic("f+0x1/0x40 [xfs", 0x1001, &t));     /* cut in the module */
	CHECK(!ksyms__parse_symbolic("f+0x1/0x40 []", 0x1001, &t));
	CHECK(!ksyms__parse_symbolic("f+0x1/0x40 [m] x", 0x1001, &t));
	CHECK(!ksyms__parse_symbolic("f+1/0x40", 0x1001, &t));
	return true;
}

static bool add_text(struct ksyms_builder *b, const char *text, uint64_t addr)
{
	struct ksym_text t;

	return ksyms__parse_symbolic(text, addr, &t) && ksyms__builder_add(b, &t) == 0;
}

/* A table of %pS names: in any order, the same symbol many times, and
 * bounded by sizes (a gap between two symbols names nothing). */
static bool built_table(void)
{
	struct ksyms_builder *b = ksyms__builder();

	CHECK(b != NULL);
	CHECK(add_text(b, "second+0x8/0x10 [mod]", 0x2008));
	CHECK(add_text(b, "first+0x4/0x20", 0x1004));
	CHECK(add_text(b, "first+0x1f/0x20", 0x101f));
	CHECK(add_text(b, "second+0x0/0x10 [mod]", 0x2000));
	struct ksyms *k = ksyms__build(b);
	CHECK(k != NULL);
	CHECK_EQ_INT(ksyms__count(k), 2);
	CHECK(ksyms__lookup(k, 0xfff) == NULL);
	CHECK_STR(ksyms__lookup(k, 0x1000)->name, "first");
	CHECK(ksyms__lookup(k, 0x1000)->module == NULL);
	CHECK(ksyms__lookup(k, 0x1000)->size == 0x20);
	CHECK_STR(ksyms__lookup(k, 0x101f)->name, "first");
	CHECK(ksyms__lookup(k, 0x1020) == NULL); /* past first's end */
	CHECK(ksyms__lookup(k, 0x1fff) == NULL);
	CHECK_STR(ksyms__lookup(k, 0x200f)->name, "second");
	CHECK_STR(ksyms__lookup(k, 0x200f)->module, "mod");
	CHECK(ksyms__lookup(k, 0x2010) == NULL);
	ksyms__free(k);
	errno = 0;
	CHECK(ksyms__build(ksyms__builder()) == NULL);
	CHECK_EQ_INT(errno, ENODATA);
	return true;
}

/* The kernel names "schedule", an address inside it, a caller's return
 * address - 1 past its start, and leaves out an address with no symbol. */
static bool kernel_names(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (geteuid() != 0)
		SKIP("not root");
	uint64_t sched = kallsyms_addr_of("schedule");
	if (!sched)
		SKIP("no nonzero address for schedule in /proc/kallsyms (kptr_restrict?)");
	struct ksymnames *kn = ksymnames__open();
	if (!kn) {
		/* Syscall programs and bpf_snprintf's %pS came in 5.14. */
		CHECK(uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2);
		if (major < 5 || (major == 5 && minor < 14))
			SKIP("kernel before 5.14: no BPF syscall programs");
		CHECK(kn != NULL);
	}
	uint64_t addrs[] = { sched, sched + 5, 0x1000 };
	struct ksyms *k = ksymnames__table(kn, addrs, 3);
	CHECK(k != NULL);
	CHECK_EQ_INT(ksyms__count(k), 1);
	const struct ksym *s = ksyms__lookup(k, sched + 5);
	CHECK(s && s->addr == sched && s->size > 5);
	CHECK_STR(s->name, "schedule");
	CHECK(s->module == NULL);
	CHECK(ksyms__lookup(k, 0x1000) == NULL);
	ksyms__free(k);
	/* More than two batches: 600 symbols of kallsyms, each named (a
	 * few kallsyms text symbols are aliases or have no size). */
	static uint64_t many[600];
	size_t n = kallsyms_text_addrs(many, 600);
	CHECK(n == 600);
	k = ksymnames__table(kn, many, n);
	CHECK(k != NULL);
	CHECK(ksyms__count(k) >= 550);
	CHECK(ksyms__lookup(k, many[599]) != NULL);
	ksyms__free(k);
	ksymnames__close(kn);
	return true;
}

TEST_MAIN("ksyms",
	  TEST(parse_sample),
	  TEST(restricted_is_eperm),
	  TEST(missing_and_empty),
	  TEST(real_kallsyms),
	  TEST(parse_symbolic),
	  TEST(built_table),
	  TEST(kernel_names))
