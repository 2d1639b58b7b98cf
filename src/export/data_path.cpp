// DATA_PATH parsing: the remote layer's URL rules, worded as a refusal that says how to write one.
#include "export/data_path.hpp"

#include "common/errors.hpp"

namespace differential {

ObjectStoreUrl ParseDataPath(const std::string &value) {
	ObjectStoreUrl url;
	std::string why;
	if (!ParseObjectStoreUrl(value, url, why)) {
		Fail(ErrorCode::INVALID_DATA_PATH,
		     "The object store URL '" + value + "' is not usable: " + why +
		         ". Write s3://<bucket>/<prefix>/ (or file:///<absolute directory>/ for a local one).");
	}
	return url;
}

std::string CanonicalDataPath(const std::string &value) {
	return FormatObjectStoreUrl(ParseDataPath(value));
}

} // namespace differential
