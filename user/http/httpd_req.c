/* httpd_req.c — what a request asks for and whether it may: parameters,
 * events, the bearer token (see httpd.h). Client bytes are read here;
 * libmicrohttpd has parsed and percent-decoded them already.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "lib/errmsg.h"
#include "httpd.h"

int httpd__find_event(const struct config *cfg, const char *name)
{
	for (int e = 0; name && e < cfg->nevents; e++)
		if (!strcmp(cfg->events[e].name, name) || !strcmp(cfg->events[e].file_tag, name))
			return e;
	return -1;
}

/* "cpu-clock, task-clock" for messages. */
static void event_list(const struct config *cfg, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int e = 0; e < cfg->nevents && n < len; e++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", e ? ", " : "", cfg->events[e].name);
}

int httpd__profile_params(const struct config *cfg, const char *path_event,
			  const char *seconds, const char *event, const char *nosymbol,
			  const char *hz, struct httpd_profile *out, char *err, size_t errlen)
{
	char list[512];

	*out = (struct httpd_profile){ .seconds = HTTPD_DEFAULT_SECONDS };
	if (seconds && values__parse_seconds(seconds, 1, HTTPD_MAX_SECONDS, &out->seconds))
		return errmsg(err, errlen, "bad duration 'seconds=%.64s': want seconds from 1 to %d",
			      seconds, HTTPD_MAX_SECONDS);
	if (hz)
		return errmsg(err, errlen, "hz= is not taken: every request is answered from one recording at the server's rate (start it with -F to change it)");
	if (path_event && event && httpd__find_event(cfg, event) != httpd__find_event(cfg, path_event))
		return errmsg(err, errlen, "event=%.64s contradicts the path's event '%.64s'", event, path_event);
	if (!event)
		event = path_event;
	if (event) {
		out->event = httpd__find_event(cfg, event);
		if (out->event < 0) {
			event_list(cfg, list, sizeof(list));
			return errmsg(err, errlen, "event '%.64s' is not recorded by this server (it records %s; start it with -e EVENT for others)",
				      event, list);
		}
	}
	if (nosymbol) {
		if (!strcmp(nosymbol, "1") || !strcmp(nosymbol, "true"))
			out->nosymbol = true;
		else if (strcmp(nosymbol, "0") && strcmp(nosymbol, "false"))
			return errmsg(err, errlen, "bad 'nosymbol=%.64s': want 1 or 0", nosymbol);
	}
	return 0;
}

bool httpd__bearer_ok(const char *auth, const char *token)
{
	size_t tlen = strlen(token), glen, i;
	unsigned char diff = 0;

	if (!auth)
		return false;
	while (*auth == ' ' || *auth == '\t')
		auth++;
	if (strncasecmp(auth, "Bearer", 6) || (auth[6] != ' ' && auth[6] != '\t'))
		return false;
	auth += 6;
	while (*auth == ' ' || *auth == '\t')
		auth++;
	glen = strlen(auth);
	while (glen && (auth[glen - 1] == ' ' || auth[glen - 1] == '\t'))
		glen--;
	/* Every byte of the token is compared whatever came before; a guess
	 * of another length compares against the token itself and fails on
	 * the length alone. */
	for (i = 0; i < tlen; i++)
		diff |= (unsigned char)(token[i] ^ (i < glen ? auth[i] : token[i] ^ 0xff));
	return (diff | (glen != tlen)) == 0;
}

bool httpd__is_loopback(const struct listen_addr *a)
{
	if (a->ss.ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)&a->ss)->sin_addr.s_addr) >> 24) == 127;
	if (a->ss.ss_family == AF_INET6) {
		const struct in6_addr *x = &((const struct sockaddr_in6 *)&a->ss)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(x) ||
		       (IN6_IS_ADDR_V4MAPPED(x) && x->s6_addr[12] == 127);
	}
	return false;
}
