/* testing.h — the tiny assert header of pmubpf's unit tests.
 *
 * Each test is a `static bool name(void)` that returns false at the first
 * failed CHECK (printing file:line and the expression). TEST_MAIN runs a
 * table of them and prints one line per test, which tests/run.sh counts:
 *   PASS name | FAIL name: reason | SKIP name: reason
 */
#ifndef PMUBPF_TESTING_H
#define PMUBPF_TESTING_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *testing__skip_reason;

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stdout, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
	return false; } } while (0)
#define CHECK_EQ_INT(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) { fprintf(stdout, "  %s:%d: %s == %lld, want %s == %lld\n", \
	__FILE__, __LINE__, #a, _a, #b, _b); return false; } } while (0)
#define CHECK_STR(a, b) do { const char *_a = (a), *_b = (b); \
	if (!_a || !_b || strcmp(_a, _b)) { fprintf(stdout, "  %s:%d: %s == \"%s\", want \"%s\"\n", \
	__FILE__, __LINE__, #a, _a ? _a : "(null)", _b ? _b : "(null)"); return false; } } while (0)
/* Mark the running test skipped (return true after it). */
#define SKIP(reason) do { testing__skip_reason = (reason); return true; } while (0)

struct testing_case { const char *name; bool (*fn)(void); };

static inline int testing__run(const char *suite, const struct testing_case *t, int n)
{
	int failed = 0;
	for (int i = 0; i < n; i++) {
		testing__skip_reason = NULL;
		fflush(stdout);
		bool ok = t[i].fn();
		if (!ok) {
			printf("FAIL %s.%s\n", suite, t[i].name);
			failed++;
		} else if (testing__skip_reason) {
			printf("SKIP %s.%s: %s\n", suite, t[i].name, testing__skip_reason);
		} else {
			printf("PASS %s.%s\n", suite, t[i].name);
		}
	}
	return failed ? 1 : 0;
}

#define TEST(fn) { #fn, fn }
#define TEST_MAIN(suite, ...) int main(void) { \
	static const struct testing_case cases[] = { __VA_ARGS__ }; \
	setvbuf(stdout, NULL, _IOLBF, 0); \
	return testing__run(suite, cases, (int)(sizeof(cases) / sizeof(cases[0]))); }

#endif
