# The two commands of the README: `make run` and `make test`. Each sets up what is missing
# (cmake/setup.sh), configures and builds, then runs the quickstart or the tests.
BUILD   ?= build
JOBS    ?= 2
TYPE    ?= Release
VENV    := .venv
CMAKE   := $(VENV)/bin/cmake
PY      := $(VENV)/bin/python
EXTRA   ?=

.PHONY: setup configure build run test bench clean
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
