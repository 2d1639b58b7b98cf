// An ObjectStore that counts the requests made through it and forwards everything to another store: a
// follower reports exactly how many requests its polling made (differential_followers().requests).
#pragma once

#include "storage/object_store.hpp"

#include <atomic>
#include <memory>

namespace differential {

class CountingObjectStore : public ObjectStore {
public:
	explicit CountingObjectStore(std::shared_ptr<ObjectStore> inner);

	PutResult Put(const PutRequest &request) override;
	GetResult Get(const std::string &key, const std::optional<ByteRange> &range = std::nullopt) override;
	GetResult GetIfNoneMatch(const std::string &key, const std::string &etag) override;
	HeadResult Head(const std::string &key) override;
	ListPage List(const std::string &prefix, const std::string &token = "", uint32_t max_keys = 1000) override;
	ObjectOutcome Delete(const std::string &key) override;
	std::string Describe() const override;

	//! Requests made so far: an S3 call counts its retries; a call to a store that makes none (the local
	//! store) counts one.
	uint64_t Requests() const {
		return requests.load();
	}

private:
	void Count(const ObjectOutcome &outcome);

	std::shared_ptr<ObjectStore> inner;
	std::atomic<uint64_t> requests {0};
};

} // namespace differential
