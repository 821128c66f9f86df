/* pprof_write.c — where an encoded profile goes: a gzip stream (the
 * sink pprof_encode.c writes into) to a file, atomically where the output
 * is a file (lib/outfile.h: an unnamed temp file next to the target,
 * fsync, link/rename; a device or FIFO in place), or to memory (the HTTP
 * server's answers). The encoder hands over the profile in pieces, so only
 * the compressed form is ever whole in memory, and only for memory output.
 * A failure at any step leaves no file behind. pprof_folded.c's text goes
 * to disk through the same pprof__write_atomic.
 */
#include "pprof.h"
#include "pprof_int.h"
#include "lib/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* --- writing ------------------------------------------------------------ */

static int write_all(int fd, const void *buf, size_t len)
{
	const char *c = buf;
	while (len) {
		ssize_t n = write(fd, c, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

#define GZ_CHUNK (256 * 1024)

/* gzip level 1 (Z_BEST_SPEED), as Go's runtime/pprof writes: on 1M
 * samples over 100k stacks level 6 took 1.8 times the CPU for a file 5%
 * smaller (docs/benchmarks.md, "Where the writing time goes"). */
#define PPROF_GZIP_LEVEL Z_BEST_SPEED

/* A gzip stream to a file descriptor or to memory. */
struct pprof_sink {
	z_stream zs;
	int fd;              /* output, or -1: into mem */
	uint8_t *chunk;      /* fd output: compressed bytes on their way */
	uint8_t *mem;        /* memory output: the compressed stream */
	size_t memcap;
};

static int sink_init(struct pprof_sink *s, int fd)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	if (fd >= 0) {
		if (!(s->chunk = malloc(GZ_CHUNK)))
			return -ENOMEM;
		s->zs.next_out = s->chunk;
		s->zs.avail_out = GZ_CHUNK;
	}
	if (deflateInit2(&s->zs, PPROF_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(s->chunk);
		s->chunk = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void sink_free(struct pprof_sink *s)
{
	deflateEnd(&s->zs);
	free(s->chunk);
	free(s->mem);
}

/* Where deflate's next output goes: the chunk (written out when full), or
 * the end of mem (doubled when full). */
static int sink_room(struct pprof_sink *s)
{
	if (s->fd >= 0) {
		int err = write_all(s->fd, s->chunk, GZ_CHUNK - s->zs.avail_out);

		s->zs.next_out = s->chunk;
		s->zs.avail_out = GZ_CHUNK;
		return err;
	}
	size_t used = s->memcap - s->zs.avail_out;
	size_t cap = s->memcap ? s->memcap * 2 : GZ_CHUNK;
	uint8_t *m;

	if (cap - used > (1u << 30))
		cap = used + (1u << 30); /* avail_out is a uInt */
	if (!(m = realloc(s->mem, cap)))
		return -ENOMEM;
	s->mem = m;
	s->memcap = cap;
	s->zs.next_out = m + used;
	s->zs.avail_out = (uInt)(cap - used);
	return 0;
}

/* Compress buf (Z_NO_FLUSH) or the rest (Z_FINISH). */
static int sink_deflate(struct pprof_sink *s, const void *buf, size_t len, int flush)
{
	int zr, err;

	s->zs.next_in = (Bytef *)buf;
	do {
		/* avail_in is a uInt: feed very large buffers in pieces. */
		uInt in = len > (1u << 30) ? (1u << 30) : (uInt)len;
		int f = len > in ? Z_NO_FLUSH : flush;

		s->zs.avail_in = in;
		len -= in;
		do {
			if (!s->zs.avail_out && (err = sink_room(s)))
				return err;
			zr = deflate(&s->zs, f);
			if (zr == Z_STREAM_ERROR)
				return -EIO;
		} while (f == Z_FINISH ? zr != Z_STREAM_END
					: s->zs.avail_in || !s->zs.avail_out);
	} while (len);
	return 0;
}

/* pprof_put_fn for the encoder. */
static int sink_put(void *s, const void *buf, size_t len)
{
	return sink_deflate(s, buf, len, Z_NO_FLUSH);
}

/* The end of the stream; for fd output, its last bytes written. */
static int sink_finish(struct pprof_sink *s)
{
	int err = sink_deflate(s, NULL, 0, Z_FINISH);

	if (!err && s->fd >= 0)
		err = write_all(s->fd, s->chunk, GZ_CHUNK - s->zs.avail_out);
	return err;
}

/* gzip buf into fd. */
static int gzip_to_fd(int fd, const uint8_t *buf, size_t len)
{
	struct pprof_sink s;
	int err = sink_init(&s, fd);

	if (!err)
		err = sink_deflate(&s, buf, len, Z_NO_FLUSH);
	if (!err)
		err = sink_finish(&s);
	sink_free(&s);
	return err;
}

/* The profile encoded and gzipped into fd. */
static int encode_to_fd(int fd, const struct pprof *p)
{
	struct pprof_sink s;
	int err = sink_init(&s, fd);

	if (!err)
		err = pprof__encode(p, sink_put, &s);
	if (!err)
		err = sink_finish(&s);
	sink_free(&s);
	return err;
}

/* A signal came while a FIFO waited for its reader: the profile goes to
 * PATH.unread (replaced whole) beside it. -EINTR once it is there (the
 * caller says where), else why not. */
static int write_unread(const char *path, int (*fill)(int fd, const void *ctx), const void *ctx)
{
	char alt[4096];
	struct outfile o;
	int err;

	if (snprintf(alt, sizeof(alt), "%s" PPROF_UNREAD, path) >= (int)sizeof(alt))
		return -ENAMETOOLONG;
	err = outfile__open(&o, alt);
	if (err)
		return err;
	if (o.kind != OUTFILE_REPLACE) { /* not a file of ours to make */
		outfile__abort(&o);
		return -EEXIST;
	}
	err = fill(o.fd, ctx);
	if (err)
		outfile__abort(&o);
	else
		err = outfile__commit(&o);
	return err ? err : -EINTR;
}

/* The one way a profile reaches its output, whatever its format: "-" is
 * stdout (-o -); a path goes through lib/outfile.h (a file replaced
 * whole, never half-written; a device or FIFO written in place). fill
 * writes the content to the descriptor it is given. */
static int write_out(const char *path, int (*fill)(int fd, const void *ctx), const void *ctx)
{
	struct outfile o;
	int err;

	if (!path || !*path)
		return -EINVAL;
	if (!strcmp(path, "-"))
		return fill(STDOUT_FILENO, ctx);
	err = outfile__open_nowait(&o, path);
	if (err == -ENXIO) { /* a FIFO nobody reads yet: as a shell's > would, wait */
		fprintf(stderr, "pmubpf: waiting for a reader of the FIFO '%s' (a signal puts the profile in '%s" PPROF_UNREAD "')\n",
			path, path);
		err = outfile__open(&o, path);
		if (err == -EINTR)
			return write_unread(path, fill, ctx);
	}
	if (err)
		return err;
	err = fill(o.fd, ctx);
	if (err)
		outfile__abort(&o);
	else
		err = outfile__commit(&o);
	return err;
}

struct raw_buf {
	const uint8_t *buf;
	size_t len;
	bool gzip;
};

static int fill_buf(int fd, const void *ctx)
{
	const struct raw_buf *b = ctx;

	return b->gzip ? gzip_to_fd(fd, b->buf, b->len) : write_all(fd, b->buf, b->len);
}

static int fill_profile(int fd, const void *ctx)
{
	return encode_to_fd(fd, ctx);
}

int pprof__write_atomic(const char *path, const uint8_t *buf, size_t len, bool gzip)
{
	struct raw_buf b = { buf, len, gzip };

	return write_out(path, fill_buf, &b);
}

int pprof__write(struct pprof *p, const char *path)
{
	return write_out(path, fill_profile, p);
}

int pprof__encode_gz(struct pprof *p, uint8_t **out, size_t *outlen)
{
	struct pprof_sink s;
	int err = sink_init(&s, -1);

	if (!err)
		err = pprof__encode(p, sink_put, &s);
	if (!err)
		err = sink_finish(&s);
	if (!err) {
		/* The answer may wait for a slow client: give back what the
		 * doubling left unused. */
		size_t len = s.memcap - s.zs.avail_out;
		uint8_t *m = realloc(s.mem, len);

		*out = m ? m : s.mem;
		*outlen = len;
		s.mem = NULL;
	}
	sink_free(&s);
	return err;
}
