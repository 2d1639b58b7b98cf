// The follower's poller (see follower.hpp). The thread touches only the object store and this object's
// state, never DuckDB's catalog: opening a state is done by the catalog on a user's thread, so nothing
// the thread does can race with DETACH or with the database instance shutting down.
#include "replication/follower.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "remote/export_reader.hpp"
#include "remote/remote_journal.hpp"
#include "storage/remote_cache.hpp"

#include <algorithm>
#include <chrono>

namespace differential {

static std::mutex &RegistryLock() {
	static std::mutex lock;
	return lock;
}

static std::vector<std::weak_ptr<Follower>> &Registry() {
	static std::vector<std::weak_ptr<Follower>> followers;
	return followers;
}

Follower::Follower(duckdb::DatabaseInstance &db, std::shared_ptr<CountingObjectStore> store, RemoteLocator head,
                   std::string alias, std::string head_url, double interval_seconds, FollowState initial,
                   std::string etag)
    : db(db), store(std::move(store)), head(std::move(head)), alias(std::move(alias)), head_url(std::move(head_url)),
      interval_seconds(interval_seconds), newest(initial), etag(std::move(etag)) {
	last_check_ms = last_ok_ms = NowUnixMs();
}

Follower::~Follower() {
	Stop();
}

void Follower::Start(const std::shared_ptr<Follower> &self_p) {
	self = self_p;
	{
		std::lock_guard<std::mutex> guard(RegistryLock());
		Registry().push_back(self_p);
	}
	thread.Start("diff-follow", [this]() { Run(); });
}

void Follower::Stop() {
	{
		std::lock_guard<std::mutex> guard(lock);
		stopping = true;
	}
	wake.notify_all();
	thread.Join();
	// After the poller: it is the poller that starts a takeover. A takeover under way ends first (the new
	// leader attached), so a DETACH of the standby never leaves a half-done failover running behind it.
	takeover_thread.Join();
	std::lock_guard<std::mutex> guard(RegistryLock());
	auto &followers = Registry();
	followers.erase(std::remove_if(followers.begin(), followers.end(),
	                               [this](const std::weak_ptr<Follower> &entry) {
		                               auto follower = entry.lock();
		                               return !follower || follower.get() == this;
	                               }),
	                followers.end());
}

std::vector<std::shared_ptr<Follower>> Follower::Registered() {
	std::lock_guard<std::mutex> guard(RegistryLock());
	std::vector<std::shared_ptr<Follower>> result;
	for (auto &entry : Registry()) {
		if (auto follower = entry.lock()) {
			result.push_back(std::move(follower));
		}
	}
	return result;
}

FollowState Follower::Newest() const {
	std::lock_guard<std::mutex> guard(lock);
	return newest;
}

FollowerStatus Follower::Status() const {
	FollowerStatus status;
	status.alias = alias;
	status.head_url = head_url;
	status.follows = commits ? "commits" : "snapshots";
	status.interval_seconds = interval_seconds;
	status.requests = store->Requests();
	std::lock_guard<std::mutex> guard(lock);
	status.state = newest;
	status.last_check_ms = last_check_ms;
	status.last_ok_ms = last_ok_ms;
	status.last_error = last_error;
	if (takeover) {
		status.takeover_as = takeover->alias;
		status.lease = takeover_started ? takeover_status : standby_lease->Describe();
	}
	return status;
}

std::string Follower::DescriptorLocator(const Hash256 &descriptor) const {
	return head.store_url + DescriptorKey(descriptor);
}

void Follower::EnableTakeover(TakeoverPlan plan) {
	standby_lease = std::make_shared<Lease>(store, plan.mine, false);
	takeover = std::move(plan);
}

void Follower::CheckLease() {
	if (!takeover || takeover_started) {
		return;
	}
	if (standby_lease->Tick() != LeaseState::HELD) {
		return;
	}
	{
		std::lock_guard<std::mutex> guard(lock);
		takeover_started = true;
		takeover_status = "taking over (lease taken from " + standby_lease->Seen().holder + ")";
	}
	std::weak_ptr<Follower> me = self;
	StartTakeover(takeover_thread, db, store, *takeover, standby_lease, [me](const std::string &outcome) {
		if (auto follower = me.lock()) {
			std::lock_guard<std::mutex> guard(follower->lock);
			follower->takeover_status = outcome;
		}
	});
}

void Follower::FollowCommits(ChainPosition position_p, ChainState state_p) {
	commits = true;
	position = std::move(position_p);
	chain_state = std::move(state_p);
}

FollowState Follower::ChainFollowState(const ChainState &state, uint64_t base_length, int64_t snapshot_id) {
	FollowState follow;
	follow.descriptor = state.base;
	follow.snapshot_id = snapshot_id;
	follow.chain = state.chain;
	follow.seq = state.seq;
	if (!state.Empty()) {
		auto overlay = std::make_shared<ImageOverlay>();
		for (auto &chunk : state.chunks) {
			overlay->chunks[chunk.first] = chunk.second.bytes;
		}
		overlay->length = state.file_length ? state.file_length : base_length;
		overlay->wal = state.wal;
		follow.overlay = std::move(overlay);
	}
	return follow;
}

uint64_t Follower::BaseLength(const Hash256 &base) {
	if (base != known_base) {
		RemoteLocator locator;
		locator.kind = RemoteLocator::Kind::DESCRIPTOR;
		locator.store_url = head.store_url;
		locator.descriptor = base;
		RemoteCache cache(MemoryContentCache::Process(), nullptr);
		known_base_length = ReadExport(*store, locator, cache).descriptor.length;
		known_base = base;
	}
	return known_base_length;
}

std::string Follower::CheckEpochs() {
	auto before_chain = chain_state.chain;
	auto before_seq = chain_state.seq;
	std::string failure;
	try {
		// Idle: one GET of the next epoch, which is not there.
		WalkToTip(*store, position, chain_state);
	} catch (std::exception &error) {
		// What was read before the failure is a verified prefix: it is still offered below.
		failure = error.what();
	}
	if (chain_state.chain != before_chain || chain_state.seq != before_seq) {
		auto state = ChainFollowState(chain_state, BaseLength(chain_state.base), 0);
		std::lock_guard<std::mutex> guard(lock);
		state.generation = newest.generation + 1;
		state.snapshot_id = newest.snapshot_id;
		newest = std::move(state);
	}
	if (!failure.empty()) {
		throw std::runtime_error(failure);
	}
	return "chain " + std::to_string(chain_state.chain) + " epoch " + std::to_string(chain_state.seq);
}

std::shared_ptr<RemoteImageFile> Follower::OpenShippedImage(const FollowState &state) const {
	RemoteLocator locator;
	locator.kind = RemoteLocator::Kind::DESCRIPTOR;
	locator.store_url = head.store_url;
	locator.descriptor = state.descriptor;
	auto cache = std::make_shared<RemoteCache>(MemoryContentCache::Process(), nullptr);
	auto resolved = ReadExport(*store, locator, *cache);
	return std::make_shared<RemoteImageFile>(store, PACKS_PREFIX, std::move(resolved.image),
	                                         head_url + " (chain " + std::to_string(state.chain) + " epoch " +
	                                             std::to_string(state.seq) + ")",
	                                         cache, state.overlay);
}

void Follower::Run() {
	// A fixed cadence: checks start one interval apart however long each took, so an idle follower makes
	// exactly one request per interval; after a stall (a slow store) it does not try to catch up.
	auto interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
	    std::chrono::duration<double>(interval_seconds));
	auto due = std::chrono::steady_clock::now() + interval;
	std::unique_lock<std::mutex> guard(lock);
	while (!stopping) {
		wake.wait_until(guard, due, [this]() { return stopping; });
		if (stopping) {
			break;
		}
		guard.unlock();
		CheckOnce();
		guard.lock();
		due += interval;
		auto now = std::chrono::steady_clock::now();
		if (due <= now) {
			due = now + interval;
		}
	}
}

