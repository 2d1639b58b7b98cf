// WAL shipping of one attached branch: at each WAL FileSync (the commit's durability point) it captures
// what was appended and which main-file chunks changed; 'sync' ships it before the FileSync returns,
// 'async' leaves it to a thread that ships every SHIP_INTERVAL seconds (nothing when idle).
#pragma once

#include "common/background_thread.hpp"
#include "replication/chain_writer.hpp"
#include "replication/lease.hpp"
#include "storage/versioned_file.hpp"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace differential {

class WalShipper {
public:
	explicit WalShipper(ShipTarget target);
	//! Stops the thread after shipping what is pending (a failure is logged: the commits are local).
	~WalShipper();
	WalShipper(const WalShipper &) = delete;
	WalShipper &operator=(const WalShipper &) = delete;

	//! At the WAL's durability point, on DuckDB's thread. Throws (failing the commit) in 'sync' mode
	//! when the epoch could not be shipped, and in any mode once another writer fenced the branch.
	void OnWalSync(VersionedFile &wal, VersionedFile &main);
	ShipCounters Counters();
	//! What differential_shipping() shows of this shipper.
	struct Status {
		std::string database;
		std::string branch;
		std::string mode;
		int64_t interval_s = 0;
		ShipState state;
		ShipCounters counters;
		uint64_t pending = 0;
		std::string lease = "off";
	};
	Status Describe();

private:
	//! What one WAL sync captured: a new chain to start first (when `base` is set), then a commit payload.
	struct Capture {
		bool new_chain = false;
		SealReason reason = SealReason::CHECKPOINT;
		ChainBase base;
		Epoch epoch;
		bool HasPayload() const {
			return !epoch.wal.empty() || !epoch.chunks.empty();
		}
	};
	//! Where capturing stands: the WAL bytes and main-file chunks already captured, and the chain base's
	//! header chunk (a checkpoint rewrites it).
	struct Cursor {
		bool started = false;
		uint64_t wal_end = 0;
		std::vector<Hash256> chunks;
		Hash256 base_header {};
		uint64_t epochs = 0;
		uint64_t bytes = 0;
	};

	Capture CaptureLocked(VersionedFile &wal, VersionedFile &main);
	ChainBase PublishedBase(VersionedFile &main);
	void Ship(std::deque<Capture> &items);
	void Run();
	//! head_conflict once a standby took the lease over: it is recovering the branch, and its seal fences us.
	void CheckLease();
	std::shared_ptr<LeaseKeeper> CurrentLease();
	//! A fenced writer gives the lease up (stops renewing): it can never ship again, and a lease it kept
	//! renewing would keep every standby from taking over.
	void DropLease();

	ShipTarget target;
	std::mutex ship_lock; //! one shipment at a time (held across requests)
	ChainWriter writer;
	std::mutex capture_lock;
	Cursor cursor;
	std::deque<Capture> pending;
	std::condition_variable wake;
	bool stopping = false;
	std::atomic<bool> fenced {false};
	BackgroundThread thread;
	std::mutex lease_lock; //! guards the pointer only
	std::shared_ptr<LeaseKeeper> lease;
};

//! Makes `shipper` receive the WAL syncs of the branch file owner `owner_key` (FileAddress::OwnerKey())
//! while it lives; the registry holds it weakly.
void RegisterShipper(const std::string &owner_key, const std::shared_ptr<WalShipper> &shipper);
//! The shippers alive in this process, for differential_shipping().
std::vector<WalShipper::Status> ShipperStatuses();
//! Installs the storage sync observer that routes WAL syncs to registered shippers (once per process).
void InstallWalShipping();

} // namespace differential
