# macc: GNU Make build.
#   make              build build/bin/macc and build/lib/libmaccrt.{a,so}
#   make check        every test (unit, golden, bad inputs, end-to-end, driver), then
#                     all of them again with everything built with ASan/UBSan, the
#                     integration tests, the conformance smoke subset, a fuzz smoke run
#   make demo         build, translate samples/nbody.c, build and run it
#   make golden-update  regenerate the expected outputs of tests/golden
#   SANITIZE=address,undefined  build with sanitizers (into $(BUILD))

BUILD ?= build
CC ?= cc
CFLAGS ?= -O2 -g
SANITIZE ?=

override CFLAGS += -std=gnu11 -Wall -Wextra -MMD -MP -pthread
override CPPFLAGS += -Iinclude -Igrammar -Itranslator -Iruntime
ifneq ($(SANITIZE),)
override CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=undefined
override LDFLAGS += -fsanitize=$(SANITIZE)
endif

DEPS ?= build/deps
TSC := $(DEPS)/tree-sitter-c
DEPS_STAMP := $(TSC)/VERSION

GRAMMAR_SRC := $(wildcard grammar/*.c)
TRANSLATOR_SRC := $(filter-out translator/main.c,$(wildcard translator/*.c))
RUNTIME_SRC := $(filter-out runtime/cuda.c,$(wildcard runtime/*.c))
# The CUDA plugin: built when the CUDA toolkit's headers are installed.
CUDA_HOME ?= /usr/local/cuda
HAVE_CUDA := $(wildcard $(CUDA_HOME)/include/cuda_runtime_api.h)
RTCUDA := $(if $(HAVE_CUDA),$(if $(wildcard runtime/cuda.c),$(BUILD)/lib/libmaccrt_cuda.a))

# The MPI module (libmaccrt_mpi): built when an MPI compiler wrapper is found.
MPICC ?= mpicc
HAVE_MPI := $(shell command -v $(MPICC) 2>/dev/null)
RTMPI := $(if $(HAVE_MPI),$(BUILD)/lib/libmaccrt_mpi.a $(BUILD)/include/macc_mpi.h \
           $(if $(HAVE_CUDA),$(BUILD)/lib/libmaccrt_mpi_cuda.a))

GRAMMAR_OBJ := $(GRAMMAR_SRC:%.c=$(BUILD)/obj/%.o)
TRANSLATOR_OBJ := $(TRANSLATOR_SRC:%.c=$(BUILD)/obj/%.o)
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(BUILD)/obj/%.o)
RUNTIME_PIC := $(RUNTIME_SRC:%.c=$(BUILD)/pic/%.o)
TSC_OBJ := $(BUILD)/obj/deps/ts_c_parser.o

MACC := $(BUILD)/bin/macc
RTLIB := $(BUILD)/lib/libmaccrt.a
RTSO := $(BUILD)/lib/libmaccrt.so
PUBHDR := $(BUILD)/include/macc_rt.h $(BUILD)/include/macc_device.h $(BUILD)/include/openacc.h

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all runtime gpu-check gpu-check-mpi check-mpi check-integration fuzz-smoke deps check check-unit check-flaky check-golden check-bad check-e2e check-asan check-tsan demo \
        golden-update clean unit

all: $(MACC) runtime

# The runtime alone (no tree-sitter needed): what the GPU machine builds.
runtime: $(RTLIB) $(RTSO) $(PUBHDR) $(RTCUDA) $(RTMPI)

deps: $(DEPS_STAMP)
$(DEPS_STAMP):
	@sh tools/deps.sh $(DEPS)

$(BUILD)/obj/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DMACC_BUILDING_RUNTIME -fPIC -fvisibility=hidden -c $< -o $@

$(BUILD)/obj/runtime/%.o: runtime/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DMACC_BUILDING_RUNTIME -fPIC -fvisibility=hidden -c $< -o $@

# The generated C grammar: warnings are not ours.
$(TSC_OBJ): $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) -O2 -g -w $(filter -fsanitize=%,$(CFLAGS)) -I$(TSC)/src -c $(TSC)/src/parser.c -o $@

$(MACC): $(BUILD)/obj/translator/main.o $(TRANSLATOR_OBJ) $(GRAMMAR_OBJ) $(TSC_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -l:libtree-sitter.a

$(RTLIB): $(RUNTIME_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(RTSO): $(RUNTIME_PIC)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $^ -ldl

$(BUILD)/lib/libmaccrt_cuda.a: runtime/cuda.c runtime/internal.h include/macc_rt.h
	@mkdir -p $(BUILD)/obj/runtime-cuda $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DMACC_BUILDING_RUNTIME -fPIC -fvisibility=hidden -I$(CUDA_HOME)/include \
		-c runtime/cuda.c -o $(BUILD)/obj/runtime-cuda/cuda.o
	rm -f $@ && ar rcs $@ $(BUILD)/obj/runtime-cuda/cuda.o

# OMPI_CC/MPICH_CC: the wrapper compiles with $(CC) (sanitizers included).
$(BUILD)/obj/mpi/ring.o: runtime/mpi/ring.c include/macc_mpi.h
	@mkdir -p $(@D)
	OMPI_CC=$(CC) MPICH_CC=$(CC) $(MPICC) $(CPPFLAGS) $(CFLAGS) -fPIC -c $< -o $@

$(BUILD)/lib/libmaccrt_mpi.a: $(BUILD)/obj/mpi/ring.o
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/lib/libmaccrt_mpi_cuda.a: runtime/mpi/cuda.c
	@mkdir -p $(BUILD)/obj/mpi $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -I$(CUDA_HOME)/include -c $< -o $(BUILD)/obj/mpi/cuda.o
	rm -f $@ && ar rcs $@ $(BUILD)/obj/mpi/cuda.o

$(BUILD)/include/%.h: include/%.h
	@mkdir -p $(@D)
	cp $< $@

# ---- tests ---------------------------------------------------------------
$(BUILD)/tests/test_directive: tests/unit/test_directive.c $(GRAMMAR_OBJ)
$(BUILD)/tests/test_runtime: tests/unit/test_runtime.c tests/fake_gpu.h $(RTLIB)
$(BUILD)/tests/test_managed: tests/unit/test_managed.c $(RTLIB)
$(BUILD)/tests/test_freelist: tests/unit/test_freelist.c $(RTLIB)
$(BUILD)/tests/test_slab: tests/unit/test_slab.c $(RTLIB)
$(BUILD)/tests/test_crew: tests/unit/test_crew.c tests/crew_callers.h $(RTLIB)
$(BUILD)/tests/test_tasks: tests/unit/test_tasks.c $(RTLIB)
$(BUILD)/tests/test_placement: tests/unit/test_placement.c tests/fake_gpu.h $(RTLIB)
$(BUILD)/tests/test_analysis: tests/unit/test_analysis.c $(TRANSLATOR_OBJ) $(GRAMMAR_OBJ) $(TSC_OBJ)
$(BUILD)/tests/test_lower: tests/unit/test_lower.c $(TRANSLATOR_OBJ) $(GRAMMAR_OBJ) $(TSC_OBJ)

$(BUILD)/tests/test_%: | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) -lcriterion -ltree-sitter -fopenmp -ldl -lm

unit: $(UNIT_BIN)

check-unit: $(UNIT_BIN)
	@sh tests/run.sh unit $(BUILD) $(UNIT_BIN)

# The unit tests, normal and ASan builds, rounds after rounds beside spinning processes:
# the tests whose timing a loaded machine breaks (tests/flaky.sh; not part of check).
FLAKY_ROUNDS ?= 5
FLAKY_LOAD ?= 2
check-flaky: $(UNIT_BIN)
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SANITIZE=address,undefined unit
	@sh tests/flaky.sh $(BUILD) $(FLAKY_ROUNDS) $(FLAKY_LOAD)

check-golden: all
	@sh tests/run.sh golden $(BUILD)

check-bad: all
	@sh tests/run.sh bad $(BUILD)

check-e2e: all
	@sh tests/run.sh e2e $(BUILD)

check-integration: all
	@sh tests/integration/run.sh $(BUILD)

# The MPI module: the ring sample under mpirun (skipped without mpicc/mpirun).
check-mpi: all
	@sh tests/mpi/run.sh $(BUILD)

# The unit and end-to-end tests again, built with ASan and UBSan (the samples too).
ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
check-asan:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SANITIZE=address,undefined all unit
	@sh tests/run.sh unit $(BUILD)/asan $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/tests/%)
	@E2E_CFLAGS="$(ASAN_FLAGS)" sh tests/run.sh e2e $(BUILD)/asan

# The runtime's concurrent paths under ThreadSanitizer: tests/tsan/tsan_runtime.c (two fake
# GPUs and the host sharing dependent tasks; Criterion's runner does not start under TSan)
# and tests/tsan/tsan_tasks.c (the host task path: two threads creating tiny chained and
# independent tasks past the throttle) and bench/dispatch.c (matmul's tile graph on two fake
# GPUs with 12 helpers each and on four with 6: GPU completions combined, placed tasks handed
# over after the lock, tiles waited for by many helpers at once, the directory's scoped holds
# taking other GPUs' parts as they reach their entries; once more with its model of a GPU's
# throughput and of staged copies, DISPATCH_LANES and DISPATCH_FILL_US; and on sixteen fake GPUs
# of 2 helpers: nothing sized for a few devices) and tests/tsan/tsan_managed.c (managed memory
# on two fake GPUs: placement's measurement thread, launches on both GPUs taking sections from
# each other's records, the residency term's look-ups) and tests/tsan/tsan_crew.c (the copying
# crew: callers reusing their jobs at once, the crew sleeping, stopped mid-run) against a TSan build of libmaccrt. A report
# makes it exit 66: a failure.
TSAN_ENV := TSAN_OPTIONS="exitcode=66 halt_on_error=0 suppressions=$(CURDIR)/tests/tsan/suppressions.txt"
$(BUILD)/tests/tsan_runtime: tests/tsan/tsan_runtime.c tests/fake_gpu.h $(RTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) -fopenmp -ldl -lm
$(BUILD)/tests/tsan_tasks: tests/tsan/tsan_tasks.c $(RTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) -fopenmp -ldl -lm
$(BUILD)/tests/tsan_managed: tests/tsan/tsan_managed.c tests/fake_gpu.h $(RTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) -fopenmp -ldl -lm
$(BUILD)/tests/tsan_crew: tests/tsan/tsan_crew.c tests/crew_callers.h $(RTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) -fopenmp -ldl -lm
$(BUILD)/tests/tsan_dispatch: bench/dispatch.c tests/fake_gpu.h $(RTLIB)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o %.a,$^) -fopenmp -ldl -lm
check-tsan:
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan SANITIZE=thread $(BUILD)/tsan/tests/tsan_runtime $(BUILD)/tsan/tests/tsan_tasks $(BUILD)/tsan/tests/tsan_dispatch $(BUILD)/tsan/tests/tsan_managed $(BUILD)/tsan/tests/tsan_crew
	@for w in 0 1 1; do $(TSAN_ENV) MACC_WAIT_COMPLETES=$$w $(BUILD)/tsan/tests/tsan_runtime || exit 1; done; \
	for w in 0 1; do $(TSAN_ENV) MACC_WAIT_COMPLETES=$$w MACC_TEST_FAKE_ASYNC_US=20 $(BUILD)/tsan/tests/tsan_runtime || exit 1; done; \
	$(TSAN_ENV) MACC_TEST_FAKE_ASYNC_US=20 MACC_TEST_FAKE_AHEAD=4 $(BUILD)/tsan/tests/tsan_runtime || exit 1; \
	$(TSAN_ENV) MACC_DIR_FUTEX=1 $(BUILD)/tsan/tests/tsan_runtime || exit 1; \
	for i in 1 2; do $(TSAN_ENV) $(BUILD)/tsan/tests/tsan_tasks || exit 1; done; \
	dispatch() { e=$$1; shift; env $(TSAN_ENV) $$e $(BUILD)/tsan/tests/tsan_dispatch "$$@" > $(BUILD)/tsan/dispatch.out 2>&1 || \
	  { cat $(BUILD)/tsan/dispatch.out; exit 1; }; head -n 1 $(BUILD)/tsan/dispatch.out; }; \
	for g in "2 6 20 12" "4 6 20 6"; do for a in 0 1; do for w in 0 1; do \
	  dispatch "DISPATCH_ASYNC=$$a MACC_WAIT_COMPLETES=$$w" $$g; done; done; done; \
	dispatch "DISPATCH_ASYNC=1 DISPATCH_LANES=4 DISPATCH_FILL_US=30 DISPATCH_PEER_US=10" 2 6 20 6; \
	dispatch "MACC_WAIT_COMPLETES=1" 16 6 20 2; \
	dispatch "DISPATCH_TILE_KB=64" 4 8 20 4; \
	dispatch "MACC_RELEASE_IN_HELPER=2 MACC_COMPLETER_THREAD=1 DISPATCH_TILE_KB=64" 8 8 20 4; \
	$(TSAN_ENV) MACC_RELEASE_IN_HELPER=2 MACC_COMPLETER_THREAD=1 $(BUILD)/tsan/tests/tsan_runtime || exit 1; \
	for i in 1 2; do $(TSAN_ENV) $(BUILD)/tsan/tests/tsan_managed || exit 1; done; \
	for i in 1 2; do $(TSAN_ENV) $(BUILD)/tsan/tests/tsan_crew || exit 1; done; \
	echo "[tsan] 25 passed, 0 failed"

check: export SKIPPED = $(CURDIR)/$(BUILD)/skipped.txt
check: all $(UNIT_BIN)
	@$(MAKE) --no-print-directory all # again: what tools/deps.sh installed (Open MPI) is seen now
	@rm -f $(BUILD)/results.txt $(BUILD)/skipped.txt $(BUILD)/failed.txt $(BUILD)/rerun.txt
	@sh tests/run.sh unit $(BUILD) $(UNIT_BIN) || true
	@sh tests/run.sh golden $(BUILD) || true
	@sh tests/run.sh bad $(BUILD) || true
	@sh tests/run.sh e2e $(BUILD) || true
	@sh tests/run.sh driver $(BUILD) || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt sh tests/readme.sh $(BUILD) || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt sh tests/docs.sh $(BUILD) || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt python3 tests/layers.py || true
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SANITIZE=address,undefined all unit
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt sh tests/run.sh unit $(BUILD)/asan $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/tests/%) || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt E2E_CFLAGS="$(ASAN_FLAGS)" sh tests/run.sh e2e $(BUILD)/asan || true
	@if $(MAKE) --no-print-directory check-tsan > $(BUILD)/tsan.log 2>&1; then \
	  n=$$(sed -n 's/^\[tsan\] \([0-9]*\) passed.*/\1/p' $(BUILD)/tsan.log | tail -n 1); echo "$${n:-0} 0 tsan" >> $(BUILD)/results.txt; \
	else tail -n 40 $(BUILD)/tsan.log; echo "0 1 tsan" >> $(BUILD)/results.txt; fi; tail -n 1 $(BUILD)/tsan.log
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt MACC_NVCC= sh tests/run.sh golden $(BUILD)/asan || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt sh tests/run.sh bad $(BUILD)/asan || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt E2E_CFLAGS="$(ASAN_FLAGS)" sh tests/run.sh driver $(BUILD)/asan || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt sh tests/integration/run.sh $(BUILD) || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt sh tests/mpi/run.sh $(BUILD) || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt E2E_CFLAGS="$(ASAN_FLAGS)" sh tests/mpi/run.sh $(BUILD)/asan || true
	@RESULTS=$(CURDIR)/$(BUILD)/results.txt sh tests/realcodes/run.sh $(BUILD) both > $(BUILD)/realcodes.log 2>&1; \
	grep -E '^(FAIL|NOW|realcodes)|passed, ' $(BUILD)/realcodes.log || true
	@$(MAKE) --no-print-directory conformance-smoke > $(BUILD)/conformance-smoke.log 2>&1; s=$$?; \
	grep -E '^NEW FAILURE|passed, ' $(BUILD)/conformance-smoke.log; \
	p=$$(sed -n 's/^\([0-9]*\) passed, .*/\1/p' $(BUILD)/conformance-smoke.log | tail -n 1); \
	n=$$(grep -c '^NEW FAILURE' $(BUILD)/conformance-smoke.log); [ "$$s" -eq 0 ] || [ "$$n" -gt 0 ] || n=1; \
	echo "$${p:-0} $$n conformance-smoke (known failures not counted)" >> $(BUILD)/results.txt
	@$(MAKE) --no-print-directory fuzz-smoke || true
	@sh tests/run.sh summary $(BUILD)

# A short run of both fuzz targets (libFuzzer, clang): saved reproducers are
# replayed first. Long campaigns: sh tests/fuzz/run.sh $(BUILD) 1800
FUZZ_SECONDS ?= 30
fuzz-smoke:
	@sh tests/fuzz/run.sh $(BUILD) $(FUZZ_SECONDS) > $(BUILD)/fuzz.log 2>&1; \
	grep -E '^fuzz |passed' $(BUILD)/fuzz.log; \
	last=$$(tail -n 1 $(BUILD)/fuzz.log); \
	case "$$last" in *passed*failed) echo "$$last" | awk '{ print $$1, $$3, "fuzz" }' >> $(BUILD)/results.txt ;; \
	*) tail -n 5 $(BUILD)/fuzz.log; echo "0 1 fuzz" >> $(BUILD)/results.txt ;; esac

