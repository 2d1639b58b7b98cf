// CRC32C through the CPU's instruction where it has one (SSE4.2, ARMv8 CRC), through tables where not.
// The instructions are enabled per function, never for the whole build, so one binary runs on any CPU of its
// architecture and picks at run time; docs/ARCHITECTURE.md "Portability".
#include "common/crc32c.hpp"

#include "common/errors.hpp"
#include "common/hash.hpp"

#include <atomic>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define DIFFERENTIAL_CRC_TARGET __attribute__((target("sse4.2")))
#elif defined(__aarch64__) && defined(__linux__)
#include <arm_acle.h>
#include <sys/auxv.h>
#define DIFFERENTIAL_CRC_TARGET __attribute__((target("+crc")))
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7) // the kernel's bit; older C libraries do not name it
#endif
#endif

namespace differential {

namespace {

//! Slicing-by-8: table k maps a byte to its CRC after k more zero bytes, so eight bytes fold in one step.
struct SliceTables {
	uint32_t t[8][256];
};

constexpr SliceTables MakeSliceTables() {
	SliceTables s {};
	for (uint32_t v = 0; v < 256; v++) {
		uint32_t crc = v;
		for (int bit = 0; bit < 8; bit++) {
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u))); // the Castagnoli polynomial, reflected
		}
		s.t[0][v] = crc;
	}
	for (int k = 1; k < 8; k++) {
		for (uint32_t v = 0; v < 256; v++) {
			s.t[k][v] = (s.t[k - 1][v] >> 8) ^ s.t[0][s.t[k - 1][v] & 0xFF];
		}
	}
	return s;
}

//! Built by the compiler: nothing to initialise at run time, whichever file's static initialiser asks first.
constexpr SliceTables SLICES = MakeSliceTables();

