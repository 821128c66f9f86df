/* events_open.c — an event's perf_event_open, for `pmubpf list` and for
 * the one-line reason when a recording cannot open it: "not supported on
 * this machine (no hardware PMU ...)", "counts but cannot sample",
 * "precise level N not supported", permission, file limits. Split from
 * events.c (parsing), which it does not call.
 */
#include "events.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "lib/errmsg.h"

/* ---- opening ----------------------------------------------------------- */

/* Whether ev opens as a counter (no sample period): for an event that
 * failed to open for sampling, tells "cannot sample" from "absent". */
static bool counts_only(const struct pmubpf_event *ev)
{
	struct perf_event_attr attr = ev->attr;
	int fd;

	attr.size = sizeof(attr);
	attr.disabled = 1;
	attr.sample_period = 0;
	attr.freq = 0;
	attr.precise_ip = 0;
	fd = (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Whether this machine has a CPU PMU that samples: a cycles counter opens
 * for sampling. Tells "no PMU at all" (a VM) from "a PMU without this
 * event" (qemu's Armv8 PMU has cycles but no cache events; a CPU model
 * without a raw code). Asked once. */
static bool cpu_pmu_samples(void)
{
	static int known = -1;

	if (known < 0) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_HARDWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_HW_CPU_CYCLES,
			.sample_period = 1000000,
			.disabled = 1,
		};
		int fd = (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

		known = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	return known;
}

/* The reason alone, without the "event 'X': " prefix. */
static void open_reason(const struct pmubpf_event *ev, int e, char *buf,
			size_t len)
{
	__u32 t = ev->attr.type;
	bool legacy = t == PERF_TYPE_HARDWARE || t == PERF_TYPE_HW_CACHE ||
		      t == PERF_TYPE_RAW;

	if ((e == EOPNOTSUPP || e == EINVAL) && !ev->attr.precise_ip && counts_only(ev)) {
		snprintf(buf, len,
			 "counts but cannot sample (this PMU has no overflow interrupt): pmubpf needs a sampling event");
	} else if (ev->attr.precise_ip && (e == EOPNOTSUPP || e == EINVAL)) {
		snprintf(buf, len,
			 "precise level %u (:%.*s) not supported on this machine: try fewer p",
			 (unsigned)ev->attr.precise_ip,
			 (int)ev->attr.precise_ip, "ppp");
	} else if (ev->hardware &&
		   (e == ENOENT || e == EOPNOTSUPP || e == ENODEV ||
		    (e == EINVAL && legacy))) {
		if (cpu_pmu_samples())
			snprintf(buf, len,
				 "not counted by this machine's PMU: 'pmubpf list' shows the events it has");
		else
			snprintf(buf, len,
				 "not supported on this machine (no hardware PMU, e.g. inside a VM): try -e cpu-clock");
	} else if (e == EACCES || e == EPERM) {
		char lvl[16] = "";
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

		if (f) {
			if (!fgets(lvl, sizeof(lvl), f))
				lvl[0] = '\0';
			fclose(f);
			lvl[strcspn(lvl, "\n")] = '\0';
		}
		if (lvl[0])
			snprintf(buf, len,
				 "permission denied: run as root or grant CAP_PERFMON (kernel.perf_event_paranoid=%s)",
				 lvl);
		else
			snprintf(buf, len,
				 "permission denied: run as root or grant CAP_PERFMON");
	} else if (e == EMFILE || e == ENFILE) {
		snprintf(buf, len,
			 "too many open files (one per CPU is needed): raise 'ulimit -n'");
	} else {
		snprintf(buf, len, "perf_event_open: %s", strerror(e));
	}
}

void event__open_error(const struct pmubpf_event *ev, int err_no,
		       char *err, size_t errlen)
{
	char reason[256];

	if (!err || !errlen)
		return;
	if (err_no < 0)
		err_no = -err_no;
	open_reason(ev, err_no, reason, sizeof(reason));
	errmsg(err, errlen, "event '%s': %s", ev->name, reason);
}

int event__probe(const struct pmubpf_event *ev, char *err, size_t errlen)
{
	struct perf_event_attr attr = ev->attr;
	int fd, e;

	if (ev->offcpu) { /* no perf_event; the scheduler tracepoint needs BTF */
		if (access("/sys/kernel/btf/vmlinux", R_OK)) {
			errmsg(err, errlen, "event '%s': needs kernel BTF (/sys/kernel/btf/vmlinux)", ev->name);
			return -ENOENT;
		}
		if (err && errlen)
			err[0] = '\0';
		return 0;
	}
	attr.size = sizeof(attr);
	attr.disabled = 1;
	/* Opened as pmubpf samples it: some PMUs (msr, power) count but
	 * refuse a sample period, and are no use here. */
	attr.sample_period = ev->tracepoint ? 1 : 1000000;
	fd = (int)syscall(__NR_perf_event_open, &attr, 0, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		e = errno;
		event__open_error(ev, e, err, errlen);
		return -e;
	}
	close(fd);
	if (err && errlen)
		err[0] = '\0';
	return 0;
}
