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
#
# Rooms: a module may declare the subfolders it is split into, lowest first
# (reel_module(jobs ... ROOMS spec context model ...)). Then a file in a room (sources and
# headers alike) may include headers of its own room, of a lower room, or of the module's top
# level; a file at the top level may include only the top level; and every subfolder holding code
# must be a declared room. A reversed include, or code in an undeclared folder, fails configure.

set_property(GLOBAL PROPERTY REEL_MODULES "")

function(reel_module name)
  cmake_parse_arguments(ARG "" "LEVEL" "SOURCES;CHECK_SOURCES;DEPS;PRIVATE_LIBS;PUBLIC_LIBS;ROOMS" ${ARGN})
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
  # (CHECK_SOURCES: the module's files built into a library of its own, checked all the same.)
  foreach(src IN LISTS ARG_SOURCES ARG_CHECK_SOURCES)
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

  if(ARG_ROOMS)
    reel_check_rooms(${name} "${ARG_ROOMS}" "${ARG_SOURCES}")
  endif()

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

# The room of `path` (relative to the module's folder) as its rank in `rooms`: -1 for the top
# level, -2 for a folder that is not a declared room.
function(reel_room_rank path rooms out)
  if(NOT path MATCHES "/")
    set(${out} -1 PARENT_SCOPE)
    return()
  endif()
  string(REGEX REPLACE "/.*" "" folder "${path}")
  list(FIND rooms "${folder}" rank)
  if(rank EQUAL -1)
    set(rank -2)
  endif()
  set(${out} ${rank} PARENT_SCOPE)
endfunction()

# Room check (see the top of this file) over the module's sources and every header under its
# folder (an executable's main.cc beside them is not the module's).
function(reel_check_rooms name rooms sources)
  file(GLOB_RECURSE headers RELATIVE "${CMAKE_CURRENT_SOURCE_DIR}" CONFIGURE_DEPENDS
       "${CMAKE_CURRENT_SOURCE_DIR}/*.h")
  set(files ${sources} ${headers})
  foreach(file IN LISTS files)
    reel_room_rank("${file}" "${rooms}" file_rank)
    if(file_rank EQUAL -2)
      message(FATAL_ERROR
        "Layering violation: ${name}/${file} is in a folder that is not one of ${name}'s rooms "
        "(${rooms}); declare the room in its place in the order")
    endif()
    file(STRINGS "${CMAKE_CURRENT_SOURCE_DIR}/${file}" includes REGEX "^#include \"${name}/")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^#include \"${name}/([^\"]*)\".*" "\\1" included "${line}")
      reel_room_rank("${included}" "${rooms}" included_rank)
      if(included_rank EQUAL -2)
        message(FATAL_ERROR
          "Layering violation: ${name}/${file} includes ${name}/${included}, in no room of ${name}")
      endif()
      if(included_rank GREATER file_rank)
        message(FATAL_ERROR
          "Layering violation: ${name}/${file} includes ${name}/${included}, a higher room "
          "(${name}'s rooms, lowest first: top level, ${rooms})")
      endif()
    endforeach()
  endforeach()
endfunction()