golden-update: all
	@sh tests/run.sh golden-update $(BUILD)

demo: all
	@sh samples/demo.sh $(BUILD)

# On a machine with a GPU: build the runtime there, use a macc binary built
# elsewhere (MACC=path, default $(BUILD)/bin/macc), run every sample and
# end-to-end test on the GPU alone and shared, print "N passed, N failed".
gpu-check:
	@sh tests/gpu-check.sh $(BUILD)

# On a machine with GPUs and MPI: the ring sample with one rank per GPU.
gpu-check-mpi:
	@sh tests/mpi/gpu.sh $(BUILD)

# Conformance (OpenMP_VV, OpenACCV-V in ../shared/conformance or $MACC_CONFORMANCE; not
# part of check; tests/conformance/README.md). CONF_ARGS: more run.sh options (-j, timeouts).
#   make conformance        both suites host-only, and with the default targets where a GPU is present
#   make conformance-smoke  the tests in tests/conformance/smoke.txt host-only; exit 1 only on a
#                           failure not in tests/conformance/smoke-known.txt
# Real programs (../shared/realcodes or $MACC_REALCODES; tests/realcodes/run.sh): host-only and
# with the default targets (every device file compiled by nvcc; run on the GPU where one is present).
.PHONY: realcodes
realcodes: all
	@sh tests/realcodes/run.sh $(BUILD) both

