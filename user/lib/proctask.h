/* proctask.h — whether a task lives, and which thread of a process does,
 * from /proc: a process whose main thread left first (pthread_exit) is a
 * zombie leader with threads running on, and its /proc/TGID shows no maps
 * and takes no memory reads; one of those threads' ids does.
 */
#ifndef PMUBPF_PROCTASK_H
#define PMUBPF_PROCTASK_H

#include <stdbool.h>
#include <sys/types.h>

/* The task id (a process's or a thread's: /proc/ID works for both) is
 * there and not a zombie. */
bool proctask__alive(pid_t id);

/* A live thread of process tgid: tgid itself if its leader lives, else
 * the first live one of /proc/TGID/task other than skip; 0: none. */
pid_t proctask__live_thread(pid_t tgid, pid_t skip);

#endif
