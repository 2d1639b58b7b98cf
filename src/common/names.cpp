// Name rules shared by databases, branches and snapshot names.
#include "common/names.hpp"

#include "common/errors.hpp"

namespace differential {

static constexpr size_t MAX_NAME_LENGTH = 128;

std::string QuoteName(const std::string &name) {
	std::string out = "'";
	for (unsigned char c : name.substr(0, 80)) {
		if (c < 0x20 || c == 0x7f) {
			out += "\\x";
			out += "0123456789abcdef"[c >> 4];
			out += "0123456789abcdef"[c & 15];
		} else {
			out += static_cast<char>(c);
		}
	}
	if (name.size() > 80) {
		out += "...";
	}
	return out + "'";
}

void ValidateName(const std::string &what, const std::string &name) {
	auto refuse = [&](const std::string &why) {
		Fail(ErrorCode::INVALID_NAME,
		     "The " + what + " name " + QuoteName(name) + " " + why +
		         ". Use 1 to 128 characters of letters, digits, '_', '-' and '.', not starting with '.' or '-'.");
	};
	if (name.empty()) {
		refuse("is empty");
	}
	if (name.size() > MAX_NAME_LENGTH) {
		refuse("is longer than 128 characters");
	}
	if (name[0] == '.' || name[0] == '-') {
		refuse("starts with '" + std::string(1, name[0]) + "'");
	}
	for (unsigned char c : name) {
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		          c == '.';
		if (!ok) {
			if (c == '/' || c == '\\') {
				refuse("contains a path separator");
			}
			if (c < 0x20 || c == 0x7f) {
				refuse("contains a control character");
			}
			refuse("contains the character '" + std::string(1, static_cast<char>(c)) + "'");
		}
	}
}

void ValidateNewBranchName(const std::string &name) {
	ValidateName("branch", name);
	if (name.rfind("__", 0) == 0) {
		Fail(ErrorCode::RESERVED_NAME,
		     "Branch names starting with '__' are reserved for the extension's own branches; choose another name "
		     "for " +
		         QuoteName(name) + ".");
	}
}

} // namespace differential
