# The object-store tests (src/remote/ over the AWS CRT), their own executable so the other unit tests
# never link the CRT. Included from test/unit/CMakeLists.txt; runs the conformance suite against the
# local store and a versitygw server that the tests start.
include(${DIFFERENTIAL_SRC}/remote/aws_crt.cmake)

file(READ ${DIFFERENTIAL_ROOT}/VERSITYGW_VERSION _versitygw_version)
string(STRIP "${_versitygw_version}" _versitygw_version)
set(VERSITYGW_BIN ${_differential_cache}/bin-versitygw-${_versitygw_version}/versitygw
    CACHE FILEPATH "The versitygw binary installed by scripts/setup_versitygw.sh")
# SeaweedFS, the second server, is opt-in (its build takes ~8 minutes): configure with
# -DDIFFERENTIAL_TEST_SEAWEEDFS=ON, or DIFFERENTIAL_TEST_SEAWEEDFS=1 in the environment, after
# scripts/setup_seaweedfs.sh. The version is the one scripts/common.sh pins.
option(DIFFERENTIAL_TEST_SEAWEEDFS "Also run the object-store conformance suite against SeaweedFS"
       "$ENV{DIFFERENTIAL_TEST_SEAWEEDFS}")
file(STRINGS ${DIFFERENTIAL_ROOT}/scripts/common.sh _seaweedfs_line REGEX "^SEAWEEDFS_VERSION=")
string(REGEX REPLACE "^SEAWEEDFS_VERSION=\"([^\"]*)\".*" "\\1" _seaweedfs_version "${_seaweedfs_line}")
set(SEAWEEDFS_BIN ${_differential_cache}/bin-seaweedfs-${_seaweedfs_version}/weed
    CACHE FILEPATH "The SeaweedFS binary installed by scripts/setup_seaweedfs.sh")
file(STRINGS ${DIFFERENTIAL_ROOT}/scripts/common.sh _toxiproxy_line REGEX "^TOXIPROXY_VERSION=")
string(REGEX REPLACE "^TOXIPROXY_VERSION=\"([^\"]*)\".*" "\\1" _toxiproxy_version "${_toxiproxy_line}")
set(TOXIPROXY_DIR ${_differential_cache}/bin-toxiproxy-${_toxiproxy_version}
    CACHE PATH "Toxiproxy's server and cli, installed by scripts/setup_toxiproxy.sh")
set(DIFFERENTIAL_TEST_SERVERS VERSITYGW_BIN="${VERSITYGW_BIN}" SEAWEEDFS_BIN="${SEAWEEDFS_BIN}"
                              TOXIPROXY_DIR="${TOXIPROXY_DIR}")

set(DIFFERENTIAL_REMOTE_SOURCES
    ${DIFFERENTIAL_SRC}/common/crc32c.cpp
    ${DIFFERENTIAL_SRC}/common/errors.cpp
    ${DIFFERENTIAL_SRC}/common/hash.cpp
    ${DIFFERENTIAL_SRC}/storage/object_store.cpp
    ${DIFFERENTIAL_SRC}/remote/object_key.cpp
    ${DIFFERENTIAL_SRC}/remote/local_object_store.cpp
    ${DIFFERENTIAL_SRC}/remote/crt_runtime.cpp
    ${DIFFERENTIAL_SRC}/remote/s3_response.cpp
    ${DIFFERENTIAL_SRC}/remote/s3_object_store.cpp
    ${DIFFERENTIAL_SRC}/remote/conditional_write_probe.cpp
    ${DIFFERENTIAL_SRC}/remote/logged_object_store.cpp
    ${DIFFERENTIAL_SRC}/remote/object_store_url.cpp
    ${DIFFERENTIAL_SRC}/remote/export_format.cpp
    ${DIFFERENTIAL_SRC}/remote/text_object.cpp
    ${DIFFERENTIAL_SRC}/remote/remote_journal.cpp
    ${DIFFERENTIAL_SRC}/remote/remote_cleanup.cpp
    ${DIFFERENTIAL_SRC}/remote/export_reader.cpp
    ${DIFFERENTIAL_SRC}/remote/epoch_format.cpp
    ${DIFFERENTIAL_SRC}/remote/epoch_chain.cpp
    ${DIFFERENTIAL_SRC}/common/logging.cpp
    ${DIFFERENTIAL_SRC}/storage/remote_fetch.cpp
    ${DIFFERENTIAL_SRC}/storage/remote_cache.cpp
    ${DIFFERENTIAL_SRC}/storage/remote_file.cpp
    ${DIFFERENTIAL_SRC}/storage/system_calls.cpp
    ${DIFFERENTIAL_SRC}/common/fault_points.cpp)

