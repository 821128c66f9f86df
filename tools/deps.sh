#!/usr/bin/env bash
# tools/deps.sh — install every Debian package pmubpf's build, tests and
# benchmarks need. Idempotent: when everything is present it does nothing
# (no apt-get update, no network). Run as root (make run/test call it).
set -euo pipefail

PKGS=(
  make gcc clang llvm            # userspace C, BPF C (clang -target bpf), llvm-strip
  g++                            # labels header compiled as C++ in tests
  libbpf-dev bpftool             # libbpf 1.x + skeleton generator
  libelf-dev libdw-dev           # ELF symbols, DWARF (elfutils)
  zlib1g-dev                     # gzip of the pprof output
  libprotobuf-c-dev protobuf-c-compiler   # profile.proto decoding in tests (pprof_dump, unit tests)
  protobuf-compiler              # protoc --decode: what --otlp sends, read against proto/otlp_profiles.proto (tests)
  golang-go                      # 'go tool pprof': the independent reader in tests
  linux-perf                     # bench comparisons
  binutils                       # readelf/objcopy/strip for test binaries
  python3                        # integration test checks (tests/integration/check.py)
  util-linux                     # setpriv, unshare in tests
  liblzma-dev xz-utils           # MiniDebugInfo (.gnu_debugdata) and its tests
  libstdc++-12-dev               # __cxa_demangle (C++ names)
  libdebuginfod-dev debuginfod   # debuginfod client (dlopen) + a local server in tests
  elfutils                       # eu-addr2line: symbolization bench comparison
  libclang-rt-dev                # libFuzzer + sanitizer runtimes (make fuzz, tests/integration/fuzz.sh)
  iproute2                       # ip: loopback of the debuginfod test's network namespace
  mandoc                         # mandoc -Tlint of the man page (tests/integration/manpage.sh)
  pkg-config                     # pkg-config --cflags pmubpf-labels after make install
  dpkg-dev debhelper lintian     # dpkg-buildpackage of debian/ and lintian (tests/integration/packaging.sh)
  libmicrohttpd-dev              # --http's server
  libcurl4-openssl-dev           # --push/--otlp: libcurl's header and library (dlopen()ed at the first push; TLS through OpenSSL)
  libpfm4-dev                    # named PMU events (-e MEM_LOAD_RETIRED.L3_MISS): libpfm4
  golang-github-google-pprof-dev # the pprof parser Parca/Alloy use (tests/http_client)
  prometheus                     # a real Prometheus scraping /metrics, promtool (tests)
  tmux                           # a terminal for pmubpf top's test (tests/integration/top.sh)
  qemu-system-x86 busybox-static kmod cpio  # Debian's other kernels under qemu (tools/kernels, make test-kernels)
  qemu-system-arm gcc-aarch64-linux-gnu     # arm64: Debian's arm64 kernels under qemu-system-aarch64, pmubpf cross-built (make arm64, make test-arm64)
  mmdebstrap qemu-user-static binfmt-support arch-test  # the arm64 root file system, its packages' scripts run under qemu-user (tools/kernels/rootfs.sh)
  stress-ng                      # a CPU hog on every CPU (make test-slow)
  podman runc                    # a real container (tests/integration/cgroups.sh; runc: crun refuses hybrid cgroups)
)
if [[ "${1:-}" == "--bench" ]]; then
  PKGS+=(bpftrace gnuplot-nox libbpf-tools) # libbpf-tools: offcputime (make bench-offcpu)
fi

missing=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  echo "pmubpf: missing packages: ${missing[*]}; run 'sudo make deps' (or sudo tools/deps.sh)" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
