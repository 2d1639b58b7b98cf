// LoggedObjectStore: passes every call on unchanged and logs it; the log never changes an outcome.
#include "remote/logged_object_store.hpp"

namespace differential {

LoggedObjectStore::LoggedObjectStore(ObjectStore &inner_p, std::string event_p)
    : inner(inner_p), event(std::move(event_p)), sink(CurrentLogSink()) {
}

void LoggedObjectStore::Log(const std::string &what, const ObjectOutcome &outcome, uint64_t bytes,
                            const LogTimer &timer) const {
	LogScope scope(sink);
	if (!LogEnabled()) {
		return;
	}
	// Keys and statuses only: a detail from the store could quote a server's answer, never credentials,
	// but it is not needed here (the caller's error carries it).
	LogEvent(event, timer.ElapsedMs(),
	         what + ": " + ObjectStatusName(outcome.status) + ", " + std::to_string(bytes) + " bytes, " +
	             std::to_string(outcome.attempts) + " attempt(s)");
}

PutResult LoggedObjectStore::Put(const PutRequest &request) {
	LogTimer timer;
	auto result = inner.Put(request);
	const char *condition = request.condition.kind == PutCondition::Kind::IF_NONE_MATCH_ANY ? " if-none-match"
	                        : request.condition.kind == PutCondition::Kind::IF_MATCH        ? " if-match"
	                                                                                        : "";
	Log(std::string("PUT") + condition + " " + request.key, result.outcome, request.size, timer);
	return result;
}

GetResult LoggedObjectStore::Get(const std::string &key, const std::optional<ByteRange> &range) {
	LogTimer timer;
	auto result = inner.Get(key, range);
	Log("GET " + key, result.outcome, result.data.size(), timer);
	return result;
}

HeadResult LoggedObjectStore::Head(const std::string &key) {
	LogTimer timer;
	auto result = inner.Head(key);
	Log("HEAD " + key, result.outcome, 0, timer);
	return result;
}

ListPage LoggedObjectStore::List(const std::string &prefix, const std::string &token, uint32_t max_keys) {
	LogTimer timer;
	auto result = inner.List(prefix, token, max_keys);
	Log("LIST " + prefix + " (" + std::to_string(result.objects.size()) + " keys)", result.outcome, 0, timer);
	return result;
}

ObjectOutcome LoggedObjectStore::Delete(const std::string &key) {
	LogTimer timer;
	auto result = inner.Delete(key);
	Log("DELETE " + key, result, 0, timer);
	return result;
}

std::string LoggedObjectStore::Describe() const {
	return inner.Describe();
}

} // namespace differential
