/* procs_via.c — the id a process is read through (proc.via): its own,
 * or, where its leader left first (pthread_exit leaves a zombie whose
 * /proc/TGID has no maps, map_files or root), one of its live threads,
 * another one whenever the last one chosen has left too.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/proctask.h"
#include "procs.h"
#include "procs_int.h"

/* Nothing read through pr->via: a leader gone first (a zombie while its
 * other threads run on) shows no maps, and a thread read through since
 * may have left as well. Move to a live thread of the process: true if
 * pr->via changed. */
static bool via_renew(struct proc *pr)
{
	pid_t t = proctask__live_thread((pid_t)pr->tgid, (pid_t)pr->via);

	if (!t || (uint32_t)t == pr->via)
		return false;
	pr->via = (uint32_t)t;
	return true;
}

int procs_read_maps(struct proc *pr, bool exec_only, struct procmaps *maps)
{
	int err = procmaps__read((pid_t)pr->via, exec_only, maps);

	if ((err || !maps->n) && via_renew(pr)) {
		procmaps__free(maps);
		err = procmaps__read((pid_t)pr->via, exec_only, maps);
	}
	return err;
}