.PHONY: conformance conformance-smoke
conformance: all
	@sh tests/conformance/run.sh --cc $(MACC) --flags=--targets=host -o $(BUILD)/conformance/host $(CONF_ARGS) omp acc; s=$$?; \
	if nvidia-smi -L > /dev/null 2>&1; then sh tests/conformance/run.sh --cc $(MACC) -o $(BUILD)/conformance/default $(CONF_ARGS) omp acc || s=1; fi; exit $$s
conformance-smoke: all
	@sh tests/conformance/run.sh --cc $(MACC) --flags=--targets=host --list tests/conformance/smoke.txt \
		--known tests/conformance/smoke-known.txt -o $(BUILD)/conformance/smoke $(CONF_ARGS) omp acc

clean:
	rm -rf $(BUILD)

# ---- install --------------------------------------------------------------
#   make install [PREFIX=/usr/local] [DESTDIR=staging]   (builds first)
#   make uninstall [PREFIX=...] [DESTDIR=...]            removes exactly those files
# The driver finds the runtime relative to itself (<bindir>/../lib and
# <bindir>/../include), so keep LIBDIR and INCLUDEDIR next to BINDIR.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
INSTALL ?= install
MACC_VERSION := $(shell sed -n 's/.*MACC_VERSION_STRING "\(.*\)".*/\1/p' translator/macc.h)
# macc.pc: paths under PREFIX are written as ${prefix}/... (pkg-config --define-prefix works).
PC_SUBST = -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(MACC_VERSION)|g' \
           -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|g' \
           -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|g'
