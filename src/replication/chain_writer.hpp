// The writer's side of the epoch chain in the object store: commit epochs (create-only), new chains (base
// export, epoch 1 at a free chain id, then the seal naming it, then the head move) and what a refused
// create-only PUT means (our own retry or earlier epoch, or another writer's: head_conflict). FORMAT §10.4-10.6.
#pragma once

#include "common/logging.hpp"
#include "metadata/shipping_store.hpp"
#include "remote/epoch_format.hpp"
#include "repository/repository.hpp"
#include "storage/object_store.hpp"

#include <memory>
#include <string>

namespace duckdb {
class DatabaseInstance;
}

namespace differential {

//! Where a branch ships to, and with which settings.
struct ShipTarget {
	std::shared_ptr<Repository> repository;
	std::string database;
	std::string branch;
	std::string store_url;
	std::shared_ptr<ObjectStore> store;
	ShipSettings settings;
	//! The failover lease's duration (SET differential_failover = 'lease'); 0: no lease.
	int64_t lease_ms = 0;
	//! Where the async thread's log events go (it outlives no instance: the catalog owns the shipper).
	duckdb::DatabaseInstance *instance = nullptr;
};

//! The main file's published version a new chain starts from.
struct ChainBase {
	std::vector<Hash256> chunks;
	uint64_t length = 0;
};

//! What the last request of a shipper cost, for logs and tests.
struct ShipCounters {
	uint64_t requests = 0;
	uint64_t epochs = 0;
	uint64_t chains = 0;
	uint64_t bytes = 0;
};

//! How many taken chain ids a chain start steps over before giving up (each is an abandoned attempt).
constexpr uint64_t MAX_CHAIN_ID_PROBES = 64;

class ChainWriter {
public:
	//! Loads the branch's shipping state from the metadata.
	explicit ChainWriter(ShipTarget target);

	//! Starts the next chain at `base` with `first` (the WAL since the base's checkpoint and the chunks
	//! changed since) as its epoch 1: exports the base, writes epoch 1 create-only at a chain id nobody
	//! holds, THEN seals the current chain naming it (unless a recovery already sealed it and reserved the
	//! id), then moves the head. `reason` goes into the seal.
	void StartChain(const ChainBase &base, SealReason reason, Epoch &first);
	//! Writes the commit epoch (chain, seq+1) create-only and records it. `epoch` carries the payload;
	//! its place, link and writer are filled in here.
	void PutCommit(Epoch &epoch);
	//! head_conflict when another writer fenced this branch (remembered in the metadata).
	void CheckNotFenced() const;

	const ShipState &State() const {
		return state;
	}
	bool HasChain() const {
		return state.chain != 0 && !IsZeroHash(state.base);
	}
	ShipCounters counters;
	//! Epochs and bytes in the current chain, for the chain limits.
	uint64_t chain_epochs = 0;
	uint64_t chain_bytes = 0;

private:
	//! PUT create-only at (chain, seq+1). On a refusal, reads what is there: returns false when it is our
	//! own earlier commit epoch, or (`follow_own_seal`, a chain start) our own seal (state moved past it,
	//! so the caller retries); throws head_conflict when it is another writer's.
	//! `ours` (a commit epoch): when the key holds our earlier attempt, its WAL bytes are trimmed from `ours`.
	bool PutNext(const std::string &blob, bool follow_own_seal, Epoch *ours = nullptr);
	//! Our commit epoch found at `key`: trims its WAL bytes (a prefix of ours) from `ours`; ship_diverged when
	//! they are not a prefix (they hold a commit DuckDB rolled back here).
	void TrimLanded(const Epoch &there, Epoch &ours, const std::string &key);
	//! PUT create-only at `key`; true when written (or our identical earlier write), else `there` holds
	//! the object in the way.
	bool PutCreateOnly(const std::string &key, const std::string &blob, std::string &there);
	std::string FirstEpochBlob(Epoch &first, uint64_t chain, const Hash256 &base) const;
	//! Writes `first` as epoch 1 of the first free chain id from `from` on; returns the id.
	uint64_t WriteFirstEpoch(uint64_t from, const Hash256 &base, Epoch &first, std::string &blob);
	//! A chain whose id a recovery seal reserved: true when started; false when an earlier attempt of
	//! ours holds its epoch 1 (adopted: the caller seals it and starts the next).
	bool StartReservedChain(const Hash256 &base, Epoch &first);
	Hash256 ExportBase(const ChainBase &base);
	void EnterChain(uint64_t chain, const Hash256 &base, const std::string &first_blob);
	void LogChain(LogTimer &timer, const Hash256 &base, SealReason reason);
	void MoveHead(const Hash256 &base, uint64_t chain);
	//! The head move after a chain start's seal: a failure only leaves the head stale (logged).
	void MoveHeadAfterSeal(const Hash256 &base, uint64_t chain);
	void AdoptReservedChainBase();
	[[noreturn]] void Fenced(const std::string &why);
	void Save();

	ShipTarget target;
	ShipState state;
};

//! The head_conflict a fenced writer gets: the branch was taken over by a recovery elsewhere.
[[noreturn]] void FailFenced(const std::string &database, const std::string &branch, const std::string &why);

} // namespace differential
