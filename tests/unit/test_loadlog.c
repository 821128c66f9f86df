/* test_loadlog.c — a verifier's refusal named from libbpf's messages,
 * told apart from a missing capability (record/loadlog.h). The messages
 * are libbpf 1.1's, with logs the verifiers of Debian 12's 6.1, 13's
 * 6.12 and 11's 5.10 gave pmubpf's on_sample. */
#include "testing.h"
#include "record/loadlog.h"

static bool stack_refusal_6_1(void)
{
	struct loadlog l;
	char buf[512];

	loadlog__reset(&l);
	loadlog__feed(&l, "libbpf: prog 'on_sample': BPF program load failed: Permission denied\n");
	CHECK(!loadlog__refused(&l)); /* a failure, no log yet */
	loadlog__feed(&l, "libbpf: prog 'on_sample': -- BEGIN PROG LOAD LOG --\n"
			  "0: R1=ctx() R10=fp0\n"
			  "; int on_sample(struct bpf_perf_event_data *ctx)\n"
			  "combined stack size of 3 calls is 576. Too large\n"
			  "processed 355956 insns (limit 1000000) max_states_per_insn 19 total_states 8579 "
			  "peak_states 1965 mark_read 55\n"
			  "-- END PROG LOAD LOG --\n");
	CHECK(loadlog__refused(&l));
	CHECK_STR(l.prog, "on_sample");
	CHECK_STR(l.last, "combined stack size of 3 calls is 576. Too large");
	loadlog__describe(&l, buf, sizeof(buf));
	CHECK_STR(buf, "the kernel refused BPF program 'on_sample': combined stack size of 3 calls is 576. Too large");
	return true;
}

/* Newer verifiers end with more summary lines; the reason is above them. */
static bool summary_lines_skipped(void)
{
	struct loadlog l;

	loadlog__reset(&l);
	loadlog__feed(&l, "libbpf: prog 'on_switch': -- BEGIN PROG LOAD LOG --\n"
			  "857: (79) r1 = *(u64 *)(r2 +0)\n"
			  "dereference of modified ctx ptr R2 off=32 disallowed\n"
			  "verification time 20771 usec\n"
			  "stack depth 240+0\n"
			  "processed 1939 insns (limit 1000000) max_states_per_insn 2 total_states 140\n"
			  "\n"
			  "-- END PROG LOAD LOG --\n");
	CHECK_STR(l.prog, "on_switch");
	CHECK_STR(l.last, "dereference of modified ctx ptr R2 off=32 disallowed");
	return true;
}

/* A missing capability: the kernel refuses before verifying, libbpf says
 * the load failed and prints no log. Not a refusal by the verifier. */
static bool capability_is_not_refusal(void)
{
	struct loadlog l;

	loadlog__reset(&l);
	loadlog__feed(&l, "libbpf: prog 'on_sample': BPF program load failed: Operation not permitted\n");
	loadlog__feed(&l, "libbpf: failed to load object 'pmubpf_bpf'\n");
	CHECK(!loadlog__refused(&l));
	/* An empty log (the capability case on some kernels) neither. */
	loadlog__feed(&l, "libbpf: prog 'on_sample': -- BEGIN PROG LOAD LOG --\n-- END PROG LOAD LOG --\n");
	CHECK(!loadlog__refused(&l));
	/* And reset forgets an earlier refusal. */
	loadlog__feed(&l, "libbpf: prog 'x': -- BEGIN PROG LOAD LOG --\nbad\n-- END PROG LOAD LOG --\n");
	CHECK(loadlog__refused(&l));
	loadlog__reset(&l);
	CHECK(!loadlog__refused(&l));
	return true;
}

/* A log libbpf cut off (no END line, a log longer than its buffer). */
static bool truncated_log(void)
{
	struct loadlog l;

	loadlog__reset(&l);
	loadlog__feed(&l, "libbpf: prog 'on_sample': -- BEGIN PROG LOAD LOG --\n"
			  "number of funcs in func_info doesn't match number of subprogs\n");
	CHECK_STR(l.last, "number of funcs in func_info doesn't match number of subprogs");
	return true;
}

TEST_MAIN("loadlog", TEST(stack_refusal_6_1), TEST(summary_lines_skipped), TEST(capability_is_not_refusal),
	  TEST(truncated_log))
