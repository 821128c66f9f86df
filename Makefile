# pmubpf — one Makefile for the BPF side, the loader, tests and benchmarks.
#   make            build ./pmubpf
#   sudo make run   deps + build + profile the bundled demo, print a top-10
#   sudo make test  deps + build + check-layers + every test (unit, then integration)
#   sudo make test-kernels  the suites on Debian's 5.10 ... newest under qemu
#   sudo make test-arm64    arm64 under qemu: hardware events on its emulated PMU
#   make arm64      pmubpf for aarch64 (build-arm64/), cross-built here
#   sudo make test-slow     make test held to one CPU, beside a CPU hog
#   make check-layers  includes and calls point down user/'s layers
#   make bench      benchmarks, results in docs/benchmarks.md
#   make install PREFIX=/usr/local   (make uninstall PREFIX=... removes it)
# Quiet by default; V=1 prints full commands.

ARCH_UNAME := $(shell uname -m)
ifeq ($(ARCH_UNAME),x86_64)
  BPF_ARCH := x86
else ifeq ($(ARCH_UNAME),aarch64)
  BPF_ARCH := arm64
else
  $(error unsupported architecture '$(ARCH_UNAME)': pmubpf supports x86_64 and aarch64)
endif

# make SANITIZE=1 [TARGET]: the same build with AddressSanitizer and
# UBSan, into build-san/ (the binary is build-san/pmubpf), so build/ and
# ./pmubpf stay as they are. `make SANITIZE=1 test` runs every test
# against it; plain `make test` also runs the unit tests under it.
ifeq ($(SANITIZE),1)
  OUT      := build-san
  BIN      := $(OUT)/pmubpf
  SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
               -fno-omit-frame-pointer
else
  OUT      := build
  BIN      := pmubpf
