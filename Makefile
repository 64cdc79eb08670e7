# gpuagg: GPU hash aggregation for PostgreSQL (PGXS build)
#
#   make [PG_CONFIG=...] [NVCC=...]     build; the GPU device is built when nvcc is found
#   make install                         install into the PostgreSQL of PG_CONFIG
#   make installcheck                    the pg_regress suite against the running server
#                                        that preloads the installed gpuagg (PGHOST, PGPORT,
#                                        PGUSER); GPUAGG_TEST_DEVICE=cpu|gpu sets gpuagg.device
#   make deb                             Debian packages postgresql-N-gpuagg (test/deb.sh)
#   make regress-list                    print the pg_regress tests (used by test/check.sh)

EXTENSION = gpuagg
MODULE_big = gpuagg
# The install script of each version and the upgrade scripts between them:
# default_version (gpuagg.control) installs directly, every older version
# reaches it through ALTER EXTENSION gpuagg UPDATE.
DATA = sql/gpuagg--0.2.sql sql/gpuagg--0.1.sql sql/gpuagg--0.1--0.2.sql
PGFILEDESC = "gpuagg - GPU hash aggregation for PostgreSQL"

REGRESS = setup gucs devices hashagg_int hashagg_float hashagg_text hashagg_strings \
	hashagg_nulls hashagg_plain hashagg_having hashagg_types hashagg_stats hashagg_float_stats \
	hashagg_keytypes hashagg_numeric hashagg_numeric_device hashagg_distinct hashagg_groupingsets hashagg_shapes hashagg_parallel hashagg_direct_scan hashagg_pages hashagg_batches hashagg_spill hashagg_errors hashjoin_inner hashjoin_outer hashjoin_semi aggjoin aggjoin_keys fallback explain costs cancel tuning \
	hashagg_string_batches \
	aggjoin_strings aggjoin_group_strings hashagg_numeric_keys hashagg_uuid_keys \
	aggjoin_string_pieces hashagg_pages_workers

# The suite's expected output is that of a C-locale UTF8 database.
REGRESS_OPTS = --no-locale --encoding=UTF8

PG_CONFIG ?= pg_config

# ---- the GPU device (CUDA), when nvcc is available -------------------------
CUDA_HOME ?= /usr/local/cuda
# The toolkit's own nvcc first: an nvcc found on PATH may be a wrapper script
# far from the toolkit's libraries.
NVCC ?= $(shell if test -x $(CUDA_HOME)/bin/nvcc; then echo $(CUDA_HOME)/bin/nvcc; else command -v nvcc 2>/dev/null; fi)
# Machine code for Turing .. Hopper, plus PTX so newer GPUs can JIT it.
CUDA_ARCHS ?= 75 80 86 89 90
NVCC_GENCODE = $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
	-gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
NVCC_FLAGS ?= -O3 -std=c++17 -Xcompiler -fPIC -Xcompiler -Wall $(NVCC_GENCODE)

# The static CUDA runtime (so the library loads on hosts with no GPU driver):
# the first of these directories that holds libcudart_static.a.
NVCC_REAL_DIR = $(dir $(realpath $(NVCC)))
CUDA_LIB_CANDIDATES = $(CUDA_HOME)/lib64 $(NVCC_REAL_DIR)../lib64 \
	$(NVCC_REAL_DIR)../targets/x86_64-linux/lib $(CUDA_HOME)/targets/x86_64-linux/lib \
	/usr/lib/x86_64-linux-gnu
ifneq ($(strip $(NVCC)),)
CUDA_LIBDIR ?= $(firstword $(foreach d,$(CUDA_LIB_CANDIDATES),$(if $(wildcard $(d)/libcudart_static.a),$(d))))
endif

