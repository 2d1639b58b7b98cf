# The AWS CRT C libraries built by scripts/setup_crt.sh from the pinned awscrt sdist, as one INTERFACE
# target `differential_aws_crt`. Include this file from any CMake project that compiles src/remote/.
# AWSCRT_PREFIX may be given; otherwise it is the cache path that setup_crt.sh installs into.
if(TARGET differential_aws_crt)
  return()
endif()
get_filename_component(_differential_root ${CMAKE_CURRENT_LIST_DIR}/../.. ABSOLUTE)
file(READ ${_differential_root}/AWSCRT_VERSION _awscrt_version)
string(STRIP "${_awscrt_version}" _awscrt_version)
if(DEFINED ENV{DIFFERENTIAL_CACHE})
  set(_differential_cache $ENV{DIFFERENTIAL_CACHE})
else()
  set(_differential_cache $ENV{HOME}/.cache/differential)
endif()
set(AWSCRT_PREFIX ${_differential_cache}/awscrt-${_awscrt_version}/install
    CACHE PATH "Where scripts/setup_crt.sh installed the AWS CRT")
if(NOT EXISTS ${AWSCRT_PREFIX}/lib/libaws-c-s3.a)
  message(FATAL_ERROR "The AWS CRT ${_awscrt_version} is not built at ${AWSCRT_PREFIX}: run scripts/setup.sh")
endif()
find_package(OpenSSL REQUIRED)
find_package(Threads REQUIRED)

# Static archives, each before the ones it depends on (the order of the sdist's setup.py, reversed).
set(_awscrt_libs aws-c-s3 aws-c-auth aws-c-http aws-c-compression aws-checksums aws-c-io s2n aws-c-cal
                 aws-c-sdkutils aws-c-common)
add_library(differential_aws_crt INTERFACE)
target_include_directories(differential_aws_crt SYSTEM INTERFACE ${AWSCRT_PREFIX}/include)
foreach(_lib ${_awscrt_libs})
  target_link_libraries(differential_aws_crt INTERFACE ${AWSCRT_PREFIX}/lib/lib${_lib}.a)
endforeach()
# s2n and aws-c-cal use Debian's libcrypto (see docs/S3.md). --exclude-libs keeps every CRT symbol out
# of a shared object's dynamic symbol table, so a host process's own copies are never interposed.
list(JOIN _awscrt_libs ".a:lib" _awscrt_exclude)
target_link_libraries(differential_aws_crt INTERFACE OpenSSL::Crypto Threads::Threads ${CMAKE_DL_LIBS} rt
                                                     "-Wl,--exclude-libs,lib${_awscrt_exclude}.a")
