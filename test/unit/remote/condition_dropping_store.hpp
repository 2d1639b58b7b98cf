// A store wrapper for tests: passes everything on, with some conditions removed, as an S3 server without
// conditional writes would behave. Shared by the probe's and the export layer's tests.
#pragma once

#include "storage/object_store.hpp"

namespace differential {
namespace test {

//! Passes everything on, but with some conditions removed.
class ConditionDroppingStore : public ObjectStore {
public:
	ConditionDroppingStore(ObjectStore &inner_p, bool drop_create_only, bool drop_if_match)
	    : inner(inner_p), drop_create_only(drop_create_only), drop_if_match(drop_if_match) {
	}
	PutResult Put(const PutRequest &request) override {
		PutRequest copy = request;
		auto kind = request.condition.kind;
		if ((kind == PutCondition::Kind::IF_NONE_MATCH_ANY && drop_create_only) ||
		    (kind == PutCondition::Kind::IF_MATCH && drop_if_match)) {
			copy.condition = PutCondition::None();
		}
		return inner.Put(copy);
	}
	GetResult Get(const std::string &key, const std::optional<ByteRange> &range) override {
		return inner.Get(key, range);
	}
	HeadResult Head(const std::string &key) override {
		return inner.Head(key);
	}
	ListPage List(const std::string &prefix, const std::string &token, uint32_t max_keys) override {
		return inner.List(prefix, token, max_keys);
	}
	ObjectOutcome Delete(const std::string &key) override {
		return inner.Delete(key);
	}
	std::string Describe() const override {
		return inner.Describe();
	}

protected:
	ObjectStore &inner;

private:
	bool drop_create_only;
	bool drop_if_match;
};

} // namespace test
} // namespace differential
