/* test_outfile.c — lib/outfile: which paths are replaced, written in place
 * or refused, and that writing leaves no temp file and an old file intact
 * on failure. Needs root (mknod: its own null and block device nodes, never
 * the host's /dev/null). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "testing.h"
#include "lib/outfile.h"

static char dir[64];

static const char *at(const char *name)
{
	static char buf[2][2048]; /* two at once: symlink(at(a), at(b)) */
	static int k;

	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

/* Entries in dir besides . and .. */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	if (d)
		closedir(d);
	return n;
}

static bool setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_outfile.XXXXXX");
	return mkdtemp(dir) != NULL;
}

static void teardown(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

static bool kinds(void)
{
	char err[512], name[400];

	CHECK(setup());
	CHECK_EQ_INT(outfile__check(at("new.pb.gz"), err, sizeof(err)), OUTFILE_REPLACE);
	/* A null device of our own: a broken check must not turn the
	 * host's /dev/null into a file. */
	CHECK(mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) == 0);
	CHECK_EQ_INT(outfile__check(at("null"), err, sizeof(err)), OUTFILE_IN_PLACE);
	CHECK_EQ_INT(outfile__check(dir, err, sizeof(err)), -EISDIR);
	CHECK(strstr(err, "is a directory"));
	CHECK_EQ_INT(outfile__check(at(""), err, sizeof(err)), -EISDIR);
	CHECK_EQ_INT(outfile__check("/etc/passwd/x.pb.gz", err, sizeof(err)), -ENOTDIR);
	CHECK_STR(err, "cannot write '/etc/passwd/x.pb.gz': '/etc/passwd' is not a directory");
	CHECK_EQ_INT(outfile__check(at("no/x.pb.gz"), err, sizeof(err)), -ENOENT);
	memset(name, 'a', 300);
	name[300] = '\0';
	CHECK_EQ_INT(outfile__check(at(name), err, sizeof(err)), -ENAMETOOLONG);
	CHECK_EQ_INT(outfile__check("", err, sizeof(err)), -EINVAL);
	CHECK(mkfifo(at("fifo"), 0600) == 0);
	CHECK_EQ_INT(outfile__check(at("fifo"), err, sizeof(err)), OUTFILE_IN_PLACE);
	CHECK(symlink(at("null"), at("tonull")) == 0);
	CHECK_EQ_INT(outfile__check(at("tonull"), err, sizeof(err)), OUTFILE_IN_PLACE);
	CHECK(symlink("/etc/hostname", at("toreg")) == 0);
	CHECK_EQ_INT(outfile__check(at("toreg"), err, sizeof(err)), -ELOOP);
	CHECK(symlink("/nowhere/at/all", at("dangling")) == 0);
	CHECK_EQ_INT(outfile__check(at("dangling"), err, sizeof(err)), -ELOOP);
	CHECK(mknod(at("blk"), S_IFBLK | 0600, makedev(7, 250)) == 0);
	CHECK_EQ_INT(outfile__check(at("blk"), err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "block device"));
	teardown();
	return true;
}

static bool write_file(const char *path, const char *text)
{
	struct outfile o;

	if (outfile__open(&o, path))
		return false;
	if (write(o.fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		outfile__abort(&o);
		return false;
	}
	return outfile__commit(&o) == 0;
}

static bool slurp_is(const char *path, const char *want)
{
	char buf[256] = { 0 };
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(want) && !memcmp(buf, want, (size_t)n);
}

static bool replace_and_abort(void)
{
	struct outfile o;
	struct stat st;

	CHECK(setup());
	CHECK(write_file(at("p.pb.gz"), "first"));
	CHECK(slurp_is(at("p.pb.gz"), "first"));
	CHECK(stat(at("p.pb.gz"), &st) == 0 && (st.st_mode & 0777) == 0644);
	CHECK(write_file(at("p.pb.gz"), "second"));
	CHECK(slurp_is(at("p.pb.gz"), "second"));
	CHECK_EQ_INT(entries(), 1); /* no temp file left */
	/* Given up half-way: the old file intact, nothing else. */
	CHECK(outfile__open(&o, at("p.pb.gz")) == 0);
	CHECK(write(o.fd, "par", 3) == 3);
	outfile__abort(&o);
	CHECK(slurp_is(at("p.pb.gz"), "second"));
	CHECK_EQ_INT(entries(), 1);
	/* In place: a null device stays a character device. */
	CHECK(mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) == 0);
	CHECK(write_file(at("null"), "x"));
	CHECK(stat(at("null"), &st) == 0 && S_ISCHR(st.st_mode));
	teardown();
	return true;
}

/* outfile__check_dir: the directory --every writes into, named itself in
 * the error (never a file in it). */
static bool dirs(void)
{
	const struct {
		const char *dir; /* NULL: the test directory; "@x": x in it */
		int ret;
		const char *why; /* err: "cannot write into directory 'DIR': WHY" */
	} rows[] = {
		{ NULL, 0, NULL },
		{ "@", 0, NULL }, /* DIR/ */
		{ "@no", -ENOENT, "no such directory" },
		{ "@no/", -ENOENT, "no such directory" },
		{ "/etc/passwd", -ENOTDIR, "not a directory" },
		{ "/etc/passwd/", -ENOTDIR, "Not a directory" }, /* stat's ENOTDIR */
		{ "", -EINVAL, NULL },
	};
	char err[4096], want[4096], name[2048];

	CHECK(setup());
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (!rows[i].dir)
			snprintf(name, sizeof(name), "%s", dir);
		else
			snprintf(name, sizeof(name), "%s", rows[i].dir[0] == '@' ? at(rows[i].dir + 1) : rows[i].dir);
		err[0] = '\0';
		CHECK_EQ_INT(outfile__check_dir(name, err, sizeof(err)), rows[i].ret);
		if (rows[i].why) {
			snprintf(want, sizeof(want), "cannot write into directory '%s': %s", name, rows[i].why);
			CHECK_STR(err, want);
		}
	}
	CHECK_EQ_INT(entries(), 0); /* made nothing */
	teardown();
	return true;
}

TEST_MAIN("outfile", TEST(kinds), TEST(dirs), TEST(replace_and_abort))
