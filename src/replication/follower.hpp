// A follower's poller: a background thread that checks a branch head once per FOLLOW_INTERVAL with a
// conditional GET and resolves each new export it finds; the catalog opens the states it publishes.
#pragma once

#include "common/background_thread.hpp"
#include "common/hash.hpp"
#include "duckdb/main/database.hpp"
#include "remote/counting_object_store.hpp"
#include "remote/epoch_chain.hpp"
#include "remote/export_format.hpp"
#include "replication/follower_takeover.hpp"
#include "storage/remote_file.hpp"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace differential {

//! One state a follower can read: generation 1 is what the ATTACH resolved, each newer state found adds one.
//! Following snapshots, a state is an export (`descriptor`); following commits, it is a chain position:
//! the chain's base export (`descriptor`) with the chunks and WAL of epochs 1..seq (`overlay`, null at seq 0).
struct FollowState {
	uint64_t generation = 0;
	Hash256 descriptor {};
	int64_t snapshot_id = 0;
	uint64_t chain = 0;
	uint64_t seq = 0;
	std::shared_ptr<const ImageOverlay> overlay;
};

//! What differential_followers() shows of one follower.
struct FollowerStatus {
	std::string alias;
	std::string head_url;
	std::string follows; //! "snapshots" or "commits"
	FollowState state;
	double interval_seconds = 0;
	int64_t last_check_ms = 0; //! wall clock of the last check, successful or not
	int64_t last_ok_ms = 0;    //! wall clock of the last check that reached the store
	uint64_t requests = 0;
	std::optional<std::string> last_error;
	//! A standby (TAKEOVER_AS): the name its new leader gets, and where its lease watch or takeover stands.
	std::optional<std::string> takeover_as;
	std::optional<std::string> lease;
};

class Follower {
public:
	//! `initial` is the state the ATTACH resolved; `etag` the head's etag it was read at.
	Follower(duckdb::DatabaseInstance &db, std::shared_ptr<CountingObjectStore> store, RemoteLocator head,
	         std::string alias, std::string head_url, double interval_seconds, FollowState initial, std::string etag);
	~Follower();
	Follower(const Follower &) = delete;
	Follower &operator=(const Follower &) = delete;

	//! Follows WAL epochs from `position` (read to the tip, `state`) instead of the head: a head with a chain.
	//! Call before Start.
	void FollowCommits(ChainPosition position, ChainState state);
	//! Makes this follower (of commits) a standby: it watches the lease each interval and takes the branch over
	//! when the lease lapses. Call before Start.
	void EnableTakeover(TakeoverPlan plan);
	//! The state a chain position stands for, with `base_length` the base export's file length.
	static FollowState ChainFollowState(const ChainState &state, uint64_t base_length, int64_t snapshot_id);

	//! Starts the poller and lists the follower in Registered(). Call once.
	void Start(const std::shared_ptr<Follower> &self);
	//! Stops and joins the poller (an in-flight request finishes first), then a takeover under way (it ends,
	//! or, when the instance is closing, is cancelled before it attaches), and unlists it. Idempotent.
	void Stop();

	//! The newest state found so far.
	FollowState Newest() const;
	FollowerStatus Status() const;
	//! The image of a shipped state (`state.overlay` set): its base export with the overlay.
	std::shared_ptr<RemoteImageFile> OpenShippedImage(const FollowState &state) const;
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
	//! One snapshots-mode check: the conditional GET of the head; a failed request sets `error`.
	std::string CheckHead(const std::string &key, const std::string &known, int64_t snapshot_id,
	                      std::optional<std::string> &error);
	void Adopt(const BranchHead &head, const std::string &etag);
	//! One commits-mode check: one GET of the next epoch; when there is one, reads on to the tip.
	std::string CheckEpochs();
	//! A standby's lease step: one conditional GET; a lapsed lease taken starts the takeover.
	void CheckLease();
	//! The base export's file length (resolving it, verified, when the chain moved to a new base).
	uint64_t BaseLength(const Hash256 &base);

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
	BackgroundThread thread; //! the poller
	//! Commits mode (poller thread only after Start).
	bool commits = false;
	ChainPosition position;
	ChainState chain_state;
	Hash256 known_base {};
	uint64_t known_base_length = 0;
	//! Standby (poller thread only after Start, except `takeover_status`, under `lock`).
	std::optional<TakeoverPlan> takeover;
	std::shared_ptr<Lease> standby_lease;
	bool takeover_started = false;
	std::string takeover_status;
	//! The takeover, once started: joined by Stop, after the poller.
	BackgroundThread takeover_thread;
	std::weak_ptr<Follower> self;
};

} // namespace differential