add_executable(
  differential_remote_tests
  ${DIFFERENTIAL_REMOTE_SOURCES}
  ${CMAKE_CURRENT_LIST_DIR}/process.cpp
  ${CMAKE_CURRENT_LIST_DIR}/s3_test_server.cpp
  ${CMAKE_CURRENT_LIST_DIR}/toxiproxy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/toxiproxy_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fault_proxy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/object_store_conformance_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/local_object_store_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/conditional_write_probe_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/object_store_url_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/export_format_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/epoch_format_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/remote_cleanup_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/remote_read_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/s3_object_store_test.cpp)
target_include_directories(differential_remote_tests PRIVATE ${DIFFERENTIAL_SRC} ${CMAKE_CURRENT_LIST_DIR}/..)
target_compile_definitions(differential_remote_tests PRIVATE ${DIFFERENTIAL_TEST_SERVERS})
if(DIFFERENTIAL_TEST_SEAWEEDFS)
  target_compile_definitions(differential_remote_tests PRIVATE DIFFERENTIAL_TEST_SEAWEEDFS)
endif()
target_compile_options(differential_remote_tests PRIVATE -Wall -Wextra -Werror)
target_link_libraries(differential_remote_tests PRIVATE GTest::gtest_main differential_aws_crt)
# A missing server binary fails the tests (they say how to install it); it never skips them.
gtest_discover_tests(differential_remote_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)

# The extension will link remote/ the same way: prove that a shared object built so exports no CRT
# symbol (the extension is loaded into Python processes that may carry their own).
add_library(differential_remote_probe SHARED ${DIFFERENTIAL_REMOTE_SOURCES})
target_include_directories(differential_remote_probe PRIVATE ${DIFFERENTIAL_SRC})
target_compile_options(differential_remote_probe PRIVATE -Wall -Wextra -Werror)
set_target_properties(differential_remote_probe PROPERTIES CXX_VISIBILITY_PRESET hidden)
target_link_libraries(differential_remote_probe PRIVATE differential_aws_crt)
add_test(NAME RemoteSharedObject.ExportsNoCrtSymbols
         COMMAND ${CMAKE_COMMAND} -DLIB=$<TARGET_FILE:differential_remote_probe> -P
                 ${CMAKE_CURRENT_LIST_DIR}/check_hidden_symbols.cmake)

# Not a test: prints latencies and throughput of both stores on this machine (see docs/S3.md).
add_executable(differential_remote_bench ${DIFFERENTIAL_REMOTE_SOURCES} ${CMAKE_CURRENT_LIST_DIR}/s3_test_server.cpp
                                         ${CMAKE_CURRENT_LIST_DIR}/process.cpp ${CMAKE_CURRENT_LIST_DIR}/toxiproxy.cpp
                                         ${CMAKE_CURRENT_LIST_DIR}/object_store_bench.cpp)
target_include_directories(differential_remote_bench PRIVATE ${DIFFERENTIAL_SRC} ${CMAKE_CURRENT_LIST_DIR}/..)
target_compile_definitions(differential_remote_bench PRIVATE ${DIFFERENTIAL_TEST_SERVERS})
target_compile_options(differential_remote_bench PRIVATE -Wall -Wextra -Werror)
target_link_libraries(differential_remote_bench PRIVATE GTest::gtest differential_aws_crt)
# Timings under the sanitizers would measure the sanitizers: that build (make test-asan) leaves the bench out.
if(DIFFERENTIAL_SANITIZE)
  set_target_properties(differential_remote_bench PROPERTIES EXCLUDE_FROM_ALL ON)
endif()
