/* main.c — C main of the labels.h compile/link checks (tu2 linked in). */
#include <pmubpf/labels.h>
#include "check.h"

int main(void)
{
	struct lc_tu2 t = { tu2_tls_addr, tu2_record_addr, tu2_counter_addr,
			    tu2_new, tu2_set, tu2_current };
	return lc_check(&t);
}