//! The refusal a failed check records: the store's own error, or a head that vanished.
static std::string CheckError(const GetResult &result, const ObjectStore &store, const std::string &key,
                              int64_t snapshot_id) {
	try {
		if (result.outcome.status == ObjectStatus::NOT_FOUND) {
			Fail(ErrorCode::HEAD_NOT_FOUND, "The branch head " + key + " is gone from " + store.Describe() + " (" +
			                                    result.outcome.detail + "). The follower keeps reading snapshot " +
			                                    std::to_string(snapshot_id) +
			                                    "; re-export the branch, or DETACH the follower.");
		}
		FailRemote(result.outcome, store, "checking the branch head " + key);
	} catch (DifferentialError &error) {
		return error.what();
	}
	return "";
}

void Follower::CheckOnce() {
	DuckDBLogScope log(db);
	LogTimer timer;
	std::string known;
	int64_t snapshot_id;
	{
		std::lock_guard<std::mutex> guard(lock);
		known = etag;
		snapshot_id = newest.snapshot_id;
	}
	auto key = head.Key();
	std::optional<std::string> error;
	std::string outcome;
	try {
		if (commits) {
			outcome = CheckEpochs();
			CheckLease();
		} else {
			outcome = CheckHead(key, known, snapshot_id, error);
		}
	} catch (std::exception &failure) {
		// Nothing a check meets stops the follower: it keeps its state and reports the error until a check works.
		error = failure.what();
	}
	auto now = NowUnixMs();
	{
		std::lock_guard<std::mutex> guard(lock);
		last_check_ms = now;
		if (!error) {
			last_ok_ms = now;
		}
		last_error = error;
	}
	if (error) {
		LogWarning("follow_check", alias + " (" + head_url + "): " + *error);
	} else {
		LogEvent("follow_check", timer.ElapsedMs(), alias + " (" + head_url + "): " + outcome);
	}
}

