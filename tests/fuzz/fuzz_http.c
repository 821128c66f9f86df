/* fuzz_http.c — libFuzzer target: an HTTP request as --http reads it
 * (user/http/httpd_proto.c): the end of the header block, the request
 * line, the query string, percent-decoding and the profile parameters
 * (events against a fake sysfs tree). The input is the bytes received,
 * cut at HTTPD_MAX_REQUEST as the reader does. */
#include "fuzz.h"
#include "http/httpd.h"
#include "config/values.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config base, out;
	struct httpd_params p;
	struct httpd_req r;
	struct listen_addr a;
	char err[512];

	if (size > HTTPD_MAX_REQUEST)
		size = HTTPD_MAX_REQUEST;
	char *buf = fuzz_cstr(data, size);
	size_t end = httpd__header_end(buf, size);
	if (end > size)
		abort();
	if (end)
		buf[end] = '\0';
	memset(&r, 0, sizeof(r));
	err[0] = '\0';
	if (httpd__parse_request(buf, &r, err, sizeof(err)) == 0) {
		if (!memchr(r.shown, 0, sizeof(r.shown)))
			abort();
		if (r.query) {
			err[0] = '\0';
			if (httpd__parse_query(r.query, &p, err, sizeof(err)) == 0) {
				memset(&base, 0, sizeof(base));
				base.freq = 999;
				(void)httpd__profile_config(&base, &p, fuzz_sysfs(), &out,
							    err, sizeof(err));
			} else if (fuzz_bad_err(err, data, size)) {
				abort();
			}
		}
	} else if (fuzz_bad_err(err, data, size)) {
		abort();
	}
	free(buf);
	/* The same bytes as an --http address. */
	buf = fuzz_cstr(data, size < 128 ? size : 128);
	(void)values__parse_listen(buf, &a);
	(void)httpd__percent_decode(buf);
	free(buf);
	return 0;
}
