/* values.h — the option values that more than one front end parses: the
 * command line (-C, -p, -t, -d, -F, --http), the recording (the online
 * CPU list in sysfs) and the HTTP server (?seconds=, ?hz=).
 *
 * One parser per kind of value, so that a value means the same and is
 * refused with the same words wherever it is given. Strict: the whole
 * string must be the value (no trailing junk, no sign where none belongs).
 */
#ifndef PMUBPF_VALUES_H
#define PMUBPF_VALUES_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define MAX_FREQ 100000 /* -F, hz=; beyond this the kernel throttles anyway */

/* An unsigned decimal in [min, max]: 0 or -EINVAL. */
int values__parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* "0-3,5,7-8" (each number in 0..max_value) into a sorted, unique int
 * list, *out malloc'd. 0, -EINVAL or -ENOMEM. */
/* Entries of a list as written (-C, and all -p, all -t together): a range
 * like -p 1-2000000000 would otherwise be expanded into gigabytes. */
#define VALUES_LIST_MAX 65536
int values__parse_list(const char *s, int **out, int *n, int max_value);

/* Seconds, fractions allowed: a finite number > 0 in [lo, hi].
 * 0 or -EINVAL. (-d, and the HTTP server's seconds=) */
int values__parse_seconds(const char *s, double lo, double hi, double *out);

/* A rate of 1..MAX_FREQ Hz, or "max" (the kernel's
 * perf_event_max_sample_rate, capped there). opt spells it in the error:
 * "-F " gives "bad frequency '-F 0': want 1..100000 Hz or max", "hz=" the
 * HTTP server's. 0 or -EINVAL with that line in err. */
int values__parse_freq(const char *opt, const char *s, uint64_t *hz, char *err, size_t errlen);
/* kernel.perf_event_max_sample_rate as it is now (uncapped): 0, or
 * -EINVAL if unreadable. */
int values__kernel_max_rate(uint64_t *v);

/* An address to listen on, resolved. */
struct listen_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	char host[48];   /* as announced: "127.0.0.1", "[::1]" */
	uint16_t port;   /* 0: any free port */
};

/* "[HOST]:PORT" for --http: HOST an IPv4 address, "[IPv6]", "localhost"
 * or empty (both mean 127.0.0.1: all interfaces only when asked for,
 * with 0.0.0.0 or [::]); PORT 0..65535. No name lookups. 0 or -EINVAL. */
int values__parse_listen(const char *s, struct listen_addr *a);

#endif
