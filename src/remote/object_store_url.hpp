// Where an object store lives, as users write it: `s3://bucket/prefix/` or `file:///absolute/dir/`.
// DATA_PATH and remote attach will take these; credentials never appear in them.
#pragma once

#include <string>

namespace differential {

struct ObjectStoreUrl {
	enum class Kind { S3, FILE };
	Kind kind = Kind::S3;
	std::string bucket; //! S3 only
	std::string prefix; //! S3: "" or ending in '/'
	std::string path;   //! FILE only: absolute, without a trailing '/'
};

//! Parses and checks `url`. S3 bucket names follow AWS's rules for new buckets (3 to 63 characters
//! of lower-case letters, digits, '.' and '-', starting and ending with a letter or digit); the
//! prefix must be usable as the start of object keys (see ValidObjectKey). False with `why` set
//! when it is not usable.
bool ParseObjectStoreUrl(const std::string &url, ObjectStoreUrl &out, std::string &why);

//! The canonical spelling of a parsed URL (`s3://bucket/prefix/`, `file:///dir/`).
std::string FormatObjectStoreUrl(const ObjectStoreUrl &url);

} // namespace differential
