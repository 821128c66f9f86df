/* execwin.bpf.h — the execs under way of processes not sampled before:
 * from sched_prepare_exec (the point of no return) to the exec's end,
 * images.bpf.h keeps each one's old image (image_stashes) or notes that
 * it is its parent's (image_likes). Defined here, before the notices
 * (base.bpf.h), so that a process first sampled in that window says so
 * (PMUBPF_NOTICE_F_EXECING): the loader then waits for the image BPF
 * sends at the exec's end instead of reading /proc, which shows the new
 * image by then, on 7.x under the new name too. Empty where images.bpf.h
 * is not loaded (images_on false: its programs never run).
 */
#ifndef PMUBPF_EXECWIN_BPF_H
#define PMUBPF_EXECWIN_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pmubpf_abi.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct pmubpf_image_notice);
	__uint(max_entries, 4096);
} image_stashes SEC(".maps");

struct image_like {
	__u32 tgid, pgen;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32); /* tgid */
	__type(value, struct image_like);
	__uint(max_entries, 4096);
} image_likes SEC(".maps");

/* Is tgid inside an exec past its point of no return, not sampled
 * before it? */
static __always_inline bool exec_unseen(__u32 tgid)
{
	return bpf_map_lookup_elem(&image_likes, &tgid) || bpf_map_lookup_elem(&image_stashes, &tgid);
}

#endif
