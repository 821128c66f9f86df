/* unwind_slots.c — the process slots' life (see unwind_int.h): a slot
 * retired when its process is replaced or gone, freed after its grace
 * period, its tables' references dropped then. Calls nothing in
 * unwind.c: the tables side calls in here. */
#include <bpf/bpf.h>
#include <stdlib.h>
#include "lib/clock.h"
#include "unwind_int.h"

/* Slot s is free: its tables lose a reference. */
static void unref_slot(struct unwind *u, struct slot *sl)
{
	for (uint32_t k = 0; k < sl->ntix; k++)
		if (sl->tix[k] != NO_TAB)
			u->tabs[sl->tix[k]].refs--;
	free(sl->tix);
	sl->tix = NULL;
	sl->ntix = 0;
}

/* Free slots no process points at any more: retired ones (replaced, or
 * their process gone) once past the grace period, and current ones whose
 * pid entry BPF deleted (exit, exec) before procs.c noticed. */
void unwind_slots__sweep(struct unwind *u)
{
	int64_t now = mono_ns();

	for (uint32_t s = 0; s < u->m.max_slots; s++) {
		struct slot *sl = &u->slots[s];
		struct pmubpf_upid v;

		if (!sl->used)
			continue;
		if (sl->retired_ns) {
			if (now - sl->retired_ns < SLOT_GRACE_NS)
				continue;
		} else if (!bpf_map_lookup_elem(u->m.pids_fd, &sl->tgid, &v) && v.slot == s) {
			continue;
		} else {
			u->st.slots_used--;
			u->releases++;
		}
		sl->used = false;
		unref_slot(u, sl);
		u->free_slots[u->nfree++] = s;
	}
}

/* Take slot s out of service: BPF may still be reading it, so it is
 * reused only after the grace period (unwind_slots__sweep). */
void unwind_slots__retire(struct unwind *u, uint32_t s)
{
	u->releases++;
	u->slots[s].retired_ns = mono_ns();
	u->st.slots_used--;
}

int unwind_slots__current(const struct unwind *u, uint32_t tgid)
{
	for (uint32_t s = 0; s < u->m.max_slots; s++)
		if (u->slots[s].used && !u->slots[s].retired_ns && u->slots[s].tgid == tgid)
			return (int)s;
	return -1;
}

/* pr exited or exec'd (procs.c found its generation gone): its slot goes
 * back. BPF's exit and exec tracepoints delete the pid entry, but not one
 * published after they ran: a process that died within milliseconds of
 * its first sample, before its maps were read and its slot filled, left
 * an entry nothing would delete, and under process churn such entries
 * held every slot. Only userspace writes pid entries, so an entry that
 * still points at the slot is this generation's and is deleted here. */
void unwind_slots__release(struct unwind *u, const struct proc *pr)
{
	int s = unwind_slots__current(u, pr->tgid);
	struct pmubpf_upid v;

	if (s < 0 || u->slots[s].pgen != pr->pgen)
		return;
	if (!bpf_map_lookup_elem(u->m.pids_fd, &pr->tgid, &v) && v.slot == (uint32_t)s &&
	    !bpf_map_delete_elem(u->m.pids_fd, &pr->tgid))
		u->st.slots_orphaned++;
	unwind_slots__retire(u, (uint32_t)s);
}
