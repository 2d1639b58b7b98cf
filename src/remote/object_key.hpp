// The key rules every ObjectStore enforces alike, so a layout that works on one store works on all.
#pragma once

#include <cstdint>
#include <string>

namespace differential {

//! The first key segment that stores keep for themselves (the local store's temp files and locks).
extern const char *const RESERVED_KEY_SEGMENT;

//! True when `key` is usable everywhere: 1 to 1024 bytes, '/'-separated segments that are non-empty,
//! at most 255 bytes, not "." or "..", with no control characters, and not under the reserved segment.
//! These are the limits of versitygw's posix backend (keys are file paths there) and of a local
//! directory; `why` says which rule failed. That a key and `key/child` cannot both exist is left to
//! the store to report, since it depends on what is already stored.
bool ValidObjectKey(const std::string &key, std::string &why);

//! `value` zero-padded to 20 digits, so keys that end in it list in numeric order (snapshot ids, times).
std::string SortableNumber(int64_t value);

} // namespace differential
