/* icount — ground truth for a cycles profile under qemu's -icount shift=0
 * (tests/integration/arm64hw.sh, make test-arm64): there every
 * instruction takes one cycle of the emulated Armv8 PMU, so a function's
 * cycles are the instructions it executes, known from this code.
 *
 * Each round calls spin_a, spin_b and spin_c with 1, 2 and 3 times
 * ITERS iterations of a two-instruction loop (subs, b.ne): 2, 4 and 6
 * x ITERS instructions, shares 1/6, 2/6, 3/6 of the loops' cycles. What
 * surrounds the loops (calls, the round's loop, returns) is under ten
 * instructions a call, one in 10^4 of a loop at the default ITERS.
 *
 *   icount ROUNDS [ITERS]   run ROUNDS rounds, print "truth FUNC N", the instructions
 *                           each function executed, exit
 *   icount -w               write the pid to stdout, then run rounds
 *                           until killed (for -p and -a)
 */
#if !defined(__aarch64__)
#error "icount's loops are aarch64 instructions"
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_ITERS 100000

/* n iterations of: subs x, x, #1; b.ne 1b — 2n instructions. */
#define SPIN(n)                                                              \
	do {                                                                 \
		uint64_t _n = (n);                                           \
		__asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b"             \
				 : "+r"(_n)                                  \
				 :                                           \
				 : "cc");                                    \
	} while (0)

__attribute__((noinline)) void spin_a(uint64_t iters) { SPIN(iters); }
__attribute__((noinline)) void spin_b(uint64_t iters) { SPIN(2 * iters); }
__attribute__((noinline)) void spin_c(uint64_t iters) { SPIN(3 * iters); }

__attribute__((noinline)) static void round_once(uint64_t iters)
{
	spin_a(iters);
	spin_b(iters);
	spin_c(iters);
}

int main(int argc, char **argv)
{
	uint64_t iters = DEFAULT_ITERS;

	if (argc == 2 && !strcmp(argv[1], "-w")) {
		printf("%d\n", getpid());
		fflush(stdout);
		for (;;)
			round_once(iters);
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: icount ROUNDS [ITERS] | icount -w\n");
		return 2;
	}
	uint64_t rounds = strtoull(argv[1], NULL, 0);
	if (argc == 3)
		iters = strtoull(argv[2], NULL, 0);
	if (!rounds || !iters) {
		fprintf(stderr, "icount: ROUNDS and ITERS are positive\n");
		return 2;
	}
	for (uint64_t r = 0; r < rounds; r++)
		round_once(iters);
	printf("truth spin_a %llu\ntruth spin_b %llu\ntruth spin_c %llu\n",
	       (unsigned long long)(2 * iters * rounds),
	       (unsigned long long)(4 * iters * rounds),
	       (unsigned long long)(6 * iters * rounds));
	return 0;
}
