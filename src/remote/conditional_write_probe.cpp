// ProbeConditionalWrites: the three promises heads rely on, checked against the live store.
#include "remote/conditional_write_probe.hpp"

#include "common/fault_points.hpp"

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace differential {

static PutResult PutText(ObjectStore &store, const std::string &key, const std::string &text, PutCondition condition) {
	PutRequest request;
	request.key = key;
	request.data = text.data();
	request.size = text.size();
	request.condition = std::move(condition);
	return store.Put(request);
}

static ProbeResult Failed(const std::string &what, const ObjectOutcome &outcome) {
	ProbeResult result;
	result.failure = what + " (got " + ObjectStatusName(outcome.status) + (outcome.detail.empty() ? "" : ": ") +
	                 outcome.detail + ")";
	result.status = outcome.status;
	return result;
}

//! 8 writers race an If-Match on `etag`; returns how many won, or -1 when one met something other than
//! a lost race (then `unexpected` says what).
static int RaceIfMatch(ObjectStore &store, const std::string &key, const std::string &etag, ObjectOutcome &unexpected) {
	std::atomic<int> wins {0};
	std::vector<ObjectOutcome> outcomes(8);
	std::vector<std::thread> writers;
	for (int i = 0; i < 8; i++) {
		writers.emplace_back([&, i] {
			outcomes[i] = PutText(store, key, "writer " + std::to_string(i), PutCondition::IfMatch(etag)).outcome;
			wins += outcomes[i].Ok() ? 1 : 0;
		});
	}
	for (auto &writer : writers) {
		writer.join();
	}
	for (auto &outcome : outcomes) {
		if (!outcome.Ok() && outcome.status != ObjectStatus::PRECONDITION_FAILED &&
		    outcome.status != ObjectStatus::CONFLICT) {
			unexpected = outcome;
			return -1;
		}
	}
	return wins;
}

ProbeResult ProbeConditionalWrites(ObjectStore &store, const std::string &scratch_prefix) {
	std::random_device random;
	std::string dir = scratch_prefix + "probe-" + std::to_string(random()) + std::to_string(random()) + "/";
	std::string key = dir + "head";
	auto first = PutText(store, key, "first", PutCondition::CreateOnly());
	if (!first.outcome.Ok()) {
		return Failed("a create-only PUT of a new key did not succeed", first.outcome);
	}
	ProbeResult result;
	// The fault points send a check's write without its condition, so the real server answers a plain PUT
	// exactly as a store that ignores the header would: no server we can run ignores it (tests only).
	bool drop_create_only = InjectedFault("probe_ignore_if_none_match") != 0;
	auto again = PutText(store, key, "again", drop_create_only ? PutCondition::None() : PutCondition::CreateOnly());
	auto second = PutText(store, key, "second", PutCondition::IfMatch(first.etag));
	bool drop_if_match = InjectedFault("probe_ignore_if_match") != 0;
	auto stale = PutText(store, key, "stale", drop_if_match ? PutCondition::None() : PutCondition::IfMatch(first.etag));
	ObjectOutcome unexpected;
	int wins = 0;
	if (again.outcome.status != ObjectStatus::PRECONDITION_FAILED) {
		result = Failed("If-None-Match: * on an existing key was not refused", again.outcome);
	} else if (!second.outcome.Ok()) {
		result = Failed("an If-Match PUT with the current etag did not succeed", second.outcome);
	} else if (stale.outcome.status != ObjectStatus::PRECONDITION_FAILED) {
		result = Failed("If-Match with a stale etag was not refused", stale.outcome);
	} else if ((wins = RaceIfMatch(store, key, second.etag, unexpected)) != 1) {
		result = wins < 0 ? Failed("a racing If-Match writer failed", unexpected)
		                  : Failed(std::to_string(wins) + " of 8 racing If-Match writers won, not 1", {});
	} else {
		result.passed = true;
	}
	store.Delete(key); // best effort: the scratch key is harmless if it stays
	return result;
}

} // namespace differential
