// Index page encoding, shared by publication, loading and verification.
#include "storage/index_page.hpp"

#include "common/errors.hpp"
#include "storage/chunk_geometry.hpp"

namespace differential {

std::vector<uint8_t> EncodeIndexPage(const std::vector<Hash256> &slots) {
	size_t used = slots.size();
	while (used > 0 && IsZeroHash(slots[used - 1])) {
		used--;
	}
	return JoinHashes(slots.data(), used);
}

std::vector<Hash256> DecodeIndexPage(const std::vector<uint8_t> &blob) {
	if (blob.size() % 32 != 0 || blob.size() / 32 > SLOTS_PER_INDEX_PAGE) {
		Fail(ErrorCode::CORRUPT_INDEX_PAGE,
		     "An index page of " + std::to_string(blob.size()) +
		         " bytes is malformed. The repository is damaged; run differential_verify().");
	}
	return SplitHashes(blob);
}

} // namespace differential
