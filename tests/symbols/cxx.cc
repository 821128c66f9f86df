// cxx.cc — C++ workload of the symbols tests: the hot loop is a member
// function in a namespace, so its symbol is mangled
// (_ZN6pmutst7Spinner4spinEm) and the profile must show it demangled
// (pmutst::Spinner::spin(unsigned long)) with the mangled name kept as
// the function's system name. Usage: cxx SECONDS
#include <chrono>
#include <cstdlib>

namespace pmutst {
struct Spinner {
	unsigned long state = 1;
	__attribute__((noinline)) unsigned long spin(unsigned long n);
};

unsigned long Spinner::spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		state = state * 6364136223846793005UL + (state >> 5) + i;
	return state;
}
} // namespace pmutst

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 1.0;
	auto t0 = std::chrono::steady_clock::now();
	pmutst::Spinner s;
	static volatile unsigned long sink;

	while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < secs)
		sink = s.spin(100000);
	return 0;
}