std::string Follower::CheckHead(const std::string &key, const std::string &known, int64_t snapshot_id,
                                std::optional<std::string> &error) {
	auto result = store->GetIfNoneMatch(key, known);
	if (!result.outcome.Ok()) {
		error = CheckError(result, *store, key, snapshot_id);
		return "";
	}
	if (result.not_modified) {
		return "unchanged";
	}
	BranchHead decoded;
	std::string why;
	if (!DecodeHead(result.data, decoded, why) || decoded.database != head.database || decoded.branch != head.branch) {
		Fail(ErrorCode::CORRUPT_HEAD, "The branch head " + key + " at " + store->Describe() +
		                                  " is not a head of that branch" + (why.empty() ? std::string() : ": " + why) +
		                                  ". The follower keeps reading snapshot " + std::to_string(snapshot_id) +
		                                  "; re-export the branch.");
	}
	Adopt(decoded, result.etag);
	return "snapshot " + std::to_string(decoded.snapshot_id);
}

void Follower::Adopt(const BranchHead &decoded, const std::string &new_etag) {
	{
		std::lock_guard<std::mutex> guard(lock);
		if (decoded.descriptor == newest.descriptor) {
			etag = new_etag;
			return;
		}
	}
	// Resolve the whole export before publishing it: a state is offered only once its descriptor and index
	// pages verified. They land in the process cache, so opening the state fetches none of them again.
	RemoteLocator locator;
	locator.kind = RemoteLocator::Kind::DESCRIPTOR;
	locator.store_url = head.store_url;
	locator.descriptor = decoded.descriptor;
	RemoteCache cache(MemoryContentCache::Process(), nullptr);
	auto resolved = ReadExport(*store, locator, cache);
	std::lock_guard<std::mutex> guard(lock);
	newest.generation++;
	newest.descriptor = decoded.descriptor;
	newest.snapshot_id = resolved.descriptor.snapshot_id;
	etag = new_etag;
}

} // namespace differential
