// Capturing and shipping WAL epochs. A capture happens at the WAL FileSync, when the WAL and the main
// file are consistent (DuckDB holds its WAL lock); shipping may happen then ('sync') or later ('async'),
// from what was captured, so a later checkpoint can never mix into an epoch.
#include "replication/wal_shipper.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "export/snapshot_export.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/sync_observer.hpp"

#include <atomic>
#include <map>
#include <optional>

namespace differential {

WalShipper::WalShipper(ShipTarget target_p) : target(std::move(target_p)), writer(target) {
	fenced = writer.State().fenced;
	if (target.lease_ms > 0 && !fenced) {
		LeaseRecord mine;
		mine.database = target.database;
		mine.branch = target.branch;
		mine.holder = target.settings.writer;
		mine.duration_ms = target.lease_ms;
		mine.ship_wal = target.settings.mode;
		mine.ship_interval = target.settings.interval_s;
		lease = std::make_shared<LeaseKeeper>(std::make_shared<Lease>(target.store, mine, true), target.instance);
	}
	if (target.settings.mode == "async") {
		thread.Start("diff-ship", [this]() { Run(); });
	}
}

WalShipper::~WalShipper() {
	if (thread.Running()) {
		{
			std::lock_guard<std::mutex> guard(capture_lock);
			stopping = true;
		}
		wake.notify_all();
		thread.Join();
	}
}

ShipCounters WalShipper::Counters() {
	std::lock_guard<std::mutex> guard(ship_lock);
	return writer.counters;
}

WalShipper::Status WalShipper::Describe() {
	Status status;
	status.database = target.database;
	status.branch = target.branch;
	status.mode = target.settings.mode;
	status.interval_s = target.settings.interval_s;
	{
		std::lock_guard<std::mutex> guard(capture_lock);
		status.pending = pending.size();
	}
	std::lock_guard<std::mutex> guard(ship_lock);
	status.state = writer.State();
	status.state.fenced = status.state.fenced || fenced;
	status.counters = writer.counters;
	if (auto keeper = CurrentLease()) {
		status.lease = keeper->Describe();
	} else if (target.lease_ms > 0) {
		status.lease = "given up (fenced)";
	}
	return status;
}

ChainBase WalShipper::PublishedBase(VersionedFile &main) {
	auto &catalog = *target.repository->storage->catalog;
	StoredFile stored;
	ChainBase base;
	if (catalog.LoadFile(main.Address(), stored)) {
		base.chunks = PublishedChunkHashes(catalog, stored);
		base.length = stored.length;
	}
	return base;
}

WalShipper::Capture WalShipper::CaptureLocked(VersionedFile &wal, VersionedFile &main) {
	Capture capture;
	auto current = main.CurrentChunkHashes();
	auto wal_length = wal.Length();
	bool header_changed = cursor.started && !current.empty() && current[0] != cursor.base_header;
	bool limit = cursor.epochs >= CHAIN_MAX_EPOCHS || cursor.bytes >= CHAIN_MAX_BYTES;
	if (!cursor.started || wal_length < cursor.wal_end || header_changed || limit) {
		// A new chain: the main file as published (its header is the last checkpoint's), and the whole
		// WAL since that checkpoint as its first epoch.
		capture.new_chain = true;
		capture.reason = limit && !header_changed ? SealReason::LIMIT : SealReason::CHECKPOINT;
		capture.base = PublishedBase(main);
		cursor = Cursor();
		cursor.started = true;
		cursor.chunks = capture.base.chunks;
		cursor.base_header = capture.base.chunks.empty() ? Hash256 {} : capture.base.chunks[0];
	}
	auto &epoch = capture.epoch;
	epoch.wal_offset = cursor.wal_end;
	if (wal_length > cursor.wal_end) {
		epoch.wal.resize(wal_length - cursor.wal_end);
		auto got = wal.Read(&epoch.wal[0], epoch.wal.size(), cursor.wal_end);
		epoch.wal.resize(got);
	}
	auto file_length = main.Length();
	epoch.file_length = file_length;
	cursor.chunks.resize(std::max(cursor.chunks.size(), current.size()));
	for (uint64_t i = 0; i < current.size(); i++) {
		if (IsZeroHash(current[i]) || current[i] == cursor.chunks[i] || ChunkStart(i) >= file_length) {
			continue;
		}
		EpochChunk chunk;
		chunk.index = i;
		chunk.bytes.resize(std::min(ChunkCapacity(i), file_length - ChunkStart(i)));
		chunk.bytes.resize(main.Read(&chunk.bytes[0], chunk.bytes.size(), ChunkStart(i)));
		// Hash what was read: a concurrent write may have replaced the chunk since the hashes were taken.
		chunk.sha256 = Sha256(chunk.bytes.data(), chunk.bytes.size());
		cursor.chunks[i] = chunk.sha256;
		epoch.chunks.push_back(std::move(chunk));
	}
	cursor.wal_end = epoch.WalEnd();
	if (capture.HasPayload()) {
		cursor.epochs++;
		cursor.bytes += epoch.wal.size();
		for (auto &chunk : epoch.chunks) {
			cursor.bytes += chunk.bytes.size();
		}
	}
	return capture;
}

//! Folds `next` (captured after `into`, in the same chain) into `into`: one epoch for both.
static void Fold(Epoch &into, Epoch &next) {
	std::map<uint64_t, size_t> at;
	for (size_t i = 0; i < into.chunks.size(); i++) {
		at[into.chunks[i].index] = i;
	}
	into.wal += next.wal;
	into.file_length = next.file_length;
	for (auto &chunk : next.chunks) {
		auto found = at.find(chunk.index);
		if (found != at.end()) {
			into.chunks[found->second] = std::move(chunk);
		} else {
			at[chunk.index] = into.chunks.size();
			into.chunks.push_back(std::move(chunk));
		}
	}
}

void WalShipper::Ship(std::deque<Capture> &items) {
	// 'async' folds what the interval captured into one epoch per chain (one PUT per interval).
	std::deque<Capture> folded;
	for (auto &item : items) {
		if (!folded.empty() && !item.new_chain) {
			Fold(folded.back().epoch, item.epoch);
		} else {
			folded.push_back(std::move(item));
		}
	}
	items = std::move(folded);
	while (!items.empty()) {
		auto &item = items.front();
		if (item.new_chain) {
			// The chain's first epoch carries the capture's payload (even an empty one): it is written before
			// the seal that names the chain.
			writer.StartChain(item.base, item.reason, item.epoch);
		} else if (item.HasPayload()) {
			writer.PutCommit(item.epoch);
		}
		items.pop_front();
	}
}

std::shared_ptr<LeaseKeeper> WalShipper::CurrentLease() {
	std::lock_guard<std::mutex> guard(lease_lock);
	return lease;
}

void WalShipper::DropLease() {
	std::shared_ptr<LeaseKeeper> dropped;
	{
		std::lock_guard<std::mutex> guard(lease_lock);
		dropped = std::move(lease);
	}
	// Destroyed here, outside the lock: it joins the keeper's thread (a renewal in flight finishes first).
}

void WalShipper::CheckLease() {
	auto lease = CurrentLease();
	if (lease && lease->Lost()) {
		FailFenced(target.database, target.branch,
		           "a standby took over its failover lease (" + lease->Describe() +
		               ") and recovers the branch; its recovery seal fences this leader");
	}
}

void WalShipper::OnWalSync(VersionedFile &wal, VersionedFile &main) {
	CheckLease();
	if (target.settings.mode != "sync") {
		if (fenced) {
			FailFenced(target.database, target.branch, "a recovery sealed its WAL chain");
		}
		std::lock_guard<std::mutex> guard(capture_lock);
		pending.push_back(CaptureLocked(wal, main));
		return;
	}
	std::lock_guard<std::mutex> ship(ship_lock);
	writer.CheckNotFenced();
	Cursor saved;
	std::deque<Capture> items;
	{
		std::lock_guard<std::mutex> guard(capture_lock);
		saved = cursor;
		items.push_back(CaptureLocked(wal, main));
	}
	try {
		Ship(items);
	} catch (DifferentialError &) {
		if (writer.State().fenced) {
			DropLease();
		}
		// DuckDB reverts the commit whose FileSync failed: capture it again from where this one started.
		std::lock_guard<std::mutex> guard(capture_lock);
		cursor = saved;
		throw;
	} catch (...) {
		std::lock_guard<std::mutex> guard(capture_lock);
		cursor = saved;
		throw;
	}
}

void WalShipper::Run() {
	std::optional<DuckDBLogScope> log;
	if (target.instance) {
		log.emplace(*target.instance);
	}
	auto interval = std::chrono::seconds(std::max<int64_t>(1, target.settings.interval_s));
	std::unique_lock<std::mutex> guard(capture_lock);
	while (true) {
		wake.wait_for(guard, interval, [&]() { return stopping; });
		if (pending.empty()) {
			if (stopping) {
				return;
			}
			continue;
		}
		auto items = std::move(pending);
		pending.clear();
		guard.unlock();
		try {
			std::lock_guard<std::mutex> ship(ship_lock);
			Ship(items);
		} catch (DifferentialError &error) {
			if (error.code == ErrorCode::HEAD_CONFLICT || error.code == ErrorCode::SHIP_DIVERGED) {
				fenced = true;
			}
			std::lock_guard<std::mutex> ship(ship_lock);
			if (writer.State().fenced) {
				DropLease();
			}
			LogWarning("ship_failed", std::string(error.what()) + " (the commits stay local; retried next interval)");
		} catch (std::exception &error) {
			LogWarning("ship_failed", std::string(error.what()) + " (the commits stay local; retried next interval)");
		}
		guard.lock();
		if (!items.empty() && !fenced) {
			// Keep order: what failed goes before what was captured meanwhile.
			for (auto it = items.rbegin(); it != items.rend(); ++it) {
				pending.push_front(std::move(*it));
			}
		}
		if (stopping && (pending.empty() || !items.empty())) {
			return;
		}
	}
}

static std::mutex registry_lock;
static std::map<std::string, std::weak_ptr<WalShipper>> &Shippers() {
	static auto *shippers = new std::map<std::string, std::weak_ptr<WalShipper>>();
	return *shippers;
}
//! Entries of Shippers() (live or not yet pruned), readable without the lock: zero means no sync is shipped.
static std::atomic<size_t> registered_shippers {0};

//! Drops the entries whose shipper is gone; under registry_lock.
static void PruneShippersLocked() {
	for (auto it = Shippers().begin(); it != Shippers().end();) {
		it = it->second.expired() ? Shippers().erase(it) : std::next(it);
	}
	registered_shippers = Shippers().size();
}

void RegisterShipper(const std::string &owner_key, const std::shared_ptr<WalShipper> &shipper) {
	std::lock_guard<std::mutex> guard(registry_lock);
	Shippers()[owner_key] = shipper;
	PruneShippersLocked();
}

std::vector<WalShipper::Status> ShipperStatuses() {
	std::vector<std::shared_ptr<WalShipper>> alive;
	{
		std::lock_guard<std::mutex> guard(registry_lock);
		for (auto &entry : Shippers()) {
			if (auto shipper = entry.second.lock()) {
				alive.push_back(shipper);
			}
		}
	}
	std::vector<WalShipper::Status> out;
	for (auto &shipper : alive) {
		out.push_back(shipper->Describe());
	}
	return out;
}

//! Routes the WAL syncs of registered branches to their shipper; every other sync passes by.
class ShippingObserver : public SyncObserver {
public:
	void AfterSync(const FileAddress &address, VersionedFile &file, VersionedFile *main_file) override {
		if (!main_file || address.file_name != std::string(MAIN_FILE_NAME) + ".wal") {
			return;
		}
		std::shared_ptr<WalShipper> shipper;
		{
			std::lock_guard<std::mutex> guard(registry_lock);
			auto found = Shippers().find(address.OwnerKey());
			if (found == Shippers().end()) {
				return;
			}
			shipper = found->second.lock();
			if (!shipper) {
				Shippers().erase(found);
				registered_shippers = Shippers().size();
				return;
			}
		}
		shipper->OnWalSync(file, *main_file);
	}
	bool Watching() const override {
		return registered_shippers.load() > 0;
	}
};

void InstallWalShipping() {
	InstallSyncObserver(std::make_shared<ShippingObserver>());
}

} // namespace differential
