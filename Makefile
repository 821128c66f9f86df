# pmubpf — one Makefile for the BPF side, the loader, tests and benchmarks.
#   make            build ./pmubpf
#   sudo make run   deps + build + profile the bundled demo, print a top-10
#   sudo make test  deps + build + every test (unit, then integration)
#   make bench      benchmarks, results in docs/benchmarks.md
#   make install PREFIX=/usr/local
# Quiet by default; V=1 prints full commands.

ARCH_UNAME := $(shell uname -m)
ifeq ($(ARCH_UNAME),x86_64)
  BPF_ARCH := x86
else ifeq ($(ARCH_UNAME),aarch64)
  BPF_ARCH := arm64
else
  $(error unsupported architecture '$(ARCH_UNAME)': pmubpf supports x86_64 and aarch64)
endif

OUT      := build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
PROTOC_C ?= protoc-c
PREFIX   ?= /usr/local

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -MMD -MP \
            -I$(OUT) -Iuser -Ibpf -Iinclude
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
.PHONY: all deps run test unit-test integration-test bench install clean fuzz bench-unwind

all: pmubpf

deps:
	$(Q)tools/deps.sh

# --- BPF -----------------------------------------------------------------
$(OUT)/%.bpf.o: bpf/%.bpf.c | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o
	$(Q)rm -f $@.tmp.o

# -MMD names the .tmp.o: list the headers of the real target here.
$(OUT)/pmubpf.bpf.o: bpf/unwind.bpf.h bpf/pmubpf_abi.h vmlinux/vmlinux.h

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@
# Made by a pattern rule, so make would delete them as intermediates.
.SECONDARY: $(OUT)/pmubpf.skel.h $(OUT)/pmubpf.bpf.o

# Compile check for the other supported arch (thread pointer differs).
$(OUT)/pmubpf.arm64.bpf.o: bpf/pmubpf.bpf.c bpf/unwind.bpf.h bpf/pmubpf_abi.h | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(subst __TARGET_ARCH_$(BPF_ARCH),__TARGET_ARCH_arm64,$(BPF_CFLAGS)) -c $< -o $@

# --- protobuf ------------------------------------------------------------
$(OUT)/profile.pb-c.c $(OUT)/profile.pb-c.h: proto/profile.proto | $(OUT)
	$(call msg,PROTOC,$<)
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(OUT) $<

$(OUT)/profile.pb-c.o: $(OUT)/profile.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(filter-out -Werror -Wextra,$(CFLAGS)) -c $< -o $@

# --- userspace -----------------------------------------------------------
# user/LAYER/*.c: one folder per stage of the pipeline (docs/architecture.md,
# "Files"); includes point down the layers only (make check-layers).
USER_SRCS := $(wildcard user/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS)) $(OUT)/profile.pb-c.o