//! Little-endian whatever the CPU: the reflected CRC consumes the lowest byte first.
uint64_t Load64(const uint8_t *p) {
	uint64_t word;
	std::memcpy(&word, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	word = __builtin_bswap64(word);
#endif
	return word;
}

//! The CRC register (no inversion on either side) after `size` bytes.
uint32_t PortableRegister(uint32_t reg, const uint8_t *p, size_t size) {
	for (; size >= 8; p += 8, size -= 8) {
		uint64_t w = Load64(p) ^ reg;
		reg = SLICES.t[7][w & 0xFF] ^ SLICES.t[6][(w >> 8) & 0xFF] ^ SLICES.t[5][(w >> 16) & 0xFF] ^
		      SLICES.t[4][(w >> 24) & 0xFF] ^ SLICES.t[3][(w >> 32) & 0xFF] ^ SLICES.t[2][(w >> 40) & 0xFF] ^
		      SLICES.t[1][(w >> 48) & 0xFF] ^ SLICES.t[0][w >> 56];
	}
	for (; size; p++, size--) {
		reg = (reg >> 8) ^ SLICES.t[0][(reg ^ *p) & 0xFF];
	}
	return reg;
}

#ifdef DIFFERENTIAL_CRC_TARGET

#if defined(__x86_64__)
constexpr const char *HARDWARE_NAME = "sse4.2";
DIFFERENTIAL_CRC_TARGET inline uint32_t CrcWord(uint32_t reg, uint64_t word) {
	return static_cast<uint32_t>(_mm_crc32_u64(reg, word));
}
DIFFERENTIAL_CRC_TARGET inline uint32_t CrcByte(uint32_t reg, uint8_t byte) {
	return _mm_crc32_u8(reg, byte);
}
bool CpuHasCrcInstruction() {
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
}
#else
constexpr const char *HARDWARE_NAME = "armv8-crc";
DIFFERENTIAL_CRC_TARGET inline uint32_t CrcWord(uint32_t reg, uint64_t word) {
	return __crc32cd(reg, word);
}
DIFFERENTIAL_CRC_TARGET inline uint32_t CrcByte(uint32_t reg, uint8_t byte) {
	return __crc32cb(reg, byte);
}
bool CpuHasCrcInstruction() {
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}
#endif

//! Bytes per lane: long buffers (DuckDB's blocks) are checked as three interleaved lanes, because one
//! crc32 instruction waits three cycles for the previous one's result and three independent chains fill
//! that wait.
constexpr size_t CRC_LANE = 4096;

//! The CRC register after CRC_LANE zero bytes, as a linear map applied a byte of the register at a time:
//! it moves a lane's register past the lanes after it, so three lanes combine into the one-lane result.
class LaneShift {
public:
	//! Built from the shifts of the register's 32 single bits, combined by linearity: running all 1024 entries
	//! through CRC_LANE zero bytes cost a fresh process several milliseconds at its first checksum.
	LaneShift() {
		static const uint8_t zeros[CRC_LANE] = {};
		uint32_t bit_shift[32];
		for (uint32_t b = 0; b < 32; b++) {
			bit_shift[b] = PortableRegister(1u << b, zeros, CRC_LANE);
		}
		for (uint32_t k = 0; k < 4; k++) {
			table[k][0] = 0;
			for (uint32_t v = 1; v < 256; v++) {
				// v's lowest set bit's shift, added to the shift of v without that bit (an entry already built).
				table[k][v] = table[k][v & (v - 1)] ^ bit_shift[8 * k + static_cast<uint32_t>(__builtin_ctz(v))];
			}
		}
	}
	uint32_t operator()(uint32_t reg) const {
		return table[0][reg & 0xFF] ^ table[1][(reg >> 8) & 0xFF] ^ table[2][(reg >> 16) & 0xFF] ^ table[3][reg >> 24];
	}

private:
	uint32_t table[4][256];
};

DIFFERENTIAL_CRC_TARGET uint32_t HardwareRegister(uint32_t reg, const uint8_t *p, size_t size) {
	if (size >= 3 * CRC_LANE) {
		static const LaneShift shift;
		do {
			uint32_t c1 = 0, c2 = 0;
			for (size_t i = 0; i < CRC_LANE; i += 8) {
				reg = CrcWord(reg, Load64(p + i));
				c1 = CrcWord(c1, Load64(p + CRC_LANE + i));
				c2 = CrcWord(c2, Load64(p + 2 * CRC_LANE + i));
			}
			// reg(s, A B C) = shift(shift(reg(s, A)) ^ reg(0, B)) ^ reg(0, C): CRC registers are linear.
			reg = shift(shift(reg) ^ c1) ^ c2;
			p += 3 * CRC_LANE;
			size -= 3 * CRC_LANE;
		} while (size >= 3 * CRC_LANE);
	}
	for (; size >= 8; p += 8, size -= 8) {
		reg = CrcWord(reg, Load64(p));
	}
	for (; size; p++, size--) {
		reg = CrcByte(reg, *p);
	}
	return reg;
}

#endif // DIFFERENTIAL_CRC_TARGET

using RegisterFunction = uint32_t (*)(uint32_t reg, const uint8_t *p, size_t size);

RegisterFunction FunctionFor(Crc32cImplementation implementation) {
#ifdef DIFFERENTIAL_CRC_TARGET
	if (implementation == Crc32cImplementation::HARDWARE) {
		return HardwareRegister;
	}
#endif
	return PortableRegister;
}

//! Null until the first call detects the CPU; constant-initialised, so usable from any static initialiser.
std::atomic<RegisterFunction> active_function {nullptr};

RegisterFunction ActiveFunction() {
	auto function = active_function.load(std::memory_order_relaxed);
	if (function) {
		return function;
	}
	auto hardware = Crc32cSupported(Crc32cImplementation::HARDWARE);
	auto detected = FunctionFor(hardware ? Crc32cImplementation::HARDWARE : Crc32cImplementation::PORTABLE);
	// Racing first calls detect the same CPU; a choice a test already forced is kept.
	active_function.compare_exchange_strong(function, detected, std::memory_order_relaxed);
	return active_function.load(std::memory_order_relaxed);
}

} // namespace

bool Crc32cSupported(Crc32cImplementation implementation) {
	if (implementation == Crc32cImplementation::PORTABLE) {
		return true;
	}
#ifdef DIFFERENTIAL_CRC_TARGET
	return CpuHasCrcInstruction();
#else
	return false;
#endif
}

Crc32cImplementation ActiveCrc32cImplementation() {
	return ActiveFunction() == PortableRegister ? Crc32cImplementation::PORTABLE : Crc32cImplementation::HARDWARE;
}

const char *Crc32cImplementationName(Crc32cImplementation implementation) {
#ifdef DIFFERENTIAL_CRC_TARGET
	if (implementation == Crc32cImplementation::HARDWARE) {
		return HARDWARE_NAME;
	}
#endif
	return implementation == Crc32cImplementation::PORTABLE ? "portable" : "none";
}

Crc32cImplementation SetCrc32cImplementationForTesting(Crc32cImplementation implementation) {
	if (!Crc32cSupported(implementation)) {
		Fail(ErrorCode::INTERNAL,
		     std::string("CRC32C implementation '") + Crc32cImplementationName(implementation) +
		         "' is not available in this build on this CPU; a test asked for it. Check Crc32cSupported first.");
	}
	auto before = ActiveCrc32cImplementation();
	active_function.store(FunctionFor(implementation), std::memory_order_relaxed);
	return before;
}

uint32_t Crc32c(const void *data, size_t size, uint32_t seed) {
	return ~ActiveFunction()(~seed, static_cast<const uint8_t *>(data), size);
}

} // namespace differential
