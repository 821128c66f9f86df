/* fuzz_http.c — libFuzzer target: what --http parses of a request itself
 * (libmicrohttpd parses the request line and headers): the profile
 * parameters (seconds, event, nosymbol, hz, the EVENT of
 * /debug/pprof/EVENT) against two recorded events, the Authorization
 * header against a token, and the same bytes as a --http address. The
 * input is split at NUL bytes into those fields. */
#include "fuzz.h"
#include "http/httpd.h"
#include "config/values.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *f[6] = { NULL };
	struct config cfg;
	struct httpd_profile out;
	struct listen_addr a;
	char err[512];
	char *buf = fuzz_cstr(data, size);
	size_t i = 0;

	/* Up to six NUL-separated fields; an empty one stands for "not given". */
	for (int k = 0; k < 6 && i <= size; k++) {
		f[k] = buf[i] ? buf + i : NULL;
		i += strlen(buf + i) + 1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.nevents = 2;
	snprintf(cfg.events[0].name, sizeof(cfg.events[0].name), "cpu-clock");
	snprintf(cfg.events[0].file_tag, sizeof(cfg.events[0].file_tag), "cpu-clock");
	snprintf(cfg.events[1].name, sizeof(cfg.events[1].name), "cache-misses:u");
	snprintf(cfg.events[1].file_tag, sizeof(cfg.events[1].file_tag), "cache-misses_u");
	err[0] = '\0';
	if (httpd__profile_params(&cfg, f[0], f[1], f[2], f[3], f[4], &out, err, sizeof(err)) == 0) {
		if (out.event < 0 || out.event >= cfg.nevents ||
		    !(out.seconds >= 1 && out.seconds <= HTTPD_MAX_SECONDS))
			abort(); /* accepted means in range */
	} else if (fuzz_bad_err(err, data, size)) {
		abort(); /* an error is one line, always given */
	}
	(void)httpd__find_event(&cfg, f[0] ? f[0] : "");
	if (f[5])
		(void)httpd__bearer_ok(f[5], "s3cr3t-token");
	/* The same bytes as an --http address. */
	free(buf);
	buf = fuzz_cstr(data, size < 128 ? size : 128);
	if (values__parse_listen(buf, &a) == 0)
		(void)httpd__is_loopback(&a);
	free(buf);
	return 0;
}
