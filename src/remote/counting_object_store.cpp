// Forwarding with a request count (see counting_object_store.hpp).
#include "remote/counting_object_store.hpp"

#include <algorithm>

namespace differential {

CountingObjectStore::CountingObjectStore(std::shared_ptr<ObjectStore> inner_p) : inner(std::move(inner_p)) {
}

void CountingObjectStore::Count(const ObjectOutcome &outcome) {
	requests += std::max<uint64_t>(1, outcome.attempts);
}

PutResult CountingObjectStore::Put(const PutRequest &request) {
	auto result = inner->Put(request);
	Count(result.outcome);
	return result;
}

GetResult CountingObjectStore::Get(const std::string &key, const std::optional<ByteRange> &range) {
	auto result = inner->Get(key, range);
	Count(result.outcome);
	return result;
}

GetResult CountingObjectStore::GetIfNoneMatch(const std::string &key, const std::string &etag) {
	auto result = inner->GetIfNoneMatch(key, etag);
	Count(result.outcome);
	return result;
}

HeadResult CountingObjectStore::Head(const std::string &key) {
	auto result = inner->Head(key);
	Count(result.outcome);
	return result;
}

ListPage CountingObjectStore::List(const std::string &prefix, const std::string &token, uint32_t max_keys) {
	auto page = inner->List(prefix, token, max_keys);
	Count(page.outcome);
	return page;
}

ObjectOutcome CountingObjectStore::Delete(const std::string &key) {
	auto outcome = inner->Delete(key);
	Count(outcome);
	return outcome;
}

std::string CountingObjectStore::Describe() const {
	return inner->Describe();
}

} // namespace differential
