// Reading one of our errors back out of the text DuckDB made of it: the documented "[differential:<code>]" prefix.
#include "common/errors.hpp"

namespace differential {

static bool IsCodeCharacter(char c) {
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

std::optional<DifferentialError> ParseRaisedError(ErrorKind kind, const std::string &text) {
	static const std::string PREFIX = "[differential:";
	for (auto start = text.find(PREFIX); start != std::string::npos; start = text.find(PREFIX, start + 1)) {
		auto code_start = start + PREFIX.size();
		auto code_end = code_start;
		while (code_end < text.size() && IsCodeCharacter(text[code_end])) {
			code_end++;
		}
		// "[differential:<code>] ": anything else (an empty code, another character) is not our prefix.
		if (code_end == code_start || text.compare(code_end, 2, "] ") != 0) {
			continue;
		}
		return DifferentialError(kind, text.substr(code_start, code_end - code_start), text.substr(code_end + 2));
	}
	return std::nullopt;
}

} // namespace differential