INSTALLED_LIBS := libmaccrt.a libmaccrt.so libmaccrt_cuda.a libmaccrt_mpi.a libmaccrt_mpi_cuda.a
INSTALLED_HDRS := macc_rt.h macc_device.h macc_mpi.h openacc.h

.PHONY: install uninstall
install: all
	@case "$(abspath $(LIBDIR)) $(abspath $(INCLUDEDIR))" in \
	  "$(abspath $(BINDIR)/../lib) $(abspath $(BINDIR)/../include)") ;; \
	  *) echo "warning: macc looks for its runtime in BINDIR/../lib and BINDIR/../include;" \
	          "LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) are elsewhere" >&2 ;; \
	esac
	$(INSTALL) -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(LIBDIR)' '$(DESTDIR)$(INCLUDEDIR)' \
		'$(DESTDIR)$(PKGCONFIGDIR)' '$(DESTDIR)$(MANDIR)/man1'
	$(INSTALL) -m 755 $(MACC) '$(DESTDIR)$(BINDIR)/macc'
	$(INSTALL) -m 644 $(RTLIB) $(RTCUDA) $(filter %.a,$(RTMPI)) '$(DESTDIR)$(LIBDIR)/'
	$(INSTALL) -m 755 $(RTSO) '$(DESTDIR)$(LIBDIR)/'
	$(INSTALL) -m 644 $(PUBHDR) $(filter %.h,$(RTMPI)) '$(DESTDIR)$(INCLUDEDIR)/'
	sed $(PC_SUBST) macc.pc.in > '$(DESTDIR)$(PKGCONFIGDIR)/macc.pc'
	chmod 644 '$(DESTDIR)$(PKGCONFIGDIR)/macc.pc'
	$(INSTALL) -m 644 docs/macc.1 '$(DESTDIR)$(MANDIR)/man1/macc.1'

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/macc'
	rm -f $(foreach f,$(INSTALLED_LIBS),'$(DESTDIR)$(LIBDIR)/$(f)')
	rm -f $(foreach f,$(INSTALLED_HDRS),'$(DESTDIR)$(INCLUDEDIR)/$(f)')
	rm -f '$(DESTDIR)$(PKGCONFIGDIR)/macc.pc'
	rm -f '$(DESTDIR)$(MANDIR)/man1/macc.1'

-include $(shell find $(BUILD)/obj $(BUILD)/pic -name '*.d' 2>/dev/null)
