# Script (cmake -P), run after a GoogleTest executable is linked: registers one CTest test per test
# suite of it (all its cases in one process) rather than one per case. The sanitizer builds do so:
# there every process pays a fixed start and exit (the sanitizer runtime, the leak check), which
# for a case of a few milliseconds is most of its time.
#   -D EXE=program -D OUT=tests file to write -D PREFIX=name prefix -D LABELS=a,b
#   -D TIMEOUT=seconds per case -D EXCLUDE=GoogleTest patterns (a:b) left out
cmake_minimum_required(VERSION 3.25)
set(_list_filter "")
if(EXCLUDE)
  set(_list_filter "--gtest_filter=-${EXCLUDE}")
endif()
execute_process(COMMAND "${EXE}" --gtest_list_tests ${_list_filter} OUTPUT_VARIABLE _out
                RESULT_VARIABLE _rc ERROR_VARIABLE _err TIMEOUT 60)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --gtest_list_tests failed (${_rc}):\n${_out}\n${_err}")
endif()

string(REPLACE "," ";" _labels "${LABELS}")
string(REPLACE "\n" ";" _lines "${_out}")
set(_suites "")
foreach(_line IN LISTS _lines)
  if(_line MATCHES "^([^ #][^ ]*)\\.( .*)?$")  # "Suite." or "Prefix/Suite/0.  # TypeParam = T"
    set(_suite "${CMAKE_MATCH_1}")
    list(APPEND _suites "${_suite}")
    set(_cases_${_suite} 0)
  elseif(_line MATCHES "^  [^ ]" AND DEFINED _suite)
    math(EXPR _cases_${_suite} "${_cases_${_suite}} + 1")
  endif()
endforeach()

set(_content "")
foreach(_suite IN LISTS _suites)
  set(_filter "${_suite}.*")
  if(EXCLUDE)
    string(APPEND _filter "-${EXCLUDE}")
  endif()
  # The suite's cases run one after another: its time limit is theirs together, 10 minutes at most.
  math(EXPR _timeout "${TIMEOUT} * ${_cases_${_suite}}")
  if(_timeout GREATER 600)
    set(_timeout 600)
  endif()
  string(APPEND _content
         "add_test([==[${PREFIX}${_suite}]==] [==[${EXE}]==] [==[--gtest_filter=${_filter}]==])\n"
         "set_tests_properties([==[${PREFIX}${_suite}]==] PROPERTIES LABELS [==[${_labels}]==] "
         "TIMEOUT ${_timeout} COST ${_cases_${_suite}})\n")
endforeach()
file(WRITE "${OUT}" "${_content}")
