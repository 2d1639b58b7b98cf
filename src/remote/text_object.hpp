// The text objects of an export (descriptors, heads, records, cleanup journals): a first line
// `differential-<kind> <format>`, then `key value` lines, readable with any S3 tool.
#pragma once

#include "common/hash.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace differential {

//! The store format of every export object (export_format.hpp names it EXPORT_FORMAT_VERSION).
static constexpr uint32_t TEXT_OBJECT_FORMAT = 2;

//! `key value` lines after the header line `differential-<kind> <format>`.
class TextObject {
public:
	explicit TextObject(const std::string &kind) {
		text = "differential-" + kind + " " + std::to_string(TEXT_OBJECT_FORMAT) + "\n";
	}
	void Add(const std::string &key, const std::string &value) {
		text += key + " " + value + "\n";
	}
	std::string text;
};

//! Parses a text object; repeated keys (descriptor pages) keep their order in `lists`.
struct ParsedText {
	std::map<std::string, std::string> values;
	std::map<std::string, std::vector<std::string>> lists;

	bool Parse(const std::string &text, const std::string &kind, std::string &why);
	bool Text(const std::string &key, std::string &out, std::string &why) const;
	bool Number(const std::string &key, int64_t &out, std::string &why) const;
	bool HashValue(const std::string &key, Hash256 &out, std::string &why) const;
};

} // namespace differential
