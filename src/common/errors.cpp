// The error code registry's table, and reading one of our errors back out of the text DuckDB made of it.
#include "common/errors.hpp"

#include <cstddef>

namespace differential {

namespace {

struct ErrorCodeInfo {
	const char *text;
	ErrorKind kind;
};

//! In the enum's order (both come from the same list), so a code indexes its row.
constexpr ErrorCodeInfo ERROR_CODES[] = {
#define DIFFERENTIAL_ERROR_CODE(name, text, kind, meaning) {text, ErrorKind::kind},
#include "common/error_codes.def"
#undef DIFFERENTIAL_ERROR_CODE
};

bool IsCodeCharacter(char c) {
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

} // namespace

const char *ToString(ErrorCode code) {
	return ERROR_CODES[static_cast<size_t>(code)].text;
}

ErrorKind KindOf(ErrorCode code) {
	return ERROR_CODES[static_cast<size_t>(code)].kind;
}

std::optional<ErrorCode> ErrorCodeOf(const std::string &text) {
	static_assert(sizeof(ERROR_CODES) / sizeof(ERROR_CODES[0]) == ERROR_CODE_COUNT, "one row per code");
	for (size_t i = 0; i < ERROR_CODE_COUNT; i++) {
		if (text == ERROR_CODES[i].text) {
			return static_cast<ErrorCode>(i);
		}
	}
	return std::nullopt;
}

std::optional<DifferentialError> ParseRaisedError(ErrorKind kind, const std::string &text) {
	static const std::string PREFIX = "[differential:";
	for (auto start = text.find(PREFIX); start != std::string::npos; start = text.find(PREFIX, start + 1)) {
		auto code_start = start + PREFIX.size();
		auto code_end = code_start;
		while (code_end < text.size() && IsCodeCharacter(text[code_end])) {
			code_end++;
		}
		// "[differential:<code>] " with a code of the registry: anything else is not ours.
		auto code = ErrorCodeOf(text.substr(code_start, code_end - code_start));
		if (!code || text.compare(code_end, 2, "] ") != 0) {
			continue;
		}
		return DifferentialError(kind, *code, text.substr(code_end + 2));
	}
	return std::nullopt;
}

} // namespace differential
