#!/usr/bin/env bash
# install.sh — `make install PREFIX=...` puts the binary, the labels header
# and the man page in place, and what it installed works from there.
source "$(dirname "$0")/lib.sh"
P=$TMP/prefix
if make -C "$ROOT" --no-print-directory -s install PREFIX="$P" >"$TMP/install.log" 2>&1; then
	pass make_install
else
	fail make_install "$(tail -n1 "$TMP/install.log")"
fi
check installed_binary "$P/bin/pmubpf" --version
check installed_man test -s "$P/share/man/man1/pmubpf.1"
printf '#include <pmubpf/labels.h>\nint main(void){ return pmubpf_labels_current() != 0; }\n' >"$TMP/use.c"
check installed_header cc -std=c99 -Wall -Wextra -Werror -I"$P/include" "$TMP/use.c" -o "$TMP/use"
check installed_header_runs "$TMP/use"
