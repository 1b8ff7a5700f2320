# orrery_add_plugin(KIND NAME SOURCES...)
# Builds one plugin shared library, lib/orrery-plugins/<kind>_<name>.so, linked against the
# host's core library and LibTorch, with the shared precompiled header.
function(orrery_add_plugin kind name)
  set(target orrery_${kind}_${name})
  add_library(${target} MODULE ${ARGN})
  target_link_libraries(${target} PRIVATE orrery_core orrery_flags)
  target_precompile_headers(${target} REUSE_FROM orrery_pch)
  set_target_properties(${target} PROPERTIES
    PREFIX "" OUTPUT_NAME "${kind}_${name}"
    LIBRARY_OUTPUT_DIRECTORY ${ORRERY_PLUGIN_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  set_property(GLOBAL APPEND PROPERTY ORRERY_PLUGIN_TARGETS ${target})
endfunction()
