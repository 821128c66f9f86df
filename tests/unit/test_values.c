/* test_values.c — the option values shared by the command line, the
 * recording and the HTTP server (user/config/values.h): numbers, lists,
 * seconds, rates and --http addresses, each with what it must refuse. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "config/values.h"
#include "testing.h"

static bool numbers(void)
{
	uint64_t v = 7;

	CHECK_EQ_INT(values__parse_u64("42", 1, 100, &v), 0);
	CHECK_EQ_INT(v, 42);
	CHECK_EQ_INT(values__parse_u64("18446744073709551615", 0, UINT64_MAX, &v), 0);
	CHECK(v == UINT64_MAX);
	const char *bad[] = { "", "-1", "+1", "101", "0", "1x", "18446744073709551616" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		if (values__parse_u64(bad[i], 1, 100, &v) != -EINVAL || v != 7) {
			printf("  '%s' accepted (or *out written)\n", bad[i]);
			return false;
		}
	}
	CHECK_EQ_INT(values__parse_u64(NULL, 0, 1, &v), -EINVAL);
	return true;
}

static bool lists(void)
{
	int *v, n;

	CHECK_EQ_INT(values__parse_list("5,1-3,2", &v, &n, 100), 0);
	CHECK_EQ_INT(n, 4);
	CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 5);
	free(v);
	/* Past the first allocation: the list grows, in order, unique. */
	CHECK_EQ_INT(values__parse_list("0-999,500-1000", &v, &n, 1000), 0);
	CHECK_EQ_INT(n, 1001);
	for (int i = 0; i < n; i++)
		CHECK_EQ_INT(v[i], i);
	free(v);
	CHECK(values__parse_list("1-", &v, &n, 100) < 0);
	CHECK(values__parse_list("101", &v, &n, 100) < 0);
	CHECK(values__parse_list(",", &v, &n, 100) < 0);
	CHECK(values__parse_list("-1", &v, &n, 100) < 0);
	CHECK(values__parse_list("3-1", &v, &n, 100) < 0);
	CHECK(values__parse_list("", &v, &n, 100) < 0);
	return true;
}

static bool seconds(void)
{
	double d = -1;

	CHECK_EQ_INT(values__parse_seconds("0.5", 0, 10, &d), 0);
	CHECK(d == 0.5);
	CHECK_EQ_INT(values__parse_seconds("10", 1, 10, &d), 0);
	CHECK(d == 10);
	const char *bad[] = { "", "0", "-1", "10.01", "nan", "inf", "1s", "0.5" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = -1;
		if (values__parse_seconds(bad[i], 1, 10, &d) != -EINVAL || d != -1) {
			printf("  '%s' accepted (or *out written)\n", bad[i]);
			return false;
		}
	}
	return true;
}

static bool rates(void)
{
	char err[256] = "";
	uint64_t hz = 0;

	CHECK_EQ_INT(values__parse_freq("-F ", "999", &hz, err, sizeof(err)), 0);
	CHECK_EQ_INT(hz, 999);
	CHECK_EQ_INT(values__parse_freq("-F ", "100000", &hz, err, sizeof(err)), 0);
	CHECK_EQ_INT(hz, MAX_FREQ);
	/* "max" is the kernel's limit, never more than MAX_FREQ. */
	CHECK_EQ_INT(values__parse_freq("-F ", "max", &hz, err, sizeof(err)), 0);
	CHECK(hz >= 1 && hz <= MAX_FREQ);
	CHECK_EQ_INT(values__parse_freq("-F ", "0", &hz, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "bad frequency '-F 0': want 1..100000 Hz or max");
	CHECK_EQ_INT(values__parse_freq("hz=", "100001", &hz, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "bad frequency 'hz=100001': want 1..100000 Hz or max");
	CHECK_EQ_INT(values__parse_freq("-F ", "1k", &hz, err, sizeof(err)), -EINVAL);
	return true;
}

static bool addresses(void)
{
	const struct { const char *in, *host; int family, port; } good[] = {
		{ ":6060", "127.0.0.1", AF_INET, 6060 },
		{ "localhost:80", "127.0.0.1", AF_INET, 80 },
		{ "0.0.0.0:0", "0.0.0.0", AF_INET, 0 },
		{ "10.1.2.3:65535", "10.1.2.3", AF_INET, 65535 },
		{ "[::1]:6060", "[::1]", AF_INET6, 6060 },
		{ "[::]:1", "[::]", AF_INET6, 1 },
	};
	const char *bad[] = {
		"6060", "", ":", "host.example:6060", "1.2.3.4:65536", "1.2.3.4:",
		"1.2.3.4:-1", "1.2.3.4:+1", "1.2.3.4: 1", ":6060x", "::1:6060",
		"[::1]6060", "[::1]:", "[127.0.0.1]:80", "[]:80", "1.2.3:80",
		"localhost6:80", "[::1:80",
	};
	struct listen_addr a;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		CHECK_EQ_INT(values__parse_listen(good[i].in, &a), 0);
		CHECK_STR(a.host, good[i].host);
		CHECK_EQ_INT(a.ss.ss_family, good[i].family);
		CHECK_EQ_INT(a.port, good[i].port);
		CHECK_EQ_INT(ntohs(((struct sockaddr_in *)&a.ss)->sin_port), good[i].port);
		CHECK_EQ_INT(a.len, good[i].family == AF_INET ? sizeof(struct sockaddr_in)
							       : sizeof(struct sockaddr_in6));
	}
	/* Empty means loopback, never every interface. */
	CHECK_EQ_INT(values__parse_listen(":1", &a), 0);
	CHECK_EQ_INT(ntohl(((struct sockaddr_in *)&a.ss)->sin_addr.s_addr), INADDR_LOOPBACK);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (values__parse_listen(bad[i], &a) != -EINVAL) {
			printf("  '%s' accepted\n", bad[i]);
			return false;
		}
	return true;
}

TEST_MAIN("values", TEST(numbers), TEST(lists), TEST(seconds), TEST(rates), TEST(addresses))
