// Object store URLs as users write them (DATA_PATH, and every store SQL opens): checked once, with one
// refusal, and written in one canonical spelling, which is also the key the metadata uses for what a
// store holds (so `s3://b/p` and `s3://b/p/` are one store).
#pragma once

#include "remote/object_store_url.hpp"

#include <string>

namespace differential {

//! The parsed URL; refuses an unusable one with invalid_data_path.
ObjectStoreUrl ParseDataPath(const std::string &value);
//! The canonical URL (`s3://bucket/prefix/`, `file:///dir/`) of a DATA_PATH value.
std::string CanonicalDataPath(const std::string &value);

} // namespace differential
