# The two commands of the README: `make run` and `make test`. Each sets up what is missing
# (cmake/setup.sh), configures and builds, then runs the quickstart or the tests.
BUILD   ?= build
JOBS    ?= 2
TYPE    ?= Release
VENV    := .venv
CMAKE   := $(VENV)/bin/cmake
PY      := $(VENV)/bin/python
EXTRA   ?=

.PHONY: setup configure build run test check install cuda bench clean sanitize fuzz
setup:
	@bash cmake/setup.sh

$(BUILD)/build.ninja: | setup
	$(CMAKE) -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(TYPE) \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) \
	  -DCMAKE_PREFIX_PATH="$$($(PY) -W ignore -c 'import torch; print(torch.utils.cmake_prefix_path)')" $(EXTRA)

configure: setup $(BUILD)/build.ninja

build: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/bin/orrery run scripts/quickstart.lua

# ctest runs JOBS tests at a time, each with one intra-op thread (tests/CMakeLists.txt), and
# the few whose ranks must meet within seconds alone. `make test` is every test; `make check` the
# fast loop: what changed, built, then each program's cases not tagged [slow] (label check), which
# `make test` runs anyway as part of the whole programs.
test: build
	cd $(BUILD) && $(abspath $(VENV))/bin/ctest --output-on-failure -j $(JOBS) -LE check

check: build
	cd $(BUILD) && $(abspath $(VENV))/bin/ctest --output-on-failure -j $(JOBS) -L check

# `make install PREFIX=P`: bin/orrery, the core library, the plugins, the SDK headers, the CMake
# package Orrery (lib/cmake/Orrery) and the scripts and assets (share/orrery), relocatable.
PREFIX ?= /usr/local
install: build
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD)

# `make cuda`: the CUDA path compiled, not run (no GPU needed): a second virtual environment with
# the CUDA LibTorch, configured with nvcc (CUDA_HOME), and the CUDA kernels and the core built in
# their own folder. What CI keeps compiling between the sessions that have a GPU (docs/gpu.md).
CUDA_VENV   := .venv-cuda
CUDA_BUILD  ?= build-cuda
CUDA_TORCH  ?= torch==2.14.1
CUDA_HOME   ?= /usr/local/cuda
CUDA_TARGETS ?= orrery_kernels orrery_core

cuda:
	@bash cmake/setup.sh
	@test -x $(CUDA_HOME)/bin/nvcc || { echo "make cuda: no nvcc at $(CUDA_HOME)/bin/nvcc (set CUDA_HOME)"; exit 1; }
	@test -x $(CUDA_VENV)/bin/python || python3 -m venv $(CUDA_VENV)
	@$(CUDA_VENV)/bin/python -W ignore -c 'import torch, cmake, ninja; assert torch.version.cuda' 2>/dev/null || \
	  { echo "setup: installing $(CUDA_TORCH) (CUDA LibTorch), cmake and ninja into $(CUDA_VENV)"; \
	    $(CUDA_VENV)/bin/pip install -q --disable-pip-version-check "$(CUDA_TORCH)" cmake ninja; }
	$(CUDA_VENV)/bin/cmake -S . -B $(CUDA_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DORRERY_UI=OFF -DORRERY_CUDA=ON \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(CUDA_VENV)/bin/ninja) -DCUDA_TOOLKIT_ROOT_DIR=$(CUDA_HOME) \
	  -DCMAKE_CUDA_COMPILER=$(CUDA_HOME)/bin/nvcc \
	  -DCMAKE_PREFIX_PATH="$$($(CUDA_VENV)/bin/python -W ignore -c 'import torch; print(torch.utils.cmake_prefix_path)')" $(EXTRA)
	$(CUDA_VENV)/bin/cmake --build $(CUDA_BUILD) -j $(JOBS) --target $(CUDA_TARGETS)

# `make sanitize`: the whole project with ASan and UBSan (ORRERY_SANITIZE) in its own folder, then
# the ctest tests under them, leaks included: those that check Orrery's own memory handling
# (tests/CMakeLists.txt leaves out the programs of LibTorch arithmetic, the experiment scripts
# and the README's commands, and plain_only labels headless_configure). LibTorch, Arrow and the GL stack are not
# instrumented but run inside the checked processes; nothing is suppressed. One build serves
# `make fuzz` too: clang-19, with libFuzzer's coverage (ORRERY_FUZZ), so CI compiles the project
# twice (plain and sanitized), not three times.
ASAN_BUILD ?= build-asan
NICE       ?= nice -n 15
SAN_ENV    := ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1 \
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TORCH_PREFIX = $$($(PY) -W ignore -c 'import torch; print(torch.utils.cmake_prefix_path)')
# Bookworm's default clang (14) lacks C++20 features the code uses, such as lambdas capturing
# structured bindings; clang 19 is in bookworm too.
SAN_CC     ?= clang-19
SAN_CXX    ?= clang++-19

$(ASAN_BUILD)/build.ninja: | setup
	$(CMAKE) -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DORRERY_SANITIZE=ON -DORRERY_FUZZ=ON \
	  -DCMAKE_C_COMPILER=$(SAN_CC) -DCMAKE_CXX_COMPILER=$(SAN_CXX) \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DCMAKE_PREFIX_PATH="$(TORCH_PREFIX)" $(EXTRA)

sanitize: setup $(ASAN_BUILD)/build.ninja
	$(NICE) $(CMAKE) --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(SAN_ENV) $(abspath $(VENV))/bin/ctest --output-on-failure -j $(JOBS) -LE plain_only

# `make fuzz`: the libFuzzer targets of tests/fuzz (built in the sanitized folder above) each run
# FUZZ_SECONDS on its seed corpus; fails on the first crash, leak or hang and leaves the input in
# $(ASAN_BUILD)/crashes/.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= csv training_data parquet safetensors options lua text

fuzz: setup $(ASAN_BUILD)/build.ninja
	$(NICE) $(CMAKE) --build $(ASAN_BUILD) -j $(JOBS) --target orrery_fuzz
	$(SAN_ENV) $(NICE) tests/fuzz/run.sh $(ASAN_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
