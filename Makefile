# gpuagg: GPU hash aggregation for PostgreSQL (PGXS build)
#
#   make [PG_CONFIG=...] [NVCC=...]     build; the GPU device is built when nvcc is found
#   make install                         install into the PostgreSQL of PG_CONFIG
#   make regress-list                    print the pg_regress tests (used by test/check.sh)

EXTENSION = gpuagg
MODULE_big = gpuagg
DATA = sql/gpuagg--0.1.sql
PGFILEDESC = "gpuagg - GPU hash aggregation for PostgreSQL"

REGRESS = setup gucs devices hashagg_int hashagg_float hashagg_text \
	hashagg_nulls hashagg_plain hashagg_having hashagg_types hashagg_stats hashagg_float_stats \
	hashagg_keytypes hashagg_numeric hashagg_numeric_device hashagg_distinct hashagg_groupingsets hashagg_shapes hashagg_parallel hashagg_direct_scan hashagg_batches hashagg_errors hashjoin_inner hashjoin_outer hashjoin_semi hashagg_join_fed hashagg_join_keys fallback explain cancel

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

DEVICE_OBJS = cuda/device.o cuda/device_cpu.o cuda/join_cpu.o cuda/aggjoin_cpu.o cuda/join_key.o
ifeq ($(strip $(NVCC)),)
GPU_OBJS = cuda/device_gpu_none.o
GPUAGG_BUILD_NOTE = gpuagg: nvcc not found (set NVCC or CUDA_HOME, or install the CUDA toolkit); building the CPU device only
else ifeq ($(strip $(CUDA_LIBDIR)),)
GPU_OBJS = cuda/device_gpu_none.o
GPUAGG_BUILD_NOTE = gpuagg: $(NVCC) found but no libcudart_static.a in $(CUDA_LIB_CANDIDATES) (set CUDA_HOME or CUDA_LIBDIR); building the CPU device only
else
GPU_OBJS = cuda/device_gpu.o cuda/strategy_gpu.o cuda/batch_gpu.o \
	cuda/hashagg_kernels.o cuda/hashagg_fused.o cuda/hashagg_partition.o cuda/hashagg_chunks.o \
	cuda/join_gpu.o cuda/hashjoin_kernels.o \
	cuda/aggjoin_gpu.o cuda/aggjoin_kernels.o cuda/derived_gpu.o
SHLIB_LINK += -L$(CUDA_LIBDIR) -lcudart_static -lstdc++ -ldl -lrt -lpthread
GPUAGG_BUILD_NOTE = gpuagg: building the GPU device with $(NVCC), CUDA runtime from $(CUDA_LIBDIR)
endif

OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c)) $(DEVICE_OBJS) $(GPU_OBJS)
PG_CPPFLAGS = -I$(srcdir)/cuda -I$(srcdir)/src
PG_CFLAGS = -Wall -Wmissing-prototypes

# Debian's PGXS wants LLVM bitcode for every object; CUDA objects have none.
override with_llvm = no

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

ifeq ($(filter regress-list cuda-libdir clean,$(MAKECMDGOALS)),)
$(shell echo '$(GPUAGG_BUILD_NOTE)' >&2)
endif

cuda/%.o: cuda/%.cu cuda/gpuagg_device.h cuda/device_impl.h cuda/derived_expr.h cuda/join_key.h \
	$(wildcard cuda/*.cuh)
	$(NVCC) $(NVCC_FLAGS) -I$(srcdir)/cuda -c $< -o $@

$(patsubst %.c,%.o,$(wildcard src/*.c)): $(wildcard src/*.h) cuda/gpuagg_device.h
$(DEVICE_OBJS): cuda/gpuagg_device.h cuda/device_impl.h cuda/derived_expr.h cuda/join_key.h

.PHONY: regress-list cuda-libdir
regress-list:
	@echo $(REGRESS)

# Where the CUDA runtime was found (empty without the GPU device); used by
# test/conformance/run.sh to link the same way.
cuda-libdir:
	@echo $(CUDA_LIBDIR)

EXTRA_CLEAN = test/conformance/conformance
