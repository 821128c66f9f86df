/* pprof_write.c — encode a profile with protobuf-c and write it gzipped,
 * atomically where the output is a file (lib/outfile.h: an unnamed temp
 * file next to the target, fsync, link/rename; a device or FIFO in place).
 *
 * The profile's arrays (pprof_int.h) are the message structs already;
 * encoding points protobuf-c's repeated fields at them and packs the
 * Profile into one buffer, which zlib compresses in chunks to the temp
 * file. A failure at any step leaves no file behind. pprof_folded.c's
 * text goes to disk through the same pprof__write_atomic.
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

/* --- encoding ----------------------------------------------------------- */

/* malloc for n pointers/structs; never NULL for n == 0 on success. */
static void *alloc_n(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

/* The id mapping `id` gets in the file: the main mapping becomes 1 and
 * those before it move up by one, so ids stay 1..n in file order. */
static uint64_t file_map_id(const struct pprof *p, uint64_t id)
{
	if (!p->main_map || !id || id > p->main_map)
		return id;
	return id == p->main_map ? 1 : id + 1;
}

/* Build the Profile message over our arrays and pack it into a new buffer. */
static int encode(struct pprof *p, uint8_t **out, size_t *outlen)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type *st[2] = { &p->sample_type[0], &p->sample_type[1] };
	pb_mapping **mapp = alloc_n(p->nmaps, sizeof(*mapp));
	pb_mapping *mapm = alloc_n(p->nmaps, sizeof(*mapm));
	pb_function **funcp = alloc_n(p->nfuncs, sizeof(*funcp));
	pb_location *locm = alloc_n(p->nlocs, sizeof(*locm));
	pb_location **locp = alloc_n(p->nlocs, sizeof(*locp));
	pb_line **linep = alloc_n(p->nlines, sizeof(*linep));
	pb_sample *smpm = alloc_n(p->nsamples, sizeof(*smpm));
	pb_sample **smpp = alloc_n(p->nsamples, sizeof(*smpp));
	pb_label **labp = alloc_n(p->nlabels, sizeof(*labp));
	uint8_t *buf = NULL;
	size_t size;
	int err = -ENOMEM;

	if (!mapp || !mapm || !funcp || !locm || !locp || !linep || !smpm ||
	    !smpp || !labp)
		goto out;
	for (size_t i = 0; i < p->nmaps; i++) {
		uint64_t fid = file_map_id(p, i + 1);

		mapm[fid - 1] = p->maps[i];
		mapm[fid - 1].id = fid;
		mapp[fid - 1] = &mapm[fid - 1];
	}
	for (size_t i = 0; i < p->nfuncs; i++)
		funcp[i] = &p->funcs[i];
	for (size_t i = 0; i < p->nlines; i++)
		linep[i] = &p->lines[i];
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pprof_loc *l = &p->locs[i];
		perftools__profiles__location__init(&locm[i]);
		locm[i].id = i + 1;
		locm[i].mapping_id = file_map_id(p, l->mapping_id);
		locm[i].address = l->address;
		locm[i].n_line = l->nlines;
		locm[i].line = l->nlines ? &linep[l->line_off] : NULL;
		locp[i] = &locm[i];
	}
	for (size_t i = 0; i < p->nlabels; i++)
		labp[i] = &p->labels[i];
	for (size_t i = 0; i < p->nsamples; i++) {
		struct pprof_sample *s = &p->samples[i];
		perftools__profiles__sample__init(&smpm[i]);
		smpm[i].n_location_id = s->nlocs;
		smpm[i].location_id = s->nlocs ? &p->locids[s->loc_off] : NULL;
		smpm[i].n_value = 2;
		smpm[i].value = s->value;
		smpm[i].n_label = s->nlabels;
		smpm[i].label = s->nlabels ? &labp[s->label_off] : NULL;
		smpp[i] = &smpm[i];
	}

	prof.n_sample_type = 2;
	prof.sample_type = st;
	prof.n_sample = p->nsamples;
	prof.sample = smpp;
	prof.n_mapping = p->nmaps;
	prof.mapping = mapp;
	prof.n_location = p->nlocs;
	prof.location = locp;
	prof.n_function = p->nfuncs;
	prof.function = funcp;
	prof.n_string_table = p->nstrs;
	prof.string_table = p->strs;
	prof.time_nanos = p->time_nanos;
	prof.duration_nanos = p->duration_nanos;
	prof.period_type = &p->period_type;
	prof.period = p->period;
	prof.n_comment = p->ncomments;
	prof.comment = p->comments;

	size = protobuf_c_message_get_packed_size(&prof.base);
	buf = malloc(size ? size : 1);
	if (!buf)
		goto out;
	if (protobuf_c_message_pack(&prof.base, buf) != size) {
		free(buf);
		buf = NULL;
		err = -EIO;
		goto out;
	}
	*out = buf;
	*outlen = size;
	err = 0;
