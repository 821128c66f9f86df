/* start.c — the senders a recording's options ask for (push.h,
 * push__start_all): --push and --otlp, with the same --push-* options.
 */
#include <stdio.h>

#include "config/config.h"
#include "lib/token.h"
#include "push.h"

int push__start_all(const struct config *cfg, struct push *out[2], char *err, size_t errlen)
{
	const char *urls[2] = { cfg->push_url, cfg->otlp_url };
	char token[4098];
	struct push_opts po = {
		.service = cfg->push_service, .nheaders = cfg->npush_headers, .ca = cfg->push_ca,
		.queue_bytes = (size_t)(cfg->push_queue_mib * 1048576),
	};

	out[0] = out[1] = NULL;
	for (int i = 0; i < cfg->npush_headers && i < PUSH_MAX_HEADERS; i++)
		po.headers[i] = cfg->push_headers[i];
	if ((urls[0] || urls[1]) && cfg->push_token_file) {
		if (token__read(cfg->push_token_file, "--push-token-file", token, sizeof(token),
				err, errlen))
			return -1;
		po.token = token;
	}
	for (int i = 0; i < 2; i++) {
		if (!urls[i])
			continue;
		po.url = urls[i];
		po.kind = i ? PUSH_OTLP : PUSH_PYROSCOPE;
		if (!(out[i] = push__new(&po, err, errlen))) {
			push__close(out[0], 0, NULL);
			out[0] = NULL;
			return -1;
		}
	}
	return 0;
}
