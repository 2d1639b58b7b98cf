// Parsing of object-store URLs: the scheme, an S3 bucket and key prefix, or a local directory.
#include "remote/object_store_url.hpp"

#include "remote/object_key.hpp"

namespace differential {

static bool ValidBucket(const std::string &bucket, std::string &why) {
	auto alnum = [](char c) {
		return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
	};
	bool ok = bucket.size() >= 3 && bucket.size() <= 63 && alnum(bucket.front()) && alnum(bucket.back()) &&
	          bucket.find("..") == std::string::npos;
	for (char c : bucket) {
		ok = ok && (alnum(c) || c == '.' || c == '-');
	}
	if (!ok) {
		why = "the bucket name '" + bucket +
		      "' is not 3-63 lower-case letters, digits, '.' or '-' starting and ending with a letter or digit";
	}
	return ok;
}

static bool ParseS3(const std::string &rest, ObjectStoreUrl &out, std::string &why) {
	auto slash = rest.find('/');
	out.kind = ObjectStoreUrl::Kind::S3;
	out.bucket = rest.substr(0, slash);
	out.prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
	if (!ValidBucket(out.bucket, why)) {
		return false;
	}
	if (out.prefix.empty()) {
		return true;
	}
	if (out.prefix.back() != '/') {
		out.prefix += '/';
	}
	// The prefix is the start of every key: it must be a valid key once something follows it.
	if (!ValidObjectKey(out.prefix + "x", why)) {
		why = "the prefix '" + out.prefix + "' cannot start object keys: " + why;
		return false;
	}
	return true;
}

bool ParseObjectStoreUrl(const std::string &url, ObjectStoreUrl &out, std::string &why) {
	out = ObjectStoreUrl();
	if (url.rfind("s3://", 0) == 0) {
		return ParseS3(url.substr(5), out, why);
	}
	if (url.rfind("file://", 0) == 0) {
		out.kind = ObjectStoreUrl::Kind::FILE;
		out.path = url.substr(7);
		while (out.path.size() > 1 && out.path.back() == '/') {
			out.path.pop_back();
		}
		bool dots = (out.path + "/").find("/../") != std::string::npos;
		if (out.path.empty() || out.path[0] != '/' || dots || out.path.find('\0') != std::string::npos) {
			why = "a file:// URL needs an absolute directory (file:///path/to/dir/) without '..'";
			return false;
		}
		return true;
	}
	why = "it starts with neither s3:// nor file://";
	return false;
}

std::string FormatObjectStoreUrl(const ObjectStoreUrl &url) {
	if (url.kind == ObjectStoreUrl::Kind::S3) {
		return "s3://" + url.bucket + "/" + url.prefix;
	}
	return "file://" + url.path + (url.path == "/" ? "" : "/");
}

} // namespace differential
