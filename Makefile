# The two commands of the README: `make run` and `make test`. Each sets up what is missing
# (cmake/setup.sh), configures and builds, then runs the quickstart or the tests.
BUILD   ?= build
JOBS    ?= 2
TYPE    ?= Release
VENV    := .venv
CMAKE   := $(VENV)/bin/cmake
PY      := $(VENV)/bin/python
EXTRA   ?=

.PHONY: setup configure build run test bench clean sanitize fuzz
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

test: build
	cd $(BUILD) && $(abspath $(VENV))/bin/ctest --output-on-failure -j 1

clean:
	rm -rf $(BUILD)

# `make sanitize`: the whole project with ASan and UBSan (ORRERY_SANITIZE, GCC) in its own folder,
# then every ctest test under them, leaks included. LibTorch, Arrow and the GL stack are not
# instrumented but run inside the checked processes; nothing is suppressed.
ASAN_BUILD ?= build-asan
NICE       ?= nice -n 15
SAN_ENV    := ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:check_initialization_order=1 \
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
TORCH_PREFIX = $$($(PY) -W ignore -c 'import torch; print(torch.utils.cmake_prefix_path)')

$(ASAN_BUILD)/build.ninja: | setup
	$(CMAKE) -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DORRERY_SANITIZE=ON \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DCMAKE_PREFIX_PATH="$(TORCH_PREFIX)" $(EXTRA)

sanitize: setup $(ASAN_BUILD)/build.ninja
	$(NICE) $(CMAKE) --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(SAN_ENV) $(abspath $(VENV))/bin/ctest --output-on-failure -j 1

# `make fuzz`: the libFuzzer targets of tests/fuzz (clang, ORRERY_FUZZ, ASan and UBSan) in their
# own folder, each run FUZZ_SECONDS on its seed corpus; fails on the first crash, leak or hang
# and leaves the input in $(FUZZ_BUILD)/crashes/.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?= csv parquet safetensors options lua
# Bookworm's default clang (14) lacks C++20 features the code uses, such as lambdas capturing
# structured bindings; clang 19 is in bookworm too.
FUZZ_CC      ?= clang-19
FUZZ_CXX     ?= clang++-19

$(FUZZ_BUILD)/build.ninja: | setup
	$(CMAKE) -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DORRERY_SANITIZE=ON -DORRERY_FUZZ=ON \
	  -DCMAKE_C_COMPILER=$(FUZZ_CC) -DCMAKE_CXX_COMPILER=$(FUZZ_CXX) \
	  -DCMAKE_MAKE_PROGRAM=$(abspath $(VENV)/bin/ninja) -DCMAKE_PREFIX_PATH="$(TORCH_PREFIX)" $(EXTRA)

fuzz: setup $(FUZZ_BUILD)/build.ninja
	$(NICE) $(CMAKE) --build $(FUZZ_BUILD) -j $(JOBS) --target orrery_fuzz
	$(SAN_ENV) $(NICE) tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)
