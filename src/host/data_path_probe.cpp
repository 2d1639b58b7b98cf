// ATTACH's look at a DATA_PATH it is given (see data_path_probe.hpp).
#include "host/data_path_probe.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "export/data_path.hpp"
#include "host/object_store_access.hpp"

namespace differential {

void ProbeDataPath(duckdb::ClientContext &context, const std::string &url, const std::string &database) {
	if (ParseDataPath(url).kind == ObjectStoreUrl::Kind::FILE) {
		return;
	}
	auto store = OpenObjectStore(context, url);
	// A listing, not a GET: S3 answers a missing key with 404 too (or 403 without ListBucket), while a listing
	// of an existing bucket succeeds, empty or not, so 404 here can only mean the bucket is missing.
	auto page = store->List("", "", 1);
	auto what = "ATTACH of " + database + " with DATA_PATH " + url + " refused: ";
	auto after = " Nothing was attached or written; fix the DATA_PATH or the TYPE s3 secret whose SCOPE covers it "
	             "(or the AWS credential chain), then attach again.";
	switch (page.outcome.status) {
	case ObjectStatus::OK:
		return;
	case ObjectStatus::DENIED:
		Fail(ErrorCode::ACCESS_DENIED,
		     what + "the store refused the credentials (" + page.outcome.detail + ")." + after);
	case ObjectStatus::NOT_FOUND:
		Fail(ErrorCode::EXPORT_FAILED, what + "the bucket does not exist (" + page.outcome.detail + ")." + after);
	case ObjectStatus::INVALID:
		Fail(ErrorCode::EXPORT_FAILED, what + "the store refused the request (" + page.outcome.detail + ")." + after);
	default:
		break;
	}
	DuckDBLogScope log(context);
	LogWarning("data_path_unreachable", database + ": " + url + " could not be reached (" + page.outcome.detail +
	                                        "); attached anyway: local work goes on, and snapshots export when the "
	                                        "store answers again (differential_export_snapshot retries them)");
}

} // namespace differential
