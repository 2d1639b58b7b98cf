// Quoting for the SQL the extension composes itself (hidden attachments, checkpoints).
#pragma once

#include <string>

namespace differential {

inline std::string QuoteWith(const std::string &text, char quote) {
	std::string out(1, quote);
	for (char c : text) {
		out += c;
		if (c == quote) {
			out += quote;
		}
	}
	return out + quote;
}
inline std::string SqlIdentifier(const std::string &name) {
	return QuoteWith(name, '"');
}
inline std::string SqlLiteral(const std::string &text) {
	return QuoteWith(text, '\'');
}

} // namespace differential