# The device layer in plain C: the dispatcher and its rules (cuda/*.c), the
# CPU device (cuda/cpu/) and the GPU service (cuda/service/); the GPU device
# (cuda/gpu/, cuda/gpu/kernels/) when nvcc is there, else its stub
# (cuda/gpu/none.c).
DEVICE_OBJS = $(patsubst %.c,%.o,$(wildcard cuda/*.c cuda/cpu/*.c cuda/service/*.c))
GPU_NONE_OBJS = cuda/gpu/none.o
GPU_CUDA_OBJS = $(patsubst %.cu,%.o,$(wildcard cuda/gpu/*.cu cuda/gpu/kernels/*.cu))
ifeq ($(strip $(NVCC)),)
GPU_OBJS = $(GPU_NONE_OBJS)
ifeq ($(origin NVCC),file)
GPUAGG_BUILD_NOTE = gpuagg: nvcc not found (set NVCC or CUDA_HOME, or install the CUDA toolkit); building the CPU device only
else
GPUAGG_BUILD_NOTE = gpuagg: NVCC is empty; building the CPU device only
endif
else ifeq ($(strip $(CUDA_LIBDIR)),)
GPU_OBJS = $(GPU_NONE_OBJS)
GPUAGG_BUILD_NOTE = gpuagg: $(NVCC) found but no libcudart_static.a in $(CUDA_LIB_CANDIDATES) (set CUDA_HOME or CUDA_LIBDIR); building the CPU device only
else
GPU_OBJS = $(GPU_CUDA_OBJS)
SHLIB_LINK += -L$(CUDA_LIBDIR) -lcudart_static -lstdc++ -ldl -lrt -lpthread
GPUAGG_BUILD_NOTE = gpuagg: building the GPU device with $(NVCC), CUDA runtime from $(CUDA_LIBDIR)
endif

# The GPU service's threads and process-shared semaphores, in every build.
SHLIB_LINK += -lpthread

SRC_OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c src/*/*.c))
OBJS = $(SRC_OBJS) $(DEVICE_OBJS) $(GPU_OBJS)
PG_CPPFLAGS = -I$(srcdir)/src -I$(srcdir)/cuda
PG_CFLAGS = -Wall -Wmissing-prototypes

# Debian's PGXS wants LLVM bitcode for every object; CUDA objects have none.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

ifeq ($(filter regress-list cuda-libdir device-objs gpu-objs clean installcheck deb,$(MAKECMDGOALS)),)
$(shell echo '$(GPUAGG_BUILD_NOTE)' >&2)
endif

DEVICE_HEADERS = $(wildcard cuda/*.h)
CPU_HEADERS = $(wildcard cuda/cpu/*.h)
SERVICE_HEADERS = $(wildcard cuda/service/*.h)
GPU_HEADERS = $(wildcard cuda/gpu/*.cuh cuda/gpu/kernels/*.cuh)

cuda/gpu/%.o: cuda/gpu/%.cu $(DEVICE_HEADERS) $(GPU_HEADERS)
	$(NVCC) $(NVCC_FLAGS) -I$(srcdir)/cuda -I$(srcdir)/cuda/gpu -c $< -o $@

$(SRC_OBJS): $(wildcard src/*.h src/*/*.h) cuda/gpuagg_device.h cuda/gpuagg_hash.h \
	cuda/gpuagg_service.h
$(DEVICE_OBJS) $(GPU_NONE_OBJS): $(DEVICE_HEADERS) $(CPU_HEADERS) $(SERVICE_HEADERS)

# installcheck runs on the server's own gpuagg.device unless one is given
# (a host without a GPU needs cpu: the default, auto, then plans no gpuagg node).
ifneq ($(strip $(GPUAGG_TEST_DEVICE)),)
installcheck: export PGOPTIONS += -c gpuagg.device=$(GPUAGG_TEST_DEVICE)
endif

.PHONY: regress-list cuda-libdir device-objs gpu-objs deb
regress-list:
	@echo $(REGRESS)

# Where the CUDA runtime was found (empty without the GPU device); used by
# test/conformance/run.sh to link the same way.
cuda-libdir:
	@echo $(CUDA_LIBDIR)

# The objects of the device layer, for tests that link it without PostgreSQL
# (test/conformance/run.sh, the kernel benchmarks).
device-objs:
	@echo $(DEVICE_OBJS)
gpu-objs:
	@echo $(GPU_CUDA_OBJS)

# Debian packages for every postgresql-server-dev-N installed, into debs/.
deb:
	bash $(srcdir)/test/deb.sh build

EXTRA_CLEAN = test/conformance/conformance
