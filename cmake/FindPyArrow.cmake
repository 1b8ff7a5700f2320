# FindPyArrow: Arrow and Parquet C++ as the pyarrow wheel bundles them (site-packages/pyarrow:
# libarrow.so.NNNN, libparquet.so.NNNN and include/), found the way LibTorch is found from the
# torch wheel, so no system Arrow is needed:
#   1. PyArrow_DIR, when set: the pyarrow package folder;
#   2. pyarrow beside torch, in the site-packages that Torch_DIR lies in;
#   3. otherwise Python is asked: pyarrow.get_include() and pyarrow.get_library_dirs()
#      (PyArrow_PYTHON, default the project's .venv/bin/python, else python3).
#
# The libraries must share LibTorch's C++ ABI (_GLIBCXX_USE_CXX11_ABI): a plugin holds both, and
# std::string crossing between them would be laid out two ways. Each library's ABI is read from
# its symbols (std::__cxx11 names exist only under the new ABI); on a mismatch PyArrow is not
# found and a message says why.
#
# Sets PyArrow_FOUND, PyArrow_VERSION, PyArrow_INCLUDE_DIR, PyArrow_LIBRARY_DIR,
# PyArrow_CXX11_ABI, and the imported targets PyArrow::arrow and PyArrow::parquet.

set(PyArrow_DIR "" CACHE PATH "The pyarrow package folder (default: beside torch, else asked of Python)")

# 1 or 0: the C++ ABI `library` was built with (cached per file, as reading a 50 MB library for a
# string costs a second).
function(_pyarrow_cxx11_abi library out)
  file(TIMESTAMP "${library}" _stamp)
  set(_key "${library}@${_stamp}")
  if(DEFINED _PYARROW_ABI_CACHE_KEY_${out} AND _PYARROW_ABI_CACHE_KEY_${out} STREQUAL _key)
    set(${out} ${_PYARROW_ABI_CACHE_${out}} PARENT_SCOPE)
    return()
  endif()
  file(STRINGS "${library}" _hit REGEX "St7__cxx1112basic_string" LIMIT_COUNT 1)
  if(_hit)
    set(_abi 1)
  else()
    set(_abi 0)
  endif()
  set(_PYARROW_ABI_CACHE_KEY_${out} "${_key}" CACHE INTERNAL "")
  set(_PYARROW_ABI_CACHE_${out} ${_abi} CACHE INTERNAL "")
  set(${out} ${_abi} PARENT_SCOPE)
endfunction()

set(_pyarrow_dir "${PyArrow_DIR}")
if(NOT _pyarrow_dir AND Torch_DIR)
  get_filename_component(_site "${Torch_DIR}/../../../.." ABSOLUTE)  # site-packages/torch/share/cmake/Torch
  if(EXISTS "${_site}/pyarrow/include/arrow/api.h")
    set(_pyarrow_dir "${_site}/pyarrow")
  endif()
endif()
if(NOT _pyarrow_dir)
  find_program(PyArrow_PYTHON NAMES python python3 HINTS "${PROJECT_SOURCE_DIR}/.venv/bin" NO_DEFAULT_PATH)
  find_program(PyArrow_PYTHON NAMES python3 python)
  if(PyArrow_PYTHON)
    execute_process(
      COMMAND "${PyArrow_PYTHON}" -c "import pyarrow, os; print(os.path.dirname(pyarrow.__file__))"
      OUTPUT_VARIABLE _out OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0 AND EXISTS "${_out}/include/arrow/api.h")
      set(_pyarrow_dir "${_out}")
    endif()
  endif()
endif()

set(PyArrow_INCLUDE_DIR "")
set(PyArrow_LIBRARY_DIR "")
set(_why "no pyarrow wheel found (pip install pyarrow into the venv that holds torch, or set PyArrow_DIR)")
if(_pyarrow_dir)
  set(PyArrow_INCLUDE_DIR "${_pyarrow_dir}/include")
  set(PyArrow_LIBRARY_DIR "${_pyarrow_dir}")
  file(GLOB _arrow_libs "${_pyarrow_dir}/libarrow.so.[0-9]*")
  file(GLOB _parquet_libs "${_pyarrow_dir}/libparquet.so.[0-9]*")
  list(SORT _arrow_libs)
  list(SORT _parquet_libs)
  list(LENGTH _arrow_libs _n_arrow)
  list(LENGTH _parquet_libs _n_parquet)
  if(_n_arrow EQUAL 0 OR _n_parquet EQUAL 0)
    set(_why "${_pyarrow_dir} holds no libarrow.so.N or libparquet.so.N")
  else()
    list(GET _arrow_libs 0 PyArrow_ARROW_LIBRARY)
    list(GET _parquet_libs 0 PyArrow_PARQUET_LIBRARY)
    file(STRINGS "${PyArrow_INCLUDE_DIR}/arrow/util/config.h" _version REGEX "#define ARROW_VERSION_STRING")
    string(REGEX REPLACE ".*\"([^\"]*)\".*" "\\1" PyArrow_VERSION "${_version}")
    _pyarrow_cxx11_abi("${PyArrow_ARROW_LIBRARY}" PyArrow_CXX11_ABI)
    set(_why "")
    # LibTorch's ABI, from its c10 library beside libtorch.
    if(TORCH_LIBRARY)
      get_filename_component(_torch_lib_dir "${TORCH_LIBRARY}" DIRECTORY)
      if(EXISTS "${_torch_lib_dir}/libc10.so")
        _pyarrow_cxx11_abi("${_torch_lib_dir}/libc10.so" _torch_abi)
        if(NOT _torch_abi EQUAL PyArrow_CXX11_ABI)
          set(_why "pyarrow's Arrow ${PyArrow_VERSION} (${PyArrow_ARROW_LIBRARY}) was built with "
                   "_GLIBCXX_USE_CXX11_ABI=${PyArrow_CXX11_ABI} but LibTorch (${_torch_lib_dir}) with "
                   "_GLIBCXX_USE_CXX11_ABI=${_torch_abi}: one plugin cannot link both. Install a pyarrow "
                   "and a torch wheel of the same ABI")
          string(REPLACE ";" "" _why "${_why}")
          message(WARNING "PyArrow: ${_why}")  # louder than a missing wheel: someone installed one
        endif()
      endif()
    endif()
  endif()
endif()

include(FindPackageHandleStandardArgs)
if(_why)
  set(PyArrow_FOUND FALSE)
  if(NOT PyArrow_FIND_QUIETLY)
    message(STATUS "PyArrow: not used: ${_why}")
  endif()
  if(PyArrow_FIND_REQUIRED)
    message(FATAL_ERROR "PyArrow is required: ${_why}")
  endif()
else()
  find_package_handle_standard_args(PyArrow
    REQUIRED_VARS PyArrow_ARROW_LIBRARY PyArrow_PARQUET_LIBRARY PyArrow_INCLUDE_DIR
    VERSION_VAR PyArrow_VERSION)
endif()

if(PyArrow_FOUND AND NOT TARGET PyArrow::arrow)
  # Imported include folders are system headers: Arrow's warnings stay out of ours.
  add_library(PyArrow::arrow SHARED IMPORTED)
  set_target_properties(PyArrow::arrow PROPERTIES
    IMPORTED_LOCATION "${PyArrow_ARROW_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${PyArrow_INCLUDE_DIR}")
  add_library(PyArrow::parquet SHARED IMPORTED)
  set_target_properties(PyArrow::parquet PROPERTIES
    IMPORTED_LOCATION "${PyArrow_PARQUET_LIBRARY}"
    INTERFACE_LINK_LIBRARIES PyArrow::arrow)
endif()
