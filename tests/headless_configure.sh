#!/usr/bin/env bash
# A headless build (-DORRERY_UI=OFF) must configure with no GL, GLFW or Dear ImGui anywhere:
# configure one with those packages made unfindable, check that nothing links them, and compile
# its stand-in dashboard. Usage: headless_configure.sh CMAKE SOURCE_DIR PREFIX_PATH MAKE_PROGRAM
set -euo pipefail
cmake=$1 src=$2 prefix=$3 make_program=$4
dir=$(mktemp -d "${TMPDIR:-/tmp}/orrery-headless.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$cmake" -S "$src" -B "$dir" -G Ninja -DCMAKE_MAKE_PROGRAM="$make_program" -DCMAKE_PREFIX_PATH="$prefix" \
  -DORRERY_UI=OFF -DORRERY_TESTS=OFF -DCMAKE_DISABLE_FIND_PACKAGE_glfw3=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_OpenGL=ON >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
if grep -Eiq 'glfw|libGL\b|libOpenGL|imgui' "$dir/build.ninja"; then
  echo "a headless build still links the dashboard's libraries:"
  grep -Eio '[^ ]*(glfw|libGL|libOpenGL|imgui)[^ ]*' "$dir/build.ninja" | sort -u | head
  exit 1
fi
# The stand-in's own object only: orrery_ui's library would compile the plots too, minutes of work
# the plain build has already checked.
"$cmake" --build "$dir" --target ui/CMakeFiles/orrery_ui.dir/dashboard/headless.cpp.o >"$dir/build.log" 2>&1 ||
  { cat "$dir/build.log"; exit 1; }
echo "headless configure: no GL, GLFW or Dear ImGui; the stand-in dashboard compiles"
