// Index page encoding, shared by publication, loading and verification.
#include "storage/index_page.hpp"

#include "common/errors.hpp"
#include "storage/chunk_geometry.hpp"

#include <cstring>

namespace differential {

std::vector<uint8_t> EncodeIndexPage(const std::vector<Hash256> &slots) {
	size_t used = slots.size();
	while (used > 0 && IsZeroHash(slots[used - 1])) {
		used--;
	}
	std::vector<uint8_t> blob(used * 32);
	for (size_t i = 0; i < used; i++) {
		std::memcpy(blob.data() + i * 32, slots[i].data(), 32);
	}
	return blob;
}

std::vector<Hash256> DecodeIndexPage(const std::vector<uint8_t> &blob) {
	if (blob.size() % 32 != 0 || blob.size() / 32 > SLOTS_PER_INDEX_PAGE) {
		Fail(ErrorKind::IO, "corrupt_index_page",
		     "An index page of " + std::to_string(blob.size()) +
		         " bytes is malformed. The repository is damaged; run differential_verify().");
	}
	std::vector<Hash256> slots(blob.size() / 32);
	for (size_t i = 0; i < slots.size(); i++) {
		std::memcpy(slots[i].data(), blob.data() + i * 32, 32);
	}
	return slots;
}

} // namespace differential
