// Logged GETs (see remote_fetch.hpp).
#include "storage/remote_fetch.hpp"

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

} // namespace differential
