# The export layer (src/export/) over a real repository and the local object store: its own executable,
# since it links the remote layer (and so the CRT) as well as storage and metadata.
set(DIFFERENTIAL_EXPORT_SOURCES ${DIFFERENTIAL_UNIT_SOURCES} ${DIFFERENTIAL_REMOTE_SOURCES}
    ${DIFFERENTIAL_SRC}/export/data_path.cpp ${DIFFERENTIAL_SRC}/export/export_marker.cpp ${DIFFERENTIAL_SRC}/export/export_pending.cpp ${DIFFERENTIAL_SRC}/export/export_uploads.cpp
    ${DIFFERENTIAL_SRC}/export/head_publisher.cpp ${DIFFERENTIAL_SRC}/export/merge_export.cpp
    ${DIFFERENTIAL_SRC}/export/snapshot_export.cpp)
list(REMOVE_DUPLICATES DIFFERENTIAL_EXPORT_SOURCES)
add_executable(differential_export_tests ${DIFFERENTIAL_EXPORT_SOURCES} ${CMAKE_CURRENT_LIST_DIR}/export_test.cpp)
target_include_directories(differential_export_tests PRIVATE ${DIFFERENTIAL_SRC} ${CMAKE_CURRENT_LIST_DIR}/..)
target_compile_options(differential_export_tests PRIVATE -Wall -Wextra -Werror -Wno-unused-parameter)
target_link_libraries(differential_export_tests PRIVATE GTest::gtest_main SQLite::SQLite3 OpenSSL::Crypto
                                                        Threads::Threads differential_aws_crt)
gtest_discover_tests(differential_export_tests DISCOVERY_TIMEOUT 60)
