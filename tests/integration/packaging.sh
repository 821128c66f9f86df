#!/usr/bin/env bash
# packaging.sh — installing pmubpf (issue 14): `make install` puts a
# pkg-config file for the labels header in place and `make uninstall`
# takes back exactly what install put there; debian/ builds, with
# `dpkg-buildpackage -b -us -uc` in a temporary copy of the tree, a
# pmubpf package and a labels -dev package that lintian accepts without
# errors, whose files work; the tree is left as it was.
source "$(dirname "$0")/lib.sh"

printf '#include <pmubpf/labels.h>\nint main(void){ return pmubpf_labels_current() != 0; }\n' >"$TMP/use.c"
HDR_VERSION=$(sed -n 's/^#define PMUBPF_LABELS_VERSION_\(MAJOR\|MINOR\) \([0-9]*\).*/\2/p' \
	"$ROOT/include/pmubpf/labels.h" | paste -sd.)

# --- make install / uninstall --------------------------------------------
P=$TMP/prefix
if make -C "$ROOT" --no-print-directory -s install PREFIX="$P" >"$TMP/install.log" 2>&1; then
	export PKG_CONFIG_PATH=$P/share/pkgconfig
	cflags=$(pkg-config --cflags pmubpf-labels 2>&1)
	if [[ $cflags == "-I$P/include"* ]] && [[ $(pkg-config --modversion pmubpf-labels) == "$HDR_VERSION" ]]; then
		pass pkgconfig_cflags
	else
		fail pkgconfig_cflags "pkg-config says '$cflags', version '$(pkg-config --modversion pmubpf-labels 2>&1)', want -I$P/include and $HDR_VERSION"
	fi
	# shellcheck disable=SC2046 # the flags are words
	check pkgconfig_compiles cc -std=c99 -Wall -Wextra -Werror $(pkg-config --cflags pmubpf-labels) \
		"$TMP/use.c" -o "$TMP/use"
	unset PKG_CONFIG_PATH
	# Someone else's file in a shared directory must survive uninstall.
	touch "$P/share/man/man1/other.1"
	if make -C "$ROOT" --no-print-directory -s uninstall PREFIX="$P" >"$TMP/uninstall.log" 2>&1; then
		left=$(cd "$P" && find . -type f ! -path ./share/man/man1/other.1 | tr '\n' ' ')
		if [[ -n $left ]]; then fail uninstall "left behind: $left"
		elif [[ ! -e $P/share/man/man1/other.1 ]]; then fail uninstall "removed a file it did not install"
		elif [[ -d $P/include/pmubpf ]]; then fail uninstall "left the empty include/pmubpf directory"
		else pass uninstall; fi
	else
		fail uninstall "$(tail -n1 "$TMP/uninstall.log")"
	fi
else
	fail pkgconfig_cflags "make install: $(tail -n1 "$TMP/install.log")"
fi

# --- Debian packages -------------------------------------------------------
missing=""
for t in dpkg-buildpackage dh lintian git; do
	command -v $t >/dev/null || missing+=" $t"
done
if [[ -n $missing ]]; then
	for n in deb_build lintian deb_files deb_pkgconfig deb_binary tree_untouched; do
		fail $n "missing:$missing (tools/deps.sh installs them)"
	done
	exit 0
fi

before=$(git -C "$ROOT" status --porcelain --ignored 2>&1)
# The tree as git sees it (tracked and new files, not build outputs).
S=$TMP/src/pmubpf
mkdir -p "$S"
(cd "$ROOT" && git ls-files -z -co --exclude-standard |
	tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$S"
# parallel=2: the machine has two CPUs and other tests beside this one.
if (cd "$S" && DEB_BUILD_OPTIONS="parallel=2 nocheck" dpkg-buildpackage -b -us -uc) >"$TMP/deb.log" 2>&1; then
	pass deb_build
else
	fail deb_build "$(grep -m1 -i -e error -e 'not found' "$TMP/deb.log" || tail -n1 "$TMP/deb.log")"
	tail -n 20 "$TMP/deb.log" | sed 's/^/    /'
fi
changes=$(ls "$TMP"/src/pmubpf_*.changes 2>/dev/null | head -n1)
bin=$(ls "$TMP"/src/pmubpf_*.deb 2>/dev/null | head -n1)
dev=$(ls "$TMP"/src/libpmubpf-labels-dev_*.deb 2>/dev/null | head -n1)
if [[ -n $changes && -n $bin && -n $dev ]]; then
	# Warnings are printed; errors fail.
	if lintian --fail-on error "$changes" >"$TMP/lintian.log" 2>&1; then
		pass lintian
	else
		fail lintian "$(grep -m1 '^E:' "$TMP/lintian.log" || tail -n1 "$TMP/lintian.log")"
	fi
	grep -e '^[EW]:' "$TMP/lintian.log" | sed 's/^/    lintian: /'
	want_bin="./usr/bin/pmubpf ./usr/share/man/man1/pmubpf.1.gz"
	want_dev="./usr/include/pmubpf/labels.h ./usr/share/pkgconfig/pmubpf-labels.pc"
	have=$(dpkg -c "$bin" | awk '{print $6}'; dpkg -c "$dev" | awk '{print $6}')
	miss=""
	for f in $want_bin $want_dev; do grep -qxF "$f" <<<"$have" || miss+=" $f"; done
	if [[ -z $miss ]] && ! dpkg -c "$dev" | grep -q usr/bin; then pass deb_files
	else fail deb_files "missing:${miss:- none}; dev package: $(dpkg -c "$dev" | awk '{print $6}' | tr '\n' ' ')"; fi
	# The -dev package's pkg-config file, used from an unpacked root.
	: >"$TMP/cc.log"
	R=$TMP/root
	dpkg -x "$dev" "$R" && dpkg -x "$bin" "$R"
	cflags=$(PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_PATH=$R/usr/share/pkgconfig PKG_CONFIG_LIBDIR= \
		pkg-config --cflags pmubpf-labels 2>&1)
	# shellcheck disable=SC2086 # the flags are words
	if [[ $cflags == "-I$R/usr/include"* ]] &&
	   cc -std=c99 -Wall -Wextra -Werror $cflags "$TMP/use.c" -o "$TMP/use_deb" 2>"$TMP/cc.log" && "$TMP/use_deb"; then
		pass deb_pkgconfig
	else
		fail deb_pkgconfig "pkg-config: '$cflags'; $(tail -n1 "$TMP/cc.log")"
	fi
	check deb_binary "$R/usr/bin/pmubpf" --version
else
	for n in lintian deb_files deb_pkgconfig deb_binary; do fail $n "no packages built"; done
fi
after=$(git -C "$ROOT" status --porcelain --ignored 2>&1)
if [[ $before == "$after" ]]; then pass tree_untouched
else fail tree_untouched "git status changed: $(diff <(echo "$before") <(echo "$after") | tail -n +2 | tr '\n' ' ')"; fi
