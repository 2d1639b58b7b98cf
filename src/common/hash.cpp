// SHA-256 through OpenSSL (SHA-NI where the CPU has it) and CRC32C through SSE4.2.
#include "common/hash.hpp"

#include "common/errors.hpp"

#include <nmmintrin.h>
#include <openssl/evp.h>

#include <cstring>

namespace differential {

Hash256 Sha256(const void *data, size_t size) {
	Hash256 out;
	unsigned int len = 0;
	if (EVP_Digest(data, size, out.data(), &len, EVP_sha256(), nullptr) != 1 || len != out.size()) {
		Fail(ErrorKind::INTERNAL, "internal",
		     "SHA-256 computation failed in OpenSSL; nothing was written. Check the OpenSSL installation this "
		     "process loads, then retry.");
	}
	return out;
}

namespace {

//! Bytes per lane: long buffers (DuckDB's blocks) are checked as three interleaved lanes, because one
//! crc32 instruction waits three cycles for the previous one's result and three independent chains fill
//! that wait.
constexpr size_t CRC_LANE = 4096;

//! The CRC register after CRC_LANE zero bytes, as a linear map applied a byte of the register at a time:
//! it moves a lane's register past the lanes after it, so three lanes combine into the one-lane result.
class LaneShift {
public:
	LaneShift() {
		for (uint32_t k = 0; k < 4; k++) {
			for (uint32_t v = 0; v < 256; v++) {
				uint64_t reg = uint64_t(v) << (8 * k);
				for (size_t i = 0; i < CRC_LANE; i += 8) {
					reg = _mm_crc32_u64(reg, 0);
				}
				table[k][v] = static_cast<uint32_t>(reg);
			}
		}
	}
	uint64_t operator()(uint64_t reg) const {
		return table[0][reg & 0xFF] ^ table[1][(reg >> 8) & 0xFF] ^ table[2][(reg >> 16) & 0xFF] ^ table[3][reg >> 24];
	}

private:
	uint32_t table[4][256];
};

uint64_t Load64(const uint8_t *p) {
	uint64_t word;
	std::memcpy(&word, p, 8);
	return word;
}

} // namespace

uint32_t Crc32c(const void *data, size_t size, uint32_t seed) {
	auto p = static_cast<const uint8_t *>(data);
	uint64_t crc = ~seed & 0xFFFFFFFFu;
	if (size >= 3 * CRC_LANE) {
		static const LaneShift shift;
		do {
			uint64_t c1 = 0, c2 = 0;
			for (size_t i = 0; i < CRC_LANE; i += 8) {
				crc = _mm_crc32_u64(crc, Load64(p + i));
				c1 = _mm_crc32_u64(c1, Load64(p + CRC_LANE + i));
				c2 = _mm_crc32_u64(c2, Load64(p + 2 * CRC_LANE + i));
			}
			// reg(s, A B C) = shift(shift(reg(s, A)) ^ reg(0, B)) ^ reg(0, C): CRC registers are linear.
			crc = shift(shift(crc) ^ c1) ^ c2;
			p += 3 * CRC_LANE;
			size -= 3 * CRC_LANE;
		} while (size >= 3 * CRC_LANE);
	}
	while (size >= 8) {
		crc = _mm_crc32_u64(crc, Load64(p));
		p += 8;
		size -= 8;
	}
	auto crc32 = static_cast<uint32_t>(crc);
	while (size--) {
		crc32 = _mm_crc32_u8(crc32, *p++);
	}
	return ~crc32;
}

std::string HashToHex(const Hash256 &hash) {
	static const char *digits = "0123456789abcdef";
	std::string out(64, '0');
	for (size_t i = 0; i < hash.size(); i++) {
		out[2 * i] = digits[hash[i] >> 4];
		out[2 * i + 1] = digits[hash[i] & 15];
	}
	return out;
}

static int HexValue(char c) {
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	if (c >= 'A' && c <= 'F') {
		return c - 'A' + 10;
	}
	return -1;
}

bool HashFromHex(const std::string &hex, Hash256 &out) {
	if (hex.size() != 64) {
		return false;
	}
	for (size_t i = 0; i < out.size(); i++) {
		int hi = HexValue(hex[2 * i]), lo = HexValue(hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			return false;
		}
		out[i] = static_cast<uint8_t>(hi << 4 | lo);
	}
	return true;
}

bool IsZeroHash(const Hash256 &hash) {
	for (auto b : hash) {
		if (b) {
			return false;
		}
	}
	return true;
}

std::vector<uint8_t> JoinHashes(const Hash256 *hashes, size_t count) {
	std::vector<uint8_t> blob(count * 32);
	for (size_t i = 0; i < count; i++) {
		std::memcpy(blob.data() + i * 32, hashes[i].data(), 32);
	}
	return blob;
}

std::vector<Hash256> SplitHashes(const std::vector<uint8_t> &blob) {
	std::vector<Hash256> out(blob.size() / 32);
	for (size_t i = 0; i < out.size(); i++) {
		std::memcpy(out[i].data(), blob.data() + i * 32, 32);
	}
	return out;
}

} // namespace differential
