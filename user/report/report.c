/* report.c — see report.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "pprof/pprof.h"
#include "build.h"
#include "drain.h"
#include "entries.h"
#include "report.h"
#include "top.h"

void report__output_path(const struct config *cfg, int ev, char *buf, size_t len)
{
	const char *out = cfg->output, *slash = strrchr(out, '/');
	const char *base = slash ? slash + 1 : out;
	const char *want = cfg->format == FORMAT_FOLDED ? FOLDED_SUFFIX : ".pb.gz";
	size_t stem;

	/* DIR/ names a directory, which a one-shot recording refuses
	 * (checked before it starts) with one event or several: with
	 * several it made DIR/.EVENT, hidden and without an extension. */
	if (cfg->nevents == 1 || !*base) {
		snprintf(buf, len, "%s", out);
		return;
	}
	const char *ext = strstr(base, want);
	if (ext && ext[strlen(want)] == '\0')
		stem = (size_t)(ext - out);
	else
		stem = strlen(out), ext = "";
	snprintf(buf, len, "%.*s.%s%s", (int)stem, out, cfg->events[ev].file_tag, ext);
}

void report__window_path(const struct config *cfg, int ev, int64_t stamp, char *buf, size_t len,
			 char *prefix, size_t prefix_len)
{
	const char *out = cfg->output, *slash = strrchr(out, '/');
	const char *suffix = cfg->format == FORMAT_FOLDED ? FOLDED_SUFFIX : ".pb.gz";
	const char *base = slash ? slash + 1 : out, *ext = strstr(base, suffix);
	char pre[4096], st[REPORT_STAMP_LEN + 1];
	time_t secs = (time_t)(stamp / 1000000000);
	struct tm tm;
	struct stat sb;
	size_t stem = ext && ext[strlen(suffix)] == '\0' ? (size_t)(ext - out) : strlen(out);

	if (!*base || (stat(out, &sb) == 0 && S_ISDIR(sb.st_mode)))
		snprintf(pre, sizeof(pre), "%s%spmubpf.%s.", out, *base ? "/" : "",
			 cfg->events[ev].file_tag);
	else
		snprintf(pre, sizeof(pre), "%.*s.%s.", (int)stem, out, cfg->events[ev].file_tag);
	gmtime_r(&secs, &tm);
	strftime(st, sizeof(st), "%Y%m%dT%H%M%SZ", &tm);
	snprintf(buf, len, "%s%s%s", pre, st, suffix);
	if (prefix)
		snprintf(prefix, prefix_len, "%s", pre);
}

void report__data_path(const struct config *cfg, int ev, int64_t stamp, char *buf, size_t len)
{
	char code[4096], prefix[4096];

	if (stamp) { /* NAME.TAG.data.STAMP.pb.gz: --keep counts them apart */
		report__window_path(cfg, ev, stamp, code, sizeof(code), prefix, sizeof(prefix));
		snprintf(buf, len, "%sdata.%s", prefix, code + strlen(prefix));
		return;
	}
	report__output_path(cfg, ev, code, sizeof(code));
	const char *want = cfg->format == FORMAT_FOLDED ? FOLDED_SUFFIX : ".pb.gz";
	size_t n = strlen(code), k = strlen(want);
	if (n > k && !strcmp(code + n - k, want))
		snprintf(buf, len, "%.*s.data%s", (int)(n - k), code, want);
	else
		snprintf(buf, len, "%s.data", code);
}

/* What was written, then every note meant for stderr, in the words of
 * the profile's comments. */
static void say_event(FILE *say, const char *event, const struct report_built *b,
		      const char *path)
{
	fprintf(say, "pmubpf: %s: %llu samples (%zu distinct) -> %s\n", event,
		(unsigned long long)b->nsamples, b->distinct, path);
	for (int i = 0; i < b->notes.n; i++)
		if (b->notes.v[i].on_stderr)
			fprintf(say, "pmubpf: %s: %s\n", event, b->notes.v[i].text);
}

static int write_event(const struct report_in *in, const struct report_data *d, int ev,
		       FILE *say, FILE *top_out, char *err, size_t errlen)
{
	if (in->data_profile)
		top_out = NULL; /* --top ranks code */
	const struct config *cfg = in->cfg;
	const struct pmubpf_event *e = &cfg->events[ev];
	struct top *top = NULL;
	struct report_built b;
	char path[4096];
	int ret;

	if (cfg->top && top_out && !(top = top__new())) {
		snprintf(err, errlen, "out of memory building the profile");
		return -ENOMEM;
	}
	ret = report__build(in, d, ev, top, &b, err, errlen);
	if (ret) {
		top__free(top);
		return ret;
	}
	if (in->data_profile)
		report__data_path(cfg, ev, in->file_stamp, path, sizeof(path));
	else if (in->file_stamp)
		report__window_path(cfg, ev, in->file_stamp, path, sizeof(path), NULL, 0);
	else
		report__output_path(cfg, ev, path, sizeof(path));
	ret = cfg->format == FORMAT_FOLDED ? pprof__write_folded(b.p, path, "comm")
					   : pprof__write(b.p, path);
	if (ret == -EINTR) { /* pprof.h: a FIFO's reader never came */
		snprintf(err, errlen, "no reader opened the FIFO '%s' before the signal: the profile is in '%s" PPROF_UNREAD "'",
			 path, path);
	} else if (ret) {
		snprintf(err, errlen, "writing '%s': %s", path, strerror(-ret));
	} else {
		if (in->samples && !in->data_profile)
			*in->samples += b.nsamples;
		if (say)
			say_event(say, e->name, &b, path);
		if (in->built && !in->data_profile)
			in->built(in->built_ctx, ev, b.p);
		if (top)
			top__print(top, top_out, e->name, e->value_type, e->value_unit, cfg->top);
	}
	top__free(top);
	pprof__free(b.p);
	return ret;
}

int report__write_data(const struct report_in *in, const struct report_data *d,
		       FILE *say, FILE *top_out, char *err, size_t errlen)
{
	int ret = 0, nev = in->cfg->nevents;
	struct report_in code = *in, din;

	if (in->kname) { /* asked once for every profile of d */
		code.ksyms = report__kernel_names(in, d);
		code.kname = NULL;
	}
	din = code;
	din.data_profile = true;
	for (int ev = 0; !ret && ev < nev; ev++) {
		/* --data-addr: each sampling event's data profile beside it. */
		bool data = in->data && !in->cfg->events[ev].member;

		/* in->last: only the last profile built may give back what
		 * names frames (the others would load it again). */
		code.last = in->last && ev == nev - 1 && !data;
		din.last = in->last && ev == nev - 1;
		ret = write_event(&code, d, ev, say, top_out, err, errlen);
		if (!ret && data)
			ret = write_event(&din, d, ev, say, top_out, err, errlen);
	}
	if (in->kname)
		ksyms__free(code.ksyms);
	return ret;
}
