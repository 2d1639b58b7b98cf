// A merge request's identity as text: its arguments joined into one string, every user-written
// string escaped, so two different sets of arguments never read the same (a request id belongs to one).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace differential {

//! Escapes the separators of canonical text (`\`, `=`, `;`, `|`) with a backslash; text without them
//! stays as it is, so requests recorded before the escaping still match.
inline std::string EscapeCanonical(const std::string &text) {
	std::string out;
	for (char c : text) {
		if (c == '\\' || c == '=' || c == ';' || c == '|') {
			out += '\\';
		}
		out += c;
	}
	return out;
}

//! "key=value;" for each pair, both sides escaped.
inline std::string CanonicalPairs(const std::vector<std::pair<std::string, std::string>> &pairs) {
	std::string out;
	for (auto &pair : pairs) {
		out += EscapeCanonical(pair.first) + "=" + EscapeCanonical(pair.second) + ";";
	}
	return out;
}

} // namespace differential
