// An object store that reports every request it passes on as one log event (verb, key, outcome, bytes,
// HTTP attempts, duration), for the callers that have no request log of their own: remote cleanup, the probe.
#pragma once

#include "common/log_handoff.hpp"
#include "storage/object_store.hpp"

#include <string>

namespace differential {

class LoggedObjectStore : public ObjectStore {
public:
	//! Events are named `event` and go to the sink of the constructing thread, also from other threads
	//! (the probe's racing writers), so no request goes unlogged.
	LoggedObjectStore(ObjectStore &inner, std::string event);

	PutResult Put(const PutRequest &request) override;
	GetResult Get(const std::string &key, const std::optional<ByteRange> &range = std::nullopt) override;
	HeadResult Head(const std::string &key) override;
	ListPage List(const std::string &prefix, const std::string &token = "", uint32_t max_keys = 1000) override;
	ObjectOutcome Delete(const std::string &key) override;
	std::string Describe() const override;

private:
	void Log(const std::string &what, const ObjectOutcome &outcome, uint64_t bytes, const LogTimer &timer) const;

	ObjectStore &inner;
	std::string event;
	LogSink *sink;
};

} // namespace differential
