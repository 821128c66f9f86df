/* loadlog.h — what the kernel said when it refused a BPF program.
 *
 * libbpf reports a refused program through its print callback: "prog
 * 'NAME': BPF program load failed: ERR", then the verifier's log between
 * "-- BEGIN PROG LOAD LOG --" and "-- END PROG LOAD LOG --". A refusal by
 * the verifier and a missing capability both come back as EACCES or
 * EPERM; only the log tells them apart (a capability is checked before
 * the verifier runs, so it leaves no log). loadlog__feed takes every
 * message libbpf prints, whatever the verbosity, and keeps the last
 * refused program's name and the verifier's last line of substance. */
#ifndef PMUBPF_LOADLOG_H
#define PMUBPF_LOADLOG_H

#include <stdbool.h>
#include <stddef.h>

struct loadlog {
	char prog[64];   /* the refused program, "" if none */
	char last[256];  /* the verifier's last line (its reason), "" if none */
};

/* libbpf's print callback (process-wide): every message it warns of is
 * fed to loadlog__process()'s log; printed at -v, its debug messages
 * too at -vv. */
void loadlog__install(int verbosity);
/* The process's log, which libbpf's messages feed. */
struct loadlog *loadlog__process(void);

/* Forget what was kept (before a load). */
void loadlog__reset(struct loadlog *l);
/* One message of libbpf's, formatted. */
void loadlog__feed(struct loadlog *l, const char *msg);
/* Did the kernel's verifier refuse a program (a log came back)? */
bool loadlog__refused(const struct loadlog *l);
/* "the kernel refused BPF program 'NAME': LAST" into buf. */
void loadlog__describe(const struct loadlog *l, char *buf, size_t size);

#endif