# The generated headers are order-only: they must exist before the first
# compile, and afterwards -MMD's .d files rebuild exactly the objects that
# include them (a BPF edit recompiles record/session.c, not all of user/).
$(OUT)/user/%.o: user/%.c | $(OUT)/pmubpf.skel.h $(OUT)/profile.pb-c.h $(OUT)/user
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/libpmubpf.a: $(USER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

pmubpf: $(OUT)/user/main.o $(OUT)/libpmubpf.a
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

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
$(OUT)/tests/%: tests/workloads/%.c | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(WORK_CFLAGS) $< -o $@ -lpthread -lm -ldl

# Workloads without frame pointers (nofp_*.c, nofp_*.cc), like most
# distribution binaries and libc itself: the --call-graph dwarf tests.
NOFP_CFLAGS := -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror
CLANGXX ?= clang++
WORK_BINS += $(patsubst tests/workloads/%.cc,$(OUT)/tests/%,$(wildcard tests/workloads/nofp_*.cc))
$(OUT)/tests/nofp_%: tests/workloads/nofp_%.c | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(NOFP_CFLAGS) $< -o $@ -lpthread
$(OUT)/tests/nofp_%: tests/workloads/nofp_%.cc | $(OUT)/tests
	$(call msg,CXX,$@)
	$(Q)$(CLANGXX) $(NOFP_CFLAGS) $< -o $@

# Shared libraries the workloads load (tests/workloads/lib/NAME.c).
WORK_LIBS := $(patsubst tests/workloads/lib/%.c,$(OUT)/tests/lib%.so,$(wildcard tests/workloads/lib/*.c))
$(OUT)/tests/lib%.so: tests/workloads/lib/%.c | $(OUT)/tests
	$(call msg,CC,$@)
	$(Q)$(CLANG) $(WORK_CFLAGS) -shared -fPIC $< -o $@

# libFuzzer target for the symbol readers (ELF, DWARF, perf maps,
# MiniDebugInfo): `make fuzz`; tests/integration/fuzz.sh runs it briefly.
FUZZ_SRCS := $(addprefix user/symbols/,elfsym.c elfsym_tab.c elfutil.c dwarf.c \
               perfmap.c debuginfo.c demangle.c) \
             $(addprefix user/unwind/,ehframe.c ehframe_cfa.c ehframe_elf.c) \
             user/lib/grow.c
$(OUT)/fuzz:
	$(Q)mkdir -p $@
$(OUT)/fuzz/fuzz_symbols: tests/fuzz/fuzz_symbols.c $(FUZZ_SRCS) | $(OUT)/fuzz
	$(call msg,FUZZ,$@)
	$(Q)$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -Iuser -Ibpf $^ \
		-lelf -ldw -llzma -lz -lstdc++ -ldl -o $@
fuzz: $(OUT)/fuzz/fuzz_symbols

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
HTTPCLIENT_GOENV := GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=/tmp/pmubpf-gocache GOPROXY=off GOFLAGS=
$(OUT)/tests/pprof_scrape: tests/http_client/main.go | $(OUT)/tests
	$(call msg,GO,$@)
	$(Q)cd tests/http_client && $(HTTPCLIENT_GOENV) go build -o $(abspath $@) .

test-build: pmubpf $(UNIT_BINS) $(TOOL_BINS) $(WORK_BINS) $(WORK_LIBS) $(OUT)/pmubpf.arm64.bpf.o $(OUT)/fuzz/fuzz_symbols $(OUT)/tests/pprof_scrape

test: deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)tests/run.sh

unit-test: test-build
	$(Q)tests/run.sh unit

integration-test: test-build
	$(Q)tests/run.sh integration

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
                label_load label_load_plain write_bench gowork churn_work)
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

$(OUT)/bench/gowork: tools/bench/gowork/main.go tools/bench/gowork/go.mod | $(OUT)/bench
	$(call msg,GO,$@)
	$(Q)cd tools/bench/gowork && $(BENCH_GOENV) go build -o $(abspath $@) .

bench-build: test-build $(BENCH_BINS)

bench: deps
	$(Q)tools/deps.sh --bench
	$(Q)$(MAKE) --no-print-directory bench-build
	$(Q)tools/bench.sh

$(addprefix bench-,$(BENCH_PARTS)): deps
	$(Q)tools/deps.sh --bench
	$(Q)$(MAKE) --no-print-directory bench-build
	$(Q)tools/bench.sh $(@:bench-%=%)

bench-report:
	$(Q)tools/bench.sh report

.PHONY: bench-build bench-report $(addprefix bench-,$(BENCH_PARTS))
-include $(wildcard $(OUT)/bench/*.d)

install: pmubpf
	install -D -m 0755 pmubpf $(DESTDIR)$(PREFIX)/bin/pmubpf
	install -D -m 0644 include/pmubpf/labels.h $(DESTDIR)$(PREFIX)/include/pmubpf/labels.h
	install -D -m 0644 docs/pmubpf.1 $(DESTDIR)$(PREFIX)/share/man/man1/pmubpf.1
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed 's|@BINDIR@|$(PREFIX)/bin|g' dist/pmubpf.service.in >$(DESTDIR)$(PREFIX)/lib/systemd/system/pmubpf.service

clean:
	rm -rf $(OUT) pmubpf

-include $(wildcard $(OUT)/*.d $(OUT)/user/*.d $(OUT)/user/*/*.d $(OUT)/tests/*.d)
