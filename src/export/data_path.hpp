// DATA_PATH values: checked and written in one canonical spelling, which is also the key the metadata
// uses for what a store holds (so `s3://b/p` and `s3://b/p/` are one store).
#pragma once

#include <string>

namespace differential {

//! The canonical URL (`s3://bucket/prefix/`, `file:///dir/`) of a DATA_PATH value; refuses an unusable
//! one with invalid_data_path.
std::string CanonicalDataPath(const std::string &value);

} // namespace differential
