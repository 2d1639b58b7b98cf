// Index pages: 4096 chunk slots of 32-byte SHA-256 each (all zero = a hole), trailing holes trimmed.
// A root is the list of page hashes, so publishing a change rewrites only the touched pages.
#pragma once

#include "common/hash.hpp"

#include <vector>

namespace differential {

std::vector<uint8_t> EncodeIndexPage(const std::vector<Hash256> &slots);
//! Throws corrupt_index_page for a blob that is not a whole number of slots or has too many.
std::vector<Hash256> DecodeIndexPage(const std::vector<uint8_t> &blob);

} // namespace differential
