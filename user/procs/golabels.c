/* golabels.c — see golabels.h. The same steps as bpf/labels_go.bpf.h, on
 * local copies; every length is bounded before it is used. */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include "golabels.h"

#define BUCKET_SLOTS 8
#define MIN_TOPHASH 5
#define BUCKET_SIZE (BUCKET_SLOTS + 2 * BUCKET_SLOTS * 16) /* what BPF reads */
/* A whole map[string]string bucket: the pairs, then the overflow
 * bucket's address. */
#define BUCKET_BYTES (BUCKET_SIZE + 8)
#define MAX_B 2             /* 4 buckets: room for 16 labels at 6.5 a bucket */
#define MAX_BUCKET_READS 16 /* buckets and overflow buckets (a cycle ends) */
#define HMAP_BYTES 32       /* count, flags, B, noverflow, hash0, buckets, oldbuckets */

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int golabels__read_pid(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (addr + len < addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == ESRCH || errno == EPERM ? -errno : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The header id is computed from: the map's (HMAP_BYTES at *hmap) or
 * the list's slice header (24 bytes); *where is the map's address. */
static int header(golabels_read_fn rd, void *ctx, uint32_t layout, uint64_t labels,
		  uint8_t hdr[HMAP_BYTES], uint64_t *where, uint64_t *id)
{
	int err;

	*id = 0;
	*where = 0;
	if (!labels)
		return 0;
	if (layout == PMUBPF_GO_MAP) {
		uint8_t w[8];

		if ((err = rd(ctx, labels, w, 8)))
			return err;
		*where = get64(w);
		if (!*where)
			return 0;
		if ((err = rd(ctx, *where, hdr, HMAP_BYTES)))
			return err;
		if (!get64(hdr)) /* count */
			return 0;
		uint32_t hash0;
		memcpy(&hash0, hdr + 12, 4);
		*id = labels * 0x9E3779B97F4A7C15ULL ^ *where ^ ((uint64_t)hash0 << 32);
	} else if (layout == PMUBPF_GO_SLICE) {
		if ((err = rd(ctx, labels, hdr, 24)))
			return err;
		if (!get64(hdr + 8)) /* len */
			return 0;
		*id = labels * 0x9E3779B97F4A7C15ULL ^ get64(hdr) ^ (get64(hdr + 8) << 48);
	} else {
		return -EINVAL;
	}
	*id = *id ? *id : 1;
	return 0;
}

int golabels__id(golabels_read_fn rd, void *ctx, uint32_t layout, uint64_t labels, uint64_t *id)
{
	uint8_t hdr[HMAP_BYTES];
	uint64_t where;

	return header(rd, ctx, layout, labels, hdr, &where, id);
}

static void copy_pair(golabels_read_fn rd, void *ctx, struct pmubpf_flabel *p, const uint8_t *k,
		      const uint8_t *v)
{
	uint64_t kp = get64(k), kn = get64(k + 8), vp = get64(v), vn = get64(v + 8);
	size_t kl = kn < PMUBPF_FLABEL_KEY - 1 ? kn : PMUBPF_FLABEL_KEY - 1;
	size_t vl = vn < PMUBPF_FLABEL_VAL - 1 ? vn : PMUBPF_FLABEL_VAL - 1;

	p->flags = PMUBPF_FLABEL_PRESENT;
	p->klen = kn > 0xffff ? 0xffff : (uint32_t)kn;
	p->vlen = vn > 0xffff ? 0xffff : (uint32_t)vn;
	if ((kl && rd(ctx, kp, p->key, kl)) || (vl && rd(ctx, vp, p->val, vl)))
		p->flags |= PMUBPF_FLABEL_FAULT;
}

/* A go1.18-1.23 map's pairs into n: every bucket of the 2^B and their
 * overflow chains (BPF reads only a one-bucket map, B = 0: up to 8
 * labels; this reads the rest when BPF said so). A map still growing
 * (oldbuckets set: some pairs not yet moved) or holding more than
 * PMUBPF_FLABEL_MAX labels is refused whole, never half read. */
static void copy_map(golabels_read_fn rd, void *ctx, const uint8_t *hdr,
		     struct pmubpf_flabel_notice *n)
{
	uint64_t count = get64(hdr), buckets = get64(hdr + 16), old = get64(hdr + 24);
	uint8_t B = hdr[9], buf[BUCKET_BYTES];
	uint32_t k = 0, reads = 0;

	n->total = count > 0xffff ? 0xffff : (uint32_t)count;
	if (B > MAX_B || count > PMUBPF_FLABEL_MAX || old) {
		n->status = PMUBPF_FLABEL_TOO_MANY;
		return;
	}
	for (uint64_t b = 0; b < (1u << B); b++) {
		for (uint64_t at = buckets + b * BUCKET_BYTES; at; at = get64(buf + BUCKET_SIZE)) {
			if (++reads > MAX_BUCKET_READS || rd(ctx, at, buf, BUCKET_BYTES)) {
				n->status = PMUBPF_FLABEL_UNREADABLE;
				return;
			}
			for (int i = 0; i < BUCKET_SLOTS; i++) {
				if (buf[i] < MIN_TOPHASH)
					continue;
				if (k == PMUBPF_FLABEL_MAX) { /* more than count said */
					n->status = PMUBPF_FLABEL_UNREADABLE;
					return;
				}
				copy_pair(rd, ctx, &n->pairs[k++], buf + BUCKET_SLOTS + 16 * i,
					  buf + BUCKET_SLOTS + 16 * (BUCKET_SLOTS + i));
			}
		}
	}
	n->nslots = k;
}

int golabels__copy(golabels_read_fn rd, void *ctx, uint32_t layout, uint64_t labels, uint64_t id,
		   struct pmubpf_flabel_notice *n)
{
	uint8_t hdr[HMAP_BYTES], buf[2 * PMUBPF_FLABEL_MAX * 16];
	uint64_t where, now;
	int err = header(rd, ctx, layout, labels, hdr, &where, &now);

	if (err)
		return err;
	if (!now || now != id)
		return -ESTALE;
	memset(n->pairs, 0, sizeof(n->pairs));
	n->source = PMUBPF_LSRC_GO;
	n->nslots = 0;
	n->status = PMUBPF_FLABEL_OK;
	if (layout == PMUBPF_GO_MAP) {
		copy_map(rd, ctx, hdr, n);
	} else {
		uint64_t arr = get64(hdr), len = get64(hdr + 8);

		n->total = len > 0xffff ? 0xffff : (uint32_t)len;
		if (len > PMUBPF_FLABEL_MAX) {
			n->status = PMUBPF_FLABEL_TOO_MANY;
			return 0;
		}
		if (rd(ctx, arr, buf, len * 32)) {
			n->status = PMUBPF_FLABEL_UNREADABLE;
			return 0;
		}
		n->nslots = (uint32_t)len;
		for (uint32_t i = 0; i < len; i++)
			copy_pair(rd, ctx, &n->pairs[i], buf + 32 * i, buf + 32 * i + 16);
	}
	return 0;
}
