// The optional failover lease (SET differential_failover = 'lease', docs/REPLICATION.md §7): a leader renews
// `leases/<db>/<branch>` by If-Match; a standby takes it by If-Match on the ETag it saw unchanged for longer than
// the lease's duration on its own monotonic clock. The lease only decides WHEN a standby tries: the recovery seal
// is the fence (safety never rests on the lease or on any clock).
#pragma once

#include "common/background_thread.hpp"
#include "remote/lease_format.hpp"
#include "storage/object_store.hpp"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace duckdb {
class DatabaseInstance;
}

namespace differential {

enum class LeaseState {
	WATCHING, //! another holder's lease is live (or not read yet)
	ABSENT,   //! no lease object (a standby never creates one: the leader does not lease)
	HELD,     //! ours: renewed by If-Match
	LOST      //! was ours; another holder took it
};

//! One participant's view of the lease. Not thread-safe except Describe(); one thread drives Tick().
class Lease {
public:
	//! `mine`: the record this participant writes (holder, duration, ship settings). A leader creates an absent
	//! lease (`create_if_absent`); a standby waits for one, and takes a lapsed one over with the holder's SHIP_WAL
	//! settings (the new leader ships as the old one did).
	Lease(std::shared_ptr<ObjectStore> store, LeaseRecord mine, bool create_if_absent);

	//! One step: renew when held, else read the lease (one conditional GET) and take it when it lapsed.
	//! Request failures throw (the state stays; the next step retries).
	LeaseState Tick();
	LeaseState State() const;
	//! For differential_shipping() / differential_followers(): 'held', 'lost to <holder>', ...
	std::string Describe() const;
	//! The other holder's record last read (a standby inherits its SHIP_WAL settings on takeover).
	LeaseRecord Seen() const;
	const LeaseRecord &Mine() const {
		return mine;
	}
	std::chrono::milliseconds Duration() const {
		return std::chrono::milliseconds(mine.duration_ms);
	}

private:
	LeaseState Renew();
	LeaseState Watch();
	//! PUT `record` with `condition`; true when it is ours now (written, or found ours after an unknown outcome).
	bool Write(LeaseRecord record, const PutCondition &condition);
	//! GET the lease: true when found (decoded into `record`, `etag` set); false when absent.
	bool Read(LeaseRecord &record, std::string &etag);
	//! Decodes a lease read from the store (corrupt_lease when damaged or of another branch).
	LeaseRecord Decode(const std::string &text) const;
	//! Records another holder's version; the silence is timed from when a version is first seen.
	void Observe(const LeaseRecord &there, const std::string &there_etag);
	void Set(LeaseState next);

	std::shared_ptr<ObjectStore> store;
	LeaseRecord mine;
	const bool create_if_absent;
	const std::string key;
	std::string etag; //! of our lease (HELD) or of the one watched
	LeaseRecord seen;
	bool seen_valid = false;
	std::chrono::steady_clock::time_point seen_since;
	mutable std::mutex lock;
	LeaseState state = LeaseState::WATCHING;
};

//! Drives a Lease on its own thread: a step every third of the lease's duration, until stopped or lost.
class LeaseKeeper {
public:
	//! Log events of the thread go to `instance`'s logger when given.
	LeaseKeeper(std::shared_ptr<Lease> lease, duckdb::DatabaseInstance *instance);
	~LeaseKeeper();
	LeaseKeeper(const LeaseKeeper &) = delete;
	LeaseKeeper &operator=(const LeaseKeeper &) = delete;

	bool Lost() const {
		return lease->State() == LeaseState::LOST;
	}
	std::string Describe() const {
		return lease->Describe();
	}
	const Lease &Current() const {
		return *lease;
	}

private:
	void Run();

	std::shared_ptr<Lease> lease;
	duckdb::DatabaseInstance *instance;
	std::mutex lock;
	std::condition_variable wake;
	bool stopping = false;
	BackgroundThread thread;
};

} // namespace differential
