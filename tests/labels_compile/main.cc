// main.cc — C++ main of the labels.h compile/link checks: the same checks
// as main.c plus C++ use (an RAII guard, a captureless lambda passed to
// pmubpf_labels_do).
#include <pmubpf/labels.h>
#include "check.h"

namespace {
class labels_scope { // restores the previous set even on an exception
public:
	explicit labels_scope(const pmubpf_labels *l) : prev_(pmubpf_labels_set(l)) {}
	~labels_scope() { pmubpf_labels_set(prev_); }
	labels_scope(const labels_scope &) = delete;
	labels_scope &operator=(const labels_scope &) = delete;
private:
	const pmubpf_labels *prev_;
};
} // namespace

int main()
{
	lc_tu2 t = { tu2_tls_addr, tu2_record_addr, tu2_counter_addr,
		     tu2_new, tu2_set, tu2_current };
	if (lc_check(&t))
		return 1;
	const pmubpf_labels *l = pmubpf_labels_new(nullptr, "lang", "c++", nullptr);
	bool seen = false;
	try {
		labels_scope s(l);
		seen = pmubpf_labels_current() == l;
		throw 1;
	} catch (int) {
	}
	if (!seen || pmubpf_labels_current() != nullptr)
		LC_FAIL("RAII scope did not set/restore");
	const pmubpf_labels *in = nullptr;
	pmubpf_labels_do(l, [](void *p) { *static_cast<const pmubpf_labels **>(p) = pmubpf_labels_current(); }, &in);
	if (in != l || pmubpf_labels_current() != nullptr)
		LC_FAIL("pmubpf_labels_do with a lambda");
	pmubpf_labels_free(l);
	return 0;
}
