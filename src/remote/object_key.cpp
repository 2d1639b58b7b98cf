// Validation of object keys shared by the local and the S3 object store.
#include "remote/object_key.hpp"

namespace differential {

const char *const RESERVED_KEY_SEGMENT = ".differential-store";

static bool ValidSegment(const std::string &segment, std::string &why) {
	if (segment.empty()) {
		why = "an empty path segment (leading, trailing or doubled '/')";
		return false;
	}
	if (segment == "." || segment == "..") {
		why = "a '.' or '..' segment";
		return false;
	}
	if (segment.size() > 255) {
		why = "a segment longer than 255 bytes";
		return false;
	}
	for (unsigned char c : segment) {
		if (c < 0x20 || c == 0x7f) {
			why = "a control character";
			return false;
		}
	}
	return true;
}

bool ValidObjectKey(const std::string &key, std::string &why) {
	if (key.empty() || key.size() > 1024) {
		why = "its length must be 1 to 1024 bytes";
		return false;
	}
	size_t start = 0;
	bool first = true;
	while (true) {
		size_t slash = key.find('/', start);
		std::string segment = key.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
		if (!ValidSegment(segment, why)) {
			return false;
		}
		if (first && segment == RESERVED_KEY_SEGMENT) {
			why = std::string("the reserved first segment ") + RESERVED_KEY_SEGMENT;
			return false;
		}
		first = false;
		if (slash == std::string::npos) {
			return true;
		}
		start = slash + 1;
	}
}

std::string SortableNumber(int64_t value) {
	auto digits = std::to_string(value);
	return std::string(digits.size() < 20 ? 20 - digits.size() : 0, '0') + digits;
}

} // namespace differential
