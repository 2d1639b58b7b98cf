// The implementations behind Crc32c (common/hash.hpp) and the run-time choice between them.
#pragma once

namespace differential {

//! HARDWARE is the CPU's CRC32C instruction (SSE4.2 on x86-64, the ARMv8 CRC extension on aarch64);
//! PORTABLE is slicing-by-8 tables, which every build and CPU has. Both give the same values.
enum class Crc32cImplementation { PORTABLE, HARDWARE };

//! Whether this build, on this CPU, can run `implementation`.
bool Crc32cSupported(Crc32cImplementation implementation);
//! What Crc32c uses: HARDWARE where supported, detected once per process.
Crc32cImplementation ActiveCrc32cImplementation();
//! "sse4.2", "armv8-crc" or "portable".
const char *Crc32cImplementationName(Crc32cImplementation implementation);
//! Tests only: makes every later Crc32c call use `implementation` (which must be supported), so tests on a
//! CPU that has the instruction still check the tables. Returns the implementation used before.
Crc32cImplementation SetCrc32cImplementationForTesting(Crc32cImplementation implementation);

} // namespace differential
