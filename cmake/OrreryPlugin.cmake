# orrery_add_plugin(KIND NAME SOURCES...)
# Builds one plugin shared library, <kind>_<name>.so, for KIND one of arch, head, optim, param, data.
# Inside Orrery's own build it goes to lib/orrery-plugins/ with the project's flags and precompiled
# header; in a project of its own (find_package(Orrery)) it links the installed core library and
# the LibTorch Orrery was built with, and lands in the project's build folder, which
# ORRERY_PLUGIN_PATH then names.
function(orrery_add_plugin kind name)
  if(NOT kind MATCHES "^(arch|head|optim|param|data)$")
    message(FATAL_ERROR "orrery_add_plugin: kind '${kind}' is not one of arch, head, optim, param, data")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "orrery_add_plugin: name '${name}' is not an identifier (letters, digits, _)")
  endif()
  if(NOT ARGN)
    message(FATAL_ERROR "orrery_add_plugin(${kind} ${name}): give its source files")
  endif()
  set(target orrery_${kind}_${name})
  add_library(${target} MODULE ${ARGN})
  set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME "${kind}_${name}"
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  if(TARGET orrery_core)
    target_link_libraries(${target} PRIVATE orrery_core orrery_flags)
    target_precompile_headers(${target} REUSE_FROM orrery_pch)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ORRERY_PLUGIN_OUTPUT_DIR})
    set_property(GLOBAL APPEND PROPERTY ORRERY_PLUGIN_TARGETS ${target})
  else()
    target_link_libraries(${target} PRIVATE Orrery::core)
  endif()
endfunction()
