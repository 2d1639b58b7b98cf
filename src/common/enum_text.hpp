// One string table per enum: the words an enum value is shown, stored or parsed as, kept beside the
// values they stand for, so no other place spells them.
#pragma once

#include "common/errors.hpp"

#include <cstddef>
#include <string>

namespace differential {

//! One row of an enum's string table.
template <class E>
struct EnumText {
	E value;
	const char *text;
};

template <class E, size_t N>
const char *TextOf(const EnumText<E> (&table)[N], E value) {
	for (auto &entry : table) {
		if (entry.value == value) {
			return entry.text;
		}
	}
	return "";
}

//! The enum value stored as `text`; refuses (corrupt_metadata) a word the table does not have,
//! which only a damaged or newer metadata file can hold.
template <class E, size_t N>
E ValueOf(const EnumText<E> (&table)[N], const std::string &text, const char *what) {
	for (auto &entry : table) {
		if (text == entry.text) {
			return entry.value;
		}
	}
	Fail(ErrorCode::CORRUPT_METADATA,
	     std::string("The metadata holds ") + what + " '" + text +
	         "', which this version does not know; nothing was changed. Run differential_verify(), or open the "
	         "repository with the version that wrote it.");
}

} // namespace differential
