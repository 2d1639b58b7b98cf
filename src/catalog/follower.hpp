// A follower's poller: a background thread that checks a branch head once per FOLLOW_INTERVAL with a
// conditional GET and resolves each new export it finds; the catalog opens the states it publishes.
#pragma once

#include "common/hash.hpp"
#include "duckdb/main/database.hpp"
#include "remote/counting_object_store.hpp"
#include "remote/export_format.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace differential {

//! One state a follower can read: generation 1 is what the ATTACH resolved, each newer export found adds one.
struct FollowState {
	uint64_t generation = 0;
	Hash256 descriptor {};
	int64_t snapshot_id = 0;
};

//! What differential_followers() shows of one follower.
struct FollowerStatus {
	std::string alias;
	std::string head_url;
	std::string follows; //! "snapshots" (this build follows exported heads only)
	FollowState state;
	double interval_seconds = 0;
	int64_t last_check_ms = 0; //! wall clock of the last check, successful or not
	int64_t last_ok_ms = 0;    //! wall clock of the last check that reached the store
	uint64_t requests = 0;
	std::optional<std::string> last_error;
};

class Follower {
public:
	//! `initial` is the state the ATTACH resolved; `etag` the head's etag it was read at.
	Follower(duckdb::DatabaseInstance &db, std::shared_ptr<CountingObjectStore> store, RemoteLocator head,
	         std::string alias, std::string head_url, double interval_seconds, FollowState initial, std::string etag);
	~Follower();
	Follower(const Follower &) = delete;
	Follower &operator=(const Follower &) = delete;

	//! Starts the poller and lists the follower in Registered(). Call once.
	void Start(const std::shared_ptr<Follower> &self);
	//! Stops and joins the poller (an in-flight request finishes first) and unlists it. Idempotent.
	void Stop();

	//! The newest state found so far.
	FollowState Newest() const;
	FollowerStatus Status() const;
	//! Where descriptors live, for the hidden attachments: `<store url>descriptors/<sha256>`.
	std::string DescriptorLocator(const Hash256 &descriptor) const;

	//! Whether this follower belongs to `instance`.
	bool In(const duckdb::DatabaseInstance &instance) const {
		return &db == &instance;
	}

	//! The followers of this process, in the order they were attached.
	static std::vector<std::shared_ptr<Follower>> Registered();

private:
	void Run();
	void CheckOnce();
	void Adopt(const BranchHead &head, const std::string &etag);

	duckdb::DatabaseInstance &db;
	std::shared_ptr<CountingObjectStore> store;
	const RemoteLocator head;
	const std::string alias;
	const std::string head_url;
	const double interval_seconds;

	mutable std::mutex lock;
	std::condition_variable wake;
	bool stopping = false;
	FollowState newest;
	std::string etag;
	int64_t last_check_ms = 0;
	int64_t last_ok_ms = 0;
	std::optional<std::string> last_error;
	std::thread thread;
};

} // namespace differential