endif
CC       ?= gcc
CLANG    ?= clang
# make CROSS=arm64 [TARGET]: the same build for aarch64 on an x86-64
# machine, into build-arm64/ (`make arm64` makes its sysroot first:
# Debian's arm64 packages, tools/kernels/rootfs.sh, which is also the
# arm64 guest's root file system, `make test-arm64`). The compilers run
# here (gcc-aarch64-linux-gnu; clang --target); the BPF object is the
# same C with arm64's registers.
ARM64_ROOT ?= build/arm64/root
ifeq ($(CROSS),arm64)
  OUT      := build-arm64
  BIN      := $(OUT)/pmubpf
  BPF_ARCH := arm64
  # The root's libstdc++.so (for __cxa_demangle) sits in its gcc's
  # directory, which the cross gcc does not search.
  CC       := aarch64-linux-gnu-gcc --sysroot=$(ARM64_ROOT) \
              $(addprefix -L,$(wildcard $(ARM64_ROOT)/usr/lib/gcc/aarch64-linux-gnu/*))
  WORK_CLANG := $(CLANG) --target=aarch64-linux-gnu --sysroot=$(ARM64_ROOT)
else ifneq ($(CROSS),)
  $(error CROSS=$(CROSS): only CROSS=arm64 is known)
endif
WORK_CLANG ?= $(CLANG)
BPFTOOL  ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
PROTOC_C ?= protoc-c
PREFIX   ?= /usr/local

CFLAGS   ?= -O2 -g
override CFLAGS += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -MMD -MP \
            -I$(OUT) -Iuser -Ibpf -Iinclude $(SAN_FLAGS)
LDLIBS   += -lbpf -lelf -ldw -lz -lprotobuf-c -lmicrohttpd -lpthread -llzma -lstdc++ -ldl
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(BPF_ARCH) -Wall -Werror \
              -Ivmlinux -Ibpf -MMD -MP

ifeq ($(V),1)
  Q :=
  msg :=
else
  Q := @
  msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.PHONY: all deps run test unit-test integration-test bench install uninstall clean fuzz bench-unwind check-layers

all: $(BIN)

deps:
	$(Q)tools/deps.sh

# --- BPF -----------------------------------------------------------------
$(OUT)/%.bpf.o: bpf/%.bpf.c | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o
	$(Q)rm -f $@.tmp.o

# Every bpf/NAME.bpf.c is an object of its own with a skeleton,
# NAME.skel.h, that user/ includes.
BPF_NAMES := $(patsubst bpf/%.bpf.c,%,$(wildcard bpf/*.bpf.c))
SKELS := $(patsubst %,$(OUT)/%.skel.h,$(BPF_NAMES))

# -MMD names the .tmp.o: list the headers of the real target here.
$(patsubst %,$(OUT)/%.bpf.o,$(BPF_NAMES)): $(wildcard bpf/*.h) vmlinux/vmlinux.h

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@
# Made by a pattern rule, so make would delete them as intermediates.
.SECONDARY: $(SKELS) $(patsubst %,$(OUT)/%.bpf.o,$(BPF_NAMES))

# Compile check for the other supported arch (thread pointer differs).
$(OUT)/pmubpf.arm64.bpf.o: bpf/pmubpf.bpf.c $(wildcard bpf/*.h) | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(subst __TARGET_ARCH_$(BPF_ARCH),__TARGET_ARCH_arm64,$(BPF_CFLAGS)) -c $< -o $@

# --- protobuf ------------------------------------------------------------
$(OUT)/profile.pb-c.c $(OUT)/profile.pb-c.h: proto/profile.proto | $(OUT)
	$(call msg,PROTOC,$<)
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(OUT) $<

$(OUT)/profile.pb-c.o: $(OUT)/profile.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(filter-out -Werror -Wextra,$(CFLAGS)) -c $< -o $@

# --- userspace -----------------------------------------------------------
# user/LAYER/*.c: one folder per stage of the pipeline (docs/architecture.md,
# "Files"); includes point down the layers only (make check-layers).
USER_SRCS := $(wildcard user/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS)) $(OUT)/profile.pb-c.o

# The generated headers are order-only: they must exist before the first
# compile, and afterwards -MMD's .d files rebuild exactly the objects that
# include them (a BPF edit recompiles record/session.c, not all of user/).
$(OUT)/user/%.o: user/%.c | $(SKELS) $(OUT)/profile.pb-c.h $(OUT)/user
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUT)/libpmubpf.a: $(USER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# CPPFLAGS and LDFLAGS come from the caller (dpkg-buildflags under
# debian/rules: fortify, relro, bindnow).
$(BIN): $(OUT)/user/main.o $(OUT)/libpmubpf.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

$(OUT) $(OUT)/user $(OUT)/tests:
	$(Q)mkdir -p $@

# --- tests ---------------------------------------------------------------
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(OUT)/tests/%,$(TOOL_SRCS))
WORK_SRCS := $(wildcard tests/workloads/*.c)
WORK_BINS := $(patsubst tests/workloads/%.c,$(OUT)/tests/%,$(WORK_SRCS))

$(OUT)/tests/test_%: tests/unit/test_%.c $(OUT)/libpmubpf.a tests/unit/testing.h | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/unit $< $(OUT)/libpmubpf.a $(LDLIBS) -o $@

$(OUT)/tests/%: tests/tools/%.c $(OUT)/libpmubpf.a | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(OUT)/libpmubpf.a $(LDLIBS) -o $@

# Workloads: frame pointers on, leaf functions included, so the kernel's
# frame-pointer walk sees every caller. Built with clang: GCC 12 drops the
# frame of leaf functions even with -fno-omit-frame-pointer
# -mno-omit-leaf-frame-pointer, and the walk then skips the leaf's
# caller. The measured functions are noinline, so their shares are
# attributable.
WORK_CFLAGS := -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -Wall -Wextra -Werror -Iinclude
$(OUT)/tests/%: tests/workloads/%.c tests/workloads/taskclock.h | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(WORK_CLANG) $(WORK_CFLAGS) $< -o $@ -lpthread -lm -ldl

# Workloads without frame pointers (nofp_*.c, nofp_*.cc), like most
# distribution binaries and libc itself: the --call-graph dwarf tests.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror
CLANGXX ?= clang++
WORK_BINS += $(patsubst tests/workloads/%.cc,$(OUT)/tests/%,$(wildcard tests/workloads/nofp_*.cc))
$(OUT)/tests/nofp_%: tests/workloads/nofp_%.c tests/workloads/warmup.h | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(WORK_CLANG) $(NOFP_CFLAGS) $< -o $@ -lpthread
$(OUT)/tests/nofp_%: tests/workloads/nofp_%.cc tests/workloads/warmup.h | $(OUT)/tests
	$(call msg,CXX,$@)
	$(Q)$(CLANGXX) $(NOFP_CFLAGS) $< -o $@

# A command whose first waits are in a library it links without frame
# pointers (firstsamples.command_lib_nap): the library found through its
# run path, $ORIGIN.
$(OUT)/tests/nofp_libnap: tests/workloads/nofp_libnap.c $(OUT)/tests/libnofpnap.so | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(WORK_CLANG) $(NOFP_CFLAGS) $< -o $@ -L$(OUT)/tests -lnofpnap -Wl,-rpath,'$$ORIGIN'
$(OUT)/tests/libnofpnap.so: tests/workloads/lib/nofpnap.c | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(WORK_CLANG) $(NOFP_CFLAGS) -shared -fPIC $< -o $@

# A program for a container image made from a tarball (cgroups.sh): static,
# so the image holds one file.
$(OUT)/tests/container_spin: tests/workloads/container_spin.c | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CC) -O1 -g -static -Wall -Wextra -Werror $< -o $@

# Shared libraries the workloads load (tests/workloads/lib/NAME.c).
WORK_LIBS := $(patsubst tests/workloads/lib/%.c,$(OUT)/tests/lib%.so,$(wildcard tests/workloads/lib/*.c))
$(OUT)/tests/lib%.so: tests/workloads/lib/%.c | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(WORK_CLANG) $(WORK_CFLAGS) -shared -fPIC $< -o $@

# --- fuzzing: `make fuzz` ------------------------------------------------
# One libFuzzer target per parser of outside input (tests/fuzz/fuzz_*.c,
# seeds in tests/fuzz/corpus/TARGET/). They link a copy of libpmubpf
# built with clang, ASan, UBSan and libFuzzer's coverage, so a target
# pulls in only the objects its parser needs. tests/integration/fuzz.sh
# runs each for a few seconds and replays the corpus; tools/fuzz.sh runs
# them for longer.
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(addprefix $(OUT)/fuzz/,$(FUZZ_TARGETS))
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
               -fno-sanitize-recover=undefined -std=gnu11 -D_GNU_SOURCE \
               -I$(OUT) -Iuser -Ibpf -Iinclude -MMD -MP
FUZZ_OBJS := $(patsubst user/%.c,$(OUT)/fuzz/obj/%.o,$(filter-out user/main.c,$(USER_SRCS))) \
             $(OUT)/fuzz/obj/profile.pb-c.o
$(OUT)/fuzz/obj/%.o: user/%.c | $(SKELS) $(OUT)/profile.pb-c.h
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Wall -Wextra -Werror -c $< -o $@
$(OUT)/fuzz/obj/profile.pb-c.o: $(OUT)/profile.pb-c.c
	$(call msg,CC-FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(OUT)/fuzz/libpmubpf.a: $(FUZZ_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^
$(OUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(OUT)/fuzz/libpmubpf.a
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -Wall -Wextra -Werror $< \
		$(OUT)/fuzz/libpmubpf.a $(LDLIBS) -o $@
fuzz: $(FUZZ_BINS)

# Symbolization bench: docs/benchmarks.md's "## Symbolization" section.
$(OUT)/tools:
	$(Q)mkdir -p $@
$(OUT)/tools/symbolize_bench: tools/bench/symbolize_bench.c $(OUT)/libpmubpf.a | $(OUT)/tools
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(OUT)/libpmubpf.a $(LDLIBS) -o $@
bench-symbolize: deps
	$(Q)$(MAKE) --no-print-directory pmubpf $(OUT)/tools/symbolize_bench
	$(Q)tools/bench/symbolize_bench.sh
.PHONY: bench-symbolize

# --call-graph fp vs dwarf: BPF time per sample, slowdown, table memory
# (docs/benchmarks.md, section "Unwinding"; not part of `make bench`).
bench-unwind: test-build
	$(Q)tools/bench/unwind_bench.sh

# The scrapers' checks with the pprof parser Parca and Alloy use
# (tests/http_client): Debian's golang-github-google-pprof-dev, built
# offline in GOPATH mode (its module would want the network).
GO_GOENV := GO111MODULE=off GOCACHE=/tmp/pmubpf-gocache GOPROXY=off GOFLAGS=
ifeq ($(CROSS),arm64)
  GO_GOENV += GOARCH=arm64 CGO_ENABLED=0
endif
# Go workloads (issue 12: pprof labels) and the DWARF offsets reader;
# standard library only, built offline.
$(OUT)/tests/golabels_work: tests/workloads/golabels/main.go | $(OUT)/tests
	$(call msg,GO,$@)
	$(Q)cd tests/workloads/golabels && $(GO_GOENV) go build -o $(abspath $@) .
$(OUT)/tests/gooffsets: tests/tools/gooffsets/main.go | $(OUT)/tests
	$(call msg,GO,$@)
	$(Q)cd tests/tools/gooffsets && $(GO_GOENV) go build -o $(abspath $@) .

# The custom-labels ABI v1 from a shared library (issue 12): the ABI
# requires a library to reach its thread-local set through a TLS
# descriptor, which clang 14 cannot emit (-mtls-dialect=gnu2): gcc.
CUSTOM_CFLAGS := -O1 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -Iinclude
$(OUT)/tests/libcustomlabels.so: tests/workloads/customlabels/customlabels.c tests/workloads/customlabels/customlabels.h | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)gcc $(CUSTOM_CFLAGS) -fPIC -shared -ftls-model=global-dynamic -mtls-dialect=gnu2 $< -o $@
$(OUT)/tests/customlabels_work: tests/workloads/customlabels/work.c $(OUT)/tests/libcustomlabels.so include/pmubpf/labels.h tests/workloads/taskclock.h
	$(call msg,CC,$@)
	$(Q)gcc $(CUSTOM_CFLAGS) $< -o $@ -L$(OUT)/tests -lcustomlabels -Wl,-rpath,'$$ORIGIN'

# OpenTelemetry thread context (OTEP 4947, issue 12): the writer in the
# executable (its TLS variable exported to .dynsym, as the OTEP asks) and
# in a library reached through TLS descriptors (gcc: -mtls-dialect=gnu2).
OTEL_SRCS := tests/workloads/otel/work.c tests/workloads/otel/writer.h include/pmubpf/labels.h tests/workloads/taskclock.h
$(OUT)/tests/otel_work: tests/workloads/otel/writer.c $(OTEL_SRCS) | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)gcc $(CUSTOM_CFLAGS) tests/workloads/otel/work.c tests/workloads/otel/writer.c -o $@ \
		-Wl,--export-dynamic-symbol=otel_thread_ctx_v1
$(OUT)/tests/libotelwriter.so: tests/workloads/otel/writer.c tests/workloads/otel/writer.h | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)gcc $(CUSTOM_CFLAGS) -fPIC -shared -ftls-model=global-dynamic -mtls-dialect=gnu2 $< -o $@
$(OUT)/tests/otel_work_lib: $(OTEL_SRCS) $(OUT)/tests/libotelwriter.so
	$(call msg,CC,$@)
	$(Q)gcc $(CUSTOM_CFLAGS) $< -o $@ -L$(OUT)/tests -lotelwriter -Wl,-rpath,'$$ORIGIN'

HTTPCLIENT_GOENV := GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=/tmp/pmubpf-gocache GOPROXY=off GOFLAGS=
$(OUT)/tests/pprof_scrape: tests/http_client/main.go | $(OUT)/tests
	$(call msg,GO,$@)
	$(Q)cd tests/http_client && $(HTTPCLIENT_GOENV) go build -o $(abspath $@) .

test-build: $(BIN) $(OUT)/bench/churn_work $(UNIT_BINS) $(TOOL_BINS) $(WORK_BINS) $(WORK_LIBS) \
            $(OUT)/pmubpf.arm64.bpf.o $(FUZZ_BINS) $(OUT)/tests/pprof_scrape \
            $(OUT)/tests/golabels_work $(OUT)/tests/gooffsets $(OUT)/tests/customlabels_work \
            $(OUT)/tests/otel_work $(OUT)/tests/otel_work_lib

# --- arm64: `make arm64`, `make test-arm64` -------------------------------
# What the arm64 guest runs (tools/kernels/arm64.sh): pmubpf, the test
# tools and the frame-pointer workloads built for aarch64 (the nofp_
# ones are the x86-64 BPF unwinder's), and icount, the cycles ground
# truth under qemu's -icount.
ARM64_BINS := $(BIN) $(TOOL_BINS) $(filter-out $(OUT)/tests/nofp_%,$(WORK_BINS)) $(WORK_LIBS) \
              $(OUT)/tests/icount $(OUT)/tests/golabels_work $(OUT)/tests/gooffsets
$(OUT)/tests/icount: tests/workloads/arm64/icount.c | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(WORK_CLANG) $(WORK_CFLAGS) $< -o $@
arm64-build: $(ARM64_BINS)
arm64: deps
ifeq ($(BPF_ARCH),arm64)
	$(Q)$(MAKE) --no-print-directory arm64-build
else
	$(Q)tools/kernels/rootfs.sh $(ARM64_ROOT)
	$(Q)$(MAKE) --no-print-directory CROSS=arm64 arm64-build
endif
.PHONY: arm64 arm64-build

# Includes and calls point down the layers, no circles (docs/architecture.md,
# "Files"). It reads the objects, so it runs after the build; `make test`
# stops here if it fails.
check-layers: $(USER_OBJS) $(OUT)/user/main.o
	$(Q)python3 tools/check_layers.py $(OUT)

# The tests find the build through these (tests/run.sh, lib.sh, check.py).
TEST_ENV := PMUBPF_BUILD=$(OUT) PMUBPF=$(abspath $(BIN))
# What CI runs (make test) includes the unit tests under ASan+UBSan: the
# unit binaries of build-san/, run by tests/run.sh as san.* checks.
SAN_UNIT := $(if $(filter 1,$(SANITIZE)),,PMUBPF_SAN_UNIT=build-san/tests)
san-unit-build:
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 $(patsubst build/%,build-san/%,$(UNIT_BINS))
.PHONY: san-unit-build test-build

# On x86-64, make test builds for arm64 too (tests/integration/arm64.sh
# runs it under qemu).
test: deps
	$(Q)$(MAKE) --no-print-directory test-build $(if $(filter 1,$(SANITIZE)),,san-unit-build)
	$(Q)$(if $(filter x86,$(BPF_ARCH)),$(MAKE) --no-print-directory arm64)
	$(Q)$(MAKE) --no-print-directory check-layers
	$(Q)$(TEST_ENV) $(SAN_UNIT) tests/run.sh

# Every kernel of the matrix (tools/kernels: Debian's 5.10, 6.1, 6.12 and
# newest under qemu) running the suites below, docs/kernels.md written
# from the run. `make test` runs the smoke suite on each
# (tests/integration/kernels.sh). The suites whose paths depend on the
# kernel (targets, process lifecycle, labels through TLS, off-CPU, the
# BPF unwinder and its first samples, images of exited processes, map
# memory, refusals): about
# 18-32 minutes a kernel on 2 CPUs under TCG. The accuracy suites run on
# this machine's kernel only (docs/architecture.md, Kernels: under TCG a
# late timer skips periods); KERNEL_SUITES="..." runs others.
KERNEL_SUITES ?= smoke targets lifecycle labels offcpu unwind firstsamples images mapmem errors cgroups
test-kernels: deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)$(TEST_ENV) tools/kernels/matrix.sh --doc docs/kernels.md $(KERNEL_SUITES)

# arm64 under qemu-system-aarch64 (tools/kernels/arm64.sh): Debian's arm64
# 6.1 and 6.12 kernels, hardware events against exact ground truth on the
# emulated Armv8 PMU (tests/arm64/hwevents.sh), and ARM64_SUITES.
# `make test` runs the short version (tests/integration/arm64.sh).
ARM64_SUITES ?= smoke labels arm64/golabels targets lifecycle
test-arm64: arm64
	$(Q)ARM64_SUITES="$(ARM64_SUITES)" tools/kernels/arm64.sh
.PHONY: test-arm64

# `make test` on a slower machine: held to one CPU's worth of time,
# beside a CPU hog on every CPU (tools/test-slow.sh).
test-slow: deps
	$(Q)$(MAKE) --no-print-directory test-build $(if $(filter 1,$(SANITIZE)),,san-unit-build)
	$(Q)$(MAKE) --no-print-directory check-layers
	$(Q)$(TEST_ENV) $(SAN_UNIT) tools/test-slow.sh
.PHONY: test-kernels test-slow

unit-test: test-build $(if $(filter 1,$(SANITIZE)),,san-unit-build)
	$(Q)$(TEST_ENV) $(SAN_UNIT) tests/run.sh unit

integration-test: test-build
	$(Q)$(TEST_ENV) tests/run.sh integration

# --- run: profile the bundled demo ---------------------------------------
run: deps
	$(Q)$(MAKE) --no-print-directory pmubpf $(OUT)/tests/demo
	$(Q)tools/run-demo.sh

# --- bench: docs/benchmarks.md ------------------------------------------
# `make bench` runs every part (about 25 minutes on 2 CPUs); `make
# bench-PART` one of them; `make bench-report` only rewrites the document
# from the results already in build/bench/results. Repetitions and
# frequencies come from the environment: see tools/bench.sh.
BENCH_PARTS := overhead cost churn write accuracy labels
BENCH_CFLAGS := -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
                -Wall -Wextra -Werror -Iinclude
BENCH_BINS := $(addprefix $(OUT)/bench/,cpu_work syscall_work floor rusage labels_bench \
                label_load label_load_plain write_bench gowork churn_work cgroup_bench)
BENCH_GOENV := GOCACHE=/tmp/pmubpf-gocache GOPATH=/tmp/pmubpf-gopath GOPROXY=off GOFLAGS=

$(OUT)/bench:
	$(Q)mkdir -p $@

$(OUT)/bench/%: tools/bench/%.c tools/bench/work.h | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(BENCH_CFLAGS) $< -o $@ -lpthread

$(OUT)/bench/label_load_plain: tools/bench/label_load.c | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(BENCH_CFLAGS) -DNO_LABELS $< -o $@ -lpthread

$(OUT)/bench/write_bench: tools/bench/write_bench.c $(OUT)/libpmubpf.a | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(OUT)/libpmubpf.a $(LDLIBS) -o $@

$(OUT)/bench/cgroup_bench: tools/bench/cgroup_bench.c $(OUT)/libpmubpf.a | $(OUT)/bench
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $< $(OUT)/libpmubpf.a $(LDLIBS) -o $@

$(OUT)/bench/gowork: tools/bench/gowork/main.go tools/bench/gowork/go.mod | $(OUT)/bench
	$(call msg,GO,$@)
	$(Q)cd tools/bench/gowork && $(BENCH_GOENV) go build -o $(abspath $@) .

bench-build: test-build $(BENCH_BINS)

bench: deps
	$(Q)tools/deps.sh --bench
	$(Q)$(MAKE) --no-print-directory bench-build
	$(Q)tools/bench.sh
	$(Q)tools/bench/offcpu_bench.sh

# -e off-cpu under a context-switch storm, against libbpf-tools'
# offcputime: docs/benchmarks.md's "## Off-CPU time" (a few minutes).
bench-offcpu: deps
	$(Q)tools/deps.sh --bench
	$(Q)$(MAKE) --no-print-directory pmubpf
	$(Q)tools/bench/offcpu_bench.sh
.PHONY: bench-offcpu

$(addprefix bench-,$(BENCH_PARTS)): deps
	$(Q)tools/deps.sh --bench
	$(Q)$(MAKE) --no-print-directory bench-build
	$(Q)tools/bench.sh $(@:bench-%=%)

bench-report:
	$(Q)tools/bench.sh report

# Always-on soak: `pmubpf -a --every 60` beside process churn for
# SOAK_MINUTES (30), RSS / BPF map memory / losses / process records per
# window into build/soak/soak.csv (docs/benchmarks.md, "Always-on soak");
# tests/integration/soak.sh runs a 2-minute version in `make test`.
# SOAK_LOAD=labels: beside three programs that label each request (a new
# set with a trace_id, ~40000 a second each: our header, OpenTelemetry's
# thread context, Go's pprof.Do) instead of the churn; each window's
# samples of each labelled, counted (issue 40). SOAK_FREQ: pmubpf's -F.
SOAK_MINUTES ?= 30
SOAK_EVERY ?= 60
SOAK_LOAD ?= churn
SOAK_FREQ ?=
soak: deps
	$(Q)$(MAKE) --no-print-directory pmubpf $(OUT)/bench/churn_work $(OUT)/tests/demo $(OUT)/tests/label_churn \
		$(OUT)/tests/otel_work $(OUT)/tests/golabels_work $(OUT)/tests/pprof_dump
	$(Q)SOAK_LOAD=$(SOAK_LOAD) SOAK_FREQ=$(SOAK_FREQ) tools/soak.sh $(SOAK_MINUTES) $(SOAK_EVERY) $(OUT)/soak
.PHONY: soak

.PHONY: bench-build bench-report $(addprefix bench-,$(BENCH_PARTS))
-include $(wildcard $(OUT)/bench/*.d)

# The labels header is header-only and arch-independent, so its
# pkg-config file goes to share/pkgconfig (pkg-config --cflags
# pmubpf-labels); its version is the header's own. The .pc is written
# straight into place: PREFIX may differ per install.
PKGCONFIGDIR ?= $(PREFIX)/share/pkgconfig
LABELS_VERSION = $(shell sed -n 's/^\#define PMUBPF_LABELS_VERSION_\(MAJOR\|MINOR\) \([0-9]*\).*/\2/p' \
                   include/pmubpf/labels.h | paste -sd.)
# The systemd unit's directory: debian/rules gives /lib/systemd/system.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALLED := $(PREFIX)/bin/pmubpf $(PREFIX)/include/pmubpf/labels.h \
             $(PREFIX)/share/man/man1/pmubpf.1 $(PKGCONFIGDIR)/pmubpf-labels.pc \
             $(SYSTEMDUNITDIR)/pmubpf.service

install: pmubpf
	install -D -m 0755 pmubpf $(DESTDIR)$(PREFIX)/bin/pmubpf
	install -D -m 0644 include/pmubpf/labels.h $(DESTDIR)$(PREFIX)/include/pmubpf/labels.h
	install -D -m 0644 docs/pmubpf.1 $(DESTDIR)$(PREFIX)/share/man/man1/pmubpf.1
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@BINDIR@|$(PREFIX)/bin|g' dist/pmubpf.service.in >$(DESTDIR)$(SYSTEMDUNITDIR)/pmubpf.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/pmubpf.service
	install -d $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(LABELS_VERSION)|' \
		include/pmubpf-labels.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/pmubpf-labels.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/pmubpf-labels.pc

# Removes what install put there, and the pmubpf/ include directory once
# empty; nothing else (the other directories are shared).
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(PREFIX)/include/pmubpf 2>/dev/null

clean:
	rm -rf build build-san build-arm64 pmubpf

-include $(wildcard $(OUT)/*.d $(OUT)/user/*.d $(OUT)/user/*/*.d $(OUT)/tests/*.d \
            $(OUT)/fuzz/*.d $(OUT)/fuzz/obj/*/*.d)
