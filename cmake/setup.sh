#!/usr/bin/env bash
# Installs what Orrery needs on a fresh Debian bookworm machine, and nothing that is already there:
# the Debian packages (apt) and a virtual environment .venv with the CPU LibTorch from the pip
# torch wheel, plus CMake and Ninja from PyPI so the build does not depend on the host's versions,
# and pyarrow, whose bundled Arrow C++ the parquet data plugin links (cmake/FindPyArrow.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."

TORCH_SPEC=${ORRERY_TORCH_SPEC:-torch==2.13.0}
# clang-19 and its compiler-rt (libFuzzer, sanitizers) are for `make fuzz` only; bible-kjv is a text
# corpus for the language models (docs/language.md).
APT_PACKAGES=(g++ make pkg-config liblua5.4-dev nlohmann-json3-dev catch2 libreadline-dev
              libimgui-dev libglfw3-dev libstb-dev xvfb xauth libgl1-mesa-dri libglx-mesa0
              fonts-dejavu-core tmux clang-19 libclang-rt-19-dev bible-kjv)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  python3 -m venv .venv
fi
if ! .venv/bin/python -c 'import torch, cmake, ninja, pyarrow' 2>/dev/null; then
  echo "setup: installing $TORCH_SPEC, cmake, ninja and pyarrow into .venv (CPU LibTorch, Arrow C++)"
  .venv/bin/pip install -q --disable-pip-version-check "$TORCH_SPEC" cmake ninja pyarrow==26.0.1
fi
# The released Toto 2.0 package, which loads what `orrery export` writes (tests/test_export.cpp).
# It declares Python >= 3.12 but runs on 3.11; its modules' own dependencies come first.
if ! .venv/bin/python -W ignore -c 'import toto2' 2>/dev/null; then
  echo "setup: installing the released toto-2 package into .venv (for the export test)"
  .venv/bin/pip install -q --disable-pip-version-check "numpy<2.4" einops jaxtyping huggingface-hub safetensors \
    "gluonts[torch]" unit-scaling
  .venv/bin/pip install -q --disable-pip-version-check --no-deps --ignore-requires-python toto-2==2.0.0 \
    dd-unit-scaling==0.1.0
fi
