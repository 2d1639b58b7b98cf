// DATA_PATH parsing for ATTACH: the remote layer's URL rules, worded as an ATTACH refusal.
#include "export/data_path.hpp"

#include "common/errors.hpp"
#include "remote/object_store_url.hpp"

namespace differential {

std::string CanonicalDataPath(const std::string &value) {
	ObjectStoreUrl url;
	std::string why;
	if (!ParseObjectStoreUrl(value, url, why)) {
		Fail(ErrorKind::INVALID_INPUT, "invalid_data_path",
		     "DATA_PATH '" + value + "' is not usable: " + why +
		         ". Write it as 's3://bucket/prefix/' or 'file:///absolute/directory/'.");
	}
	return FormatObjectStoreUrl(url);
}

} // namespace differential
