// The writer's side of the epoch chain in the object store: commit epochs (create-only), new chains
// (base export, seal, head move) and what a refused create-only PUT means (our own retry, our own
// earlier epoch, or another writer's seal: head_conflict). docs/FORMAT.md §10.4-10.6.
#pragma once

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

class ChainWriter {
public:
	//! Loads the branch's shipping state from the metadata.
	explicit ChainWriter(ShipTarget target);

	//! Starts the next chain at `base`: exports it, seals the current chain (unless a recovery already
	//! sealed it) and moves the head. `reason` goes into the seal.
	void StartChain(const ChainBase &base, SealReason reason);
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
	bool PutNext(const std::string &blob, bool follow_own_seal);
	void MoveHead(const Hash256 &base, uint64_t chain);
	void AdoptReservedChainBase();
	[[noreturn]] void Fenced(const std::string &why);
	void Save();

	ShipTarget target;
	ShipState state;
};

//! The head_conflict a fenced writer gets: the branch was taken over by a recovery elsewhere.
[[noreturn]] void FailFenced(const std::string &database, const std::string &branch, const std::string &why);

} // namespace differential
