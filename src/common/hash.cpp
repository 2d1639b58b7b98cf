// SHA-256 through OpenSSL (SHA-NI where the CPU has it) and the hex and blob forms of hashes; CRC32C is in crc32c.cpp.
#include "common/hash.hpp"

#include "common/errors.hpp"

#include <openssl/evp.h>

#include <cstring>

namespace differential {

Hash256 Sha256(const void *data, size_t size) {
	Hash256 out;
	unsigned int len = 0;
	if (EVP_Digest(data, size, out.data(), &len, EVP_sha256(), nullptr) != 1 || len != out.size()) {
		Fail(ErrorCode::INTERNAL,
		     "SHA-256 computation failed in OpenSSL; nothing was written. Check the OpenSSL installation this "
		     "process loads, then retry.");
	}
	return out;
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
