// The lease's steps. Every write is conditional (create-only, or If-Match on the ETag last seen), so of two
// standbys taking one lapsed lease exactly one wins; an unknown outcome is resolved by reading the lease back.
#include "replication/lease.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"

#include <optional>

namespace differential {

Lease::Lease(std::shared_ptr<ObjectStore> store_p, LeaseRecord mine_p, bool create_if_absent)
    : store(std::move(store_p)), mine(std::move(mine_p)), create_if_absent(create_if_absent),
      key(LeaseKey(mine.database, mine.branch)) {
}

LeaseState Lease::State() const {
	std::lock_guard<std::mutex> guard(lock);
	return state;
}

LeaseRecord Lease::Seen() const {
	std::lock_guard<std::mutex> guard(lock);
	return seen;
}

void Lease::Set(LeaseState next) {
	std::lock_guard<std::mutex> guard(lock);
	state = next;
}

std::string Lease::Describe() const {
	std::lock_guard<std::mutex> guard(lock);
	switch (state) {
	case LeaseState::HELD:
		return "held";
	case LeaseState::LOST:
		return "lost to " + seen.holder;
	case LeaseState::ABSENT:
		return "absent";
	default:
		if (!seen_valid) {
			return "watching";
		}
		auto quiet =
		    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - seen_since);
		return "watching " + seen.holder + " (unchanged for " + std::to_string(quiet.count()) + " ms of " +
		       std::to_string(seen.duration_ms) + ")";
	}
}

LeaseRecord Lease::Decode(const std::string &text) const {
	LeaseRecord record;
	std::string why;
	if (!DecodeLease(text, record, why) || record.database != mine.database || record.branch != mine.branch) {
		Fail(ErrorCode::CORRUPT_LEASE, "The lease " + key + " in " + store->Describe() + " is damaged (" +
		                                   (why.empty() ? "it names another branch" : why) +
		                                   "). Delete it: the leader writes a new one within a third of its duration.");
	}
	return record;
}

bool Lease::Read(LeaseRecord &record, std::string &read_etag) {
	auto got = store->Get(key);
	if (got.outcome.status == ObjectStatus::NOT_FOUND) {
		return false;
	}
	if (!got.outcome.Ok()) {
		FailRemote(got.outcome, *store, "reading the lease " + key);
	}
	record = Decode(got.data);
	read_etag = got.etag;
	return true;
}

void Lease::Observe(const LeaseRecord &there, const std::string &there_etag) {
	std::lock_guard<std::mutex> guard(lock);
	if (there_etag != etag || !seen_valid) {
		seen_since = std::chrono::steady_clock::now(); // a new version: the silence starts now
	}
	seen = there;
	seen_valid = true;
	etag = there_etag;
}

bool Lease::Write(LeaseRecord record, const PutCondition &condition) {
	auto text = EncodeLease(record);
	auto result = store->Put(PutOf(key, text, condition));
	if (result.outcome.Ok()) {
		etag = result.etag;
		mine = record;
		return true;
	}
	bool refused = result.outcome.status == ObjectStatus::PRECONDITION_FAILED ||
	               result.outcome.status == ObjectStatus::CONFLICT || result.outcome.status == ObjectStatus::NOT_FOUND;
	// Refused, or unknown (the PUT may have landed): the lease as it is now decides.
	LeaseRecord there;
	std::string there_etag;
	if (!Read(there, there_etag)) {
		if (!refused) {
			FailRemote(result.outcome, *store, "writing the lease " + key);
		}
		return false;
	}
	if (there.holder == mine.holder) {
		// Our write landed, or our other keeper (a takeover handing over to the new leader's shipper) renewed.
		etag = there_etag;
		mine.renewal = there.renewal;
		return true;
	}
	Observe(there, there_etag);
	return false;
}

LeaseState Lease::Renew() {
	auto next = mine;
	next.renewal++;
	if (Write(next, PutCondition::IfMatch(etag))) {
		return LeaseState::HELD;
	}
	LogWarning("lease_lost", key + ": taken by " + Seen().holder + "; this leader stops shipping");
	return LeaseState::LOST;
}

LeaseState Lease::Watch() {
	auto got = seen_valid ? store->GetIfNoneMatch(key, etag) : store->Get(key);
	if (got.outcome.status == ObjectStatus::NOT_FOUND) {
		if (!create_if_absent) {
			std::lock_guard<std::mutex> guard(lock);
			seen_valid = false;
			return LeaseState::ABSENT;
		}
		auto first = mine;
		first.renewal = 1;
		return Write(first, PutCondition::CreateOnly()) ? LeaseState::HELD : LeaseState::WATCHING;
	}
	if (!got.outcome.Ok()) {
		FailRemote(got.outcome, *store, "reading the lease " + key);
	}
	if (!got.not_modified) {
		auto there = Decode(got.data);
		if (there.holder == mine.holder) {
			etag = got.etag;
			mine.renewal = there.renewal;
			return LeaseState::HELD;
		}
		Observe(there, got.etag);
	}
	// Lapsed: the holder's object stayed the same for longer than its duration, measured here. Take it from exactly
	// that version: of several standbys one wins, and a holder that renewed meanwhile keeps it.
	if (std::chrono::steady_clock::now() - seen_since <= std::chrono::milliseconds(seen.duration_ms)) {
		return LeaseState::WATCHING;
	}
	auto take = mine;
	take.renewal = seen.renewal + 1;
	if (!create_if_absent) {
		take.ship_wal = seen.ship_wal;
		take.ship_interval = seen.ship_interval;
	}
	return Write(take, PutCondition::IfMatch(etag)) ? LeaseState::HELD : LeaseState::WATCHING;
}

LeaseState Lease::Tick() {
	auto current = State();
	if (current == LeaseState::LOST) {
		return current;
	}
	auto next = current == LeaseState::HELD ? Renew() : Watch();
	Set(next);
	return next;
}

LeaseKeeper::LeaseKeeper(std::shared_ptr<Lease> lease_p, duckdb::DatabaseInstance *instance)
    : lease(std::move(lease_p)), instance(instance) {
	thread.Start("diff-lease", [this]() { Run(); });
}

LeaseKeeper::~LeaseKeeper() {
	{
		std::lock_guard<std::mutex> guard(lock);
		stopping = true;
	}
	wake.notify_all();
	thread.Join();
}

void LeaseKeeper::Run() {
	std::optional<DuckDBLogScope> log;
	if (instance) {
		log.emplace(*instance);
	}
	auto step = std::max(std::chrono::milliseconds(50), lease->Duration() / 3);
	std::unique_lock<std::mutex> guard(lock);
	while (!stopping) {
		guard.unlock();
		try {
			if (lease->Tick() == LeaseState::LOST) {
				return;
			}
		} catch (std::exception &error) {
			LogWarning("lease_renewal", lease->Mine().database + "/" + lease->Mine().branch + ": " + error.what() +
			                                " (retried in a third of the lease)");
		}
		guard.lock();
		wake.wait_for(guard, step, [this]() { return stopping; });
	}
}

} // namespace differential
