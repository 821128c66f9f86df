/* btfnames.c — see btfnames.h. */
#include "btfnames.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Does the kernel's BTF name every one of names[0..n)? Only its string
 * section is read, in pieces through one buffer, for "\0NAME\0": ~1 ms
 * of CPU where parsing the whole BTF (types, index) took ~16 ms, 8% of
 * a short recording's CPU on a VM whose page faults are slow. A string
 * is a name of some type; the names asked here are of a function and of
 * a tracepoint's typedef, which nothing else is called. */
bool btfnames__all(const char *const *names, size_t n)
{
	struct {
		uint16_t magic;
		uint8_t version, flags;
		uint32_t hdr_len, type_off, type_len, str_off, str_len;
	} h;
	char needle[8][64];
	size_t nlen[8], longest = 0, left = n;
	bool found[8] = { false };
	static char buf[64 << 10];
	size_t carry = 0;
	uint64_t off, end;
	int fd;

	if (n > 8)
		return false;
	for (size_t i = 0; i < n; i++) {
		int l = snprintf(needle[i], sizeof(needle[i]), "%c%s%c", 0, names[i], 0);

		if (l < 0 || (size_t)l >= sizeof(needle[i]))
			return false;
		nlen[i] = (size_t)l;
		longest = nlen[i] > longest ? nlen[i] : longest;
	}
	fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.magic != 0xeb9f ||
	    h.hdr_len < sizeof(h)) {
		close(fd);
		return false;
	}
	off = (uint64_t)h.hdr_len + h.str_off;
	end = off + h.str_len;
	while (left && off < end) {
		size_t want = sizeof(buf) - carry;
		ssize_t r;

		if (want > end - off)
			want = (size_t)(end - off);
		r = pread(fd, buf + carry, want, (off_t)off);
		if (r <= 0)
			break;
		off += (uint64_t)r;
		carry += (size_t)r;
		for (size_t i = 0; i < n; i++)
			if (!found[i] && memmem(buf, carry, needle[i], nlen[i])) {
				found[i] = true;
				left--;
			}
		/* Keep the tail a needle could straddle into the next piece. */
		if (carry >= longest) {
			memmove(buf, buf + carry - (longest - 1), longest - 1);
			carry = longest - 1;
		}
	}
	close(fd);
	return !left;
}
