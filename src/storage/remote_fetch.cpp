// Logged GETs and the errors of failed remote requests (see remote_fetch.hpp).
#include "storage/remote_fetch.hpp"

#include "common/errors.hpp"
#include "common/logging.hpp"

namespace differential {

GetResult LoggedGet(ObjectStore &store, const std::string &key, const std::optional<ByteRange> &range) {
	LogTimer timer;
	auto result = store.Get(key, range);
	if (LogEnabled()) {
		std::string where = store.Describe() + key;
		if (range) {
			where += " bytes " + std::to_string(range->offset) + "+" + std::to_string(range->length);
		}
		LogEvent("remote_get", timer.ElapsedMs(),
		         where + ": " + ObjectStatusName(result.outcome.status) + ", " + std::to_string(result.data.size()) +
		             " bytes, " + std::to_string(result.outcome.attempts) + " attempt(s)");
	}
	return result;
}

void FailRemoteRequest(ObjectStore &store, const std::string &what, const ObjectOutcome &outcome) {
	auto where = what + " at " + store.Describe();
	auto detail = outcome.detail.empty() ? std::string() : " (" + outcome.detail + ")";
	switch (outcome.status) {
	case ObjectStatus::DENIED:
		Fail(ErrorKind::IO, "remote_access_denied",
		     "Reading " + where + " was refused: the credentials were not accepted or may not read it" + detail +
		         ". Create a TYPE s3 secret whose SCOPE covers the location (or provide AWS credentials to the "
		         "default chain) and attach again.");
	case ObjectStatus::TRANSIENT:
		Fail(ErrorKind::IO, "remote_unavailable",
		     "Reading " + where + " failed after " + std::to_string(outcome.attempts) + " attempt(s)" + detail +
		         ". Check the ENDPOINT, USE_SSL and the network, then retry.");
	default:
		Fail(ErrorKind::IO, "remote_request_failed",
		     "Reading " + where + " failed: " + ObjectStatusName(outcome.status) + detail +
		         ". Check that the location is an export written by differential.");
	}
}

} // namespace differential
