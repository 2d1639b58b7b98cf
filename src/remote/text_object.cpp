// Writing and reading text objects; unknown keys are kept, so later formats can add fields.
#include "remote/text_object.hpp"

#include <cstdlib>

namespace differential {

bool ParsedText::Parse(const std::string &text, const std::string &kind, std::string &why) {
	auto header = "differential-" + kind + " ";
	auto first_end = text.find('\n');
	if (text.rfind(header, 0) != 0 || first_end == std::string::npos) {
		why = "not a differential " + kind;
		return false;
	}
	auto version = text.substr(header.size(), first_end - header.size());
	if (version != std::to_string(TEXT_OBJECT_FORMAT)) {
		why = "a " + kind + " of store format " + version + ", which this build cannot read (it reads format " +
		      std::to_string(TEXT_OBJECT_FORMAT) + "); upgrade the extension";
		return false;
	}
	for (size_t at = first_end + 1; at < text.size();) {
		auto end = text.find('\n', at);
		if (end == std::string::npos) {
			why = "a " + kind + " whose last line is cut short";
			return false;
		}
		auto line = text.substr(at, end - at);
		auto space = line.find(' ');
		auto key = line.substr(0, space);
		auto value = space == std::string::npos ? std::string() : line.substr(space + 1);
		values[key] = value;
		lists[key].push_back(value);
		at = end + 1;
	}
	return true;
}

bool ParsedText::Text(const std::string &key, std::string &out, std::string &why) const {
	auto it = values.find(key);
	if (it == values.end()) {
		why = "the field '" + key + "' is missing";
		return false;
	}
	out = it->second;
	return true;
}

bool ParsedText::Number(const std::string &key, int64_t &out, std::string &why) const {
	std::string text;
	if (!Text(key, text, why)) {
		return false;
	}
	char *end = nullptr;
	out = std::strtoll(text.c_str(), &end, 10);
	if (text.empty() || *end != '\0' || out < 0) {
		why = "the field '" + key + "' is not a non-negative number";
		return false;
	}
	return true;
}

bool ParsedText::HashValue(const std::string &key, Hash256 &out, std::string &why) const {
	std::string text;
	if (!Text(key, text, why)) {
		return false;
	}
	if (!HashFromHex(text, out)) {
		why = "the field '" + key + "' is not a SHA-256";
		return false;
	}
	return true;
}

} // namespace differential
