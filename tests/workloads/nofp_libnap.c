/* nofp_libnap.c — a command whose first waits are in a library it links
 * (issue 39: the libraries of `--`'s command built before its exec):
 *
 *   nofp_libnap MS N    lib_nap(MS) N times (libnofpnap.so, no frame
 *                       pointers; this binary has none either)
 */
#include <stdio.h>
#include <stdlib.h>

long lib_nap(long ms);

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 30, n = argc > 2 ? atol(argv[2]) : 10, r = 0;

	for (long i = 0; i < n; i++)
		r += lib_nap(ms);
	return r ? 1 : 0;
}
