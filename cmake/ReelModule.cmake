# Module layering for Reel.
#
# Every first-party library is declared with reel_module(NAME LEVEL n ...). A module may link
# only modules of a strictly lower level, and its sources may include only headers of the modules
# it links (DEPS, and what those link in turn). Both rules are checked at configure time, so a
# reversed dependency, or an include of a lower module the module does not link (storage of llm),
# fails the build.
#
# Levels follow the data flow: base (0) < pipeline (1) < vision (2) < llm (3) < storage (4)
# < jobs (5).

set_property(GLOBAL PROPERTY REEL_MODULES "")

function(reel_module name)
  cmake_parse_arguments(ARG "" "LEVEL" "SOURCES;DEPS;PRIVATE_LIBS;PUBLIC_LIBS" ${ARGN})
  if(NOT DEFINED ARG_LEVEL)
    message(FATAL_ERROR "reel_module(${name}): LEVEL is required")
  endif()
  set_property(GLOBAL PROPERTY REEL_LEVEL_${name} ${ARG_LEVEL})
  set_property(GLOBAL APPEND PROPERTY REEL_MODULES ${name})

  # The modules this one may include: its DEPS and everything they may include.
  set(reachable ${ARG_DEPS})
  foreach(dep IN LISTS ARG_DEPS)
    get_property(dep_level GLOBAL PROPERTY REEL_LEVEL_${dep})
    if("${dep_level}" STREQUAL "")
      message(FATAL_ERROR "reel_module(${name}): unknown module '${dep}' (declare it first)")
    endif()
    if(NOT dep_level LESS ARG_LEVEL)
      message(FATAL_ERROR
        "Layering violation: ${name} (level ${ARG_LEVEL}) may not depend on ${dep} (level ${dep_level})")
    endif()
    get_property(dep_reachable GLOBAL PROPERTY REEL_REACHABLE_${dep})
    list(APPEND reachable ${dep_reachable})
  endforeach()
  list(REMOVE_DUPLICATES reachable)
  set_property(GLOBAL PROPERTY REEL_REACHABLE_${name} ${reachable})

  # Include check: a module's sources may include only its own headers and those of lower modules.
  foreach(src IN LISTS ARG_SOURCES)
    file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/${src}" includes REGEX "^#include \"[a-z_]+/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"([a-z_]+)/.*" "\\1" included "${line}")
      list(FIND REEL_ALL_MODULES "${included}" known)
      if(known EQUAL -1 OR included STREQUAL name)
        continue()
      endif()
      list(FIND reachable "${included}" declared)
      if(declared EQUAL -1)
        get_property(inc_level GLOBAL PROPERTY REEL_LEVEL_${included})
        if("${inc_level}" STREQUAL "" OR NOT inc_level LESS ARG_LEVEL)
          message(FATAL_ERROR
            "Layering violation: ${name}/${src} includes ${included}/ (not a lower module)")
        endif()
        message(FATAL_ERROR
          "Layering violation: ${name}/${src} includes ${included}/, a module ${name} does not link")
      endif()
    endforeach()
  endforeach()

  if(NOT ARG_SOURCES)
    # A module with no sources yet: an interface library keeps the graph whole.
    add_library(reel_${name} INTERFACE)
    target_include_directories(reel_${name} INTERFACE ${PROJECT_SOURCE_DIR})
    foreach(dep IN LISTS ARG_DEPS)
      target_link_libraries(reel_${name} INTERFACE reel_${dep})
    endforeach()
    return()
  endif()
  add_library(reel_${name} STATIC ${ARG_SOURCES})
  add_library(reel::${name} ALIAS reel_${name})
  target_include_directories(reel_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_features(reel_${name} PUBLIC cxx_std_20)
  foreach(dep IN LISTS ARG_DEPS)
    target_link_libraries(reel_${name} PUBLIC reel_${dep})
  endforeach()
  if(ARG_PUBLIC_LIBS)
    target_link_libraries(reel_${name} PUBLIC ${ARG_PUBLIC_LIBS})
  endif()
  if(ARG_PRIVATE_LIBS)
    target_link_libraries(reel_${name} PRIVATE ${ARG_PRIVATE_LIBS})
  endif()
endfunction()