out:
	free(mapp);
	free(mapm);
	free(funcp);
	free(locm);
	free(locp);
	free(linep);
	free(smpm);
	free(smpp);
	free(labp);
	return err;
}

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

/* gzip buf into fd, streaming the compressed output in chunks. */
static int gzip_to_fd(int fd, const uint8_t *buf, size_t len)
{
	z_stream zs;
	unsigned char *chunk;
	int zr, flush, err = 0;

	memset(&zs, 0, sizeof(zs));
	chunk = malloc(GZ_CHUNK);
	if (!chunk)
		return -ENOMEM;
	zr = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			  Z_DEFAULT_STRATEGY);
	if (zr != Z_OK) {
		free(chunk);
		return zr == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
	}
	zs.next_in = (Bytef *)buf;
	do {
		/* avail_in is a uInt: feed very large buffers in pieces. */
		uInt in = len > (1u << 30) ? (1u << 30) : (uInt)len;
		zs.avail_in = in;
		len -= in;
		flush = len ? Z_NO_FLUSH : Z_FINISH;
		do {
			zs.next_out = chunk;
			zs.avail_out = GZ_CHUNK;
			zr = deflate(&zs, flush);
			if (zr == Z_STREAM_ERROR) {
				err = -EIO;
				goto out;
			}
			err = write_all(fd, chunk, GZ_CHUNK - zs.avail_out);
			if (err)
				goto out;
		} while (zs.avail_out == 0);
	} while (flush != Z_FINISH);
	if (zr != Z_STREAM_END)
		err = -EIO;
out:
	deflateEnd(&zs);
	free(chunk);
	return err;
}

/* The one way a profile reaches its output, whatever its format: "-" is
 * stdout (-o -); a path goes through lib/outfile.h (a file replaced
 * whole, never half-written; a device or FIFO written in place). */
int pprof__write_atomic(const char *path, const uint8_t *buf, size_t len, bool gzip)
{
	struct outfile o;
	int err;

	if (!path || !*path)
		return -EINVAL;
	if (!strcmp(path, "-"))
		return gzip ? gzip_to_fd(STDOUT_FILENO, buf, len) : write_all(STDOUT_FILENO, buf, len);
	err = outfile__open(&o, path);
	if (err)
		return err;
	err = gzip ? gzip_to_fd(o.fd, buf, len) : write_all(o.fd, buf, len);
	if (err)
		outfile__abort(&o);
	else
		err = outfile__commit(&o);
	return err;
}

int pprof__write(struct pprof *p, const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	if (!path || !*path)
		return -EINVAL;
	err = encode(p, &buf, &len);
	if (!err)
		err = pprof__write_atomic(path, buf, len, true);
	free(buf);
	return err;
}

int pprof__encode_gz(struct pprof *p, uint8_t **out, size_t *outlen)
{
	uint8_t *buf = NULL, *gz = NULL;
	size_t len = 0;
	z_stream zs;
	uLong bound;
	int err, zr;

	err = encode(p, &buf, &len);
	if (err)
		return err;
	memset(&zs, 0, sizeof(zs));
	/* Fastest, as Go's runtime/pprof: an answer waits on it, and the
	 * default level costs about as much as symbolizing. */
	if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	/* One deflate call over a buffer deflateBound sized: the encoded
	 * profile is in memory already, and gzip never grows it by more. */
	bound = len < (1u << 30) ? deflateBound(&zs, (uLong)len) : 0;
	gz = bound ? malloc(bound) : NULL;
	if (!gz) {
		err = bound ? -ENOMEM : -EFBIG;
		goto out;
	}
	zs.next_in = buf;
	zs.avail_in = (uInt)len;
	zs.next_out = gz;
	zs.avail_out = (uInt)bound;
	zr = deflate(&zs, Z_FINISH);
	if (zr != Z_STREAM_END) {
		err = -EIO;
		goto out;
	}
	*out = gz;
	*outlen = bound - zs.avail_out;
	gz = NULL;
out:
	deflateEnd(&zs);
	free(gz);
	free(buf);
	return err;
}
