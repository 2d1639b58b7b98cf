// Reading shipped WAL epochs back: one step at a time from a position in a chain (a follower polls with
// it), or to the tip (recovery), verifying the hash chain and following seals into successor chains.
#pragma once

#include "remote/epoch_format.hpp"
#include "remote/export_format.hpp"
#include "storage/object_store.hpp"

#include <functional>
#include <map>

namespace differential {

//! Where a reader stands: the last epoch it read in `chain` (0: none yet) and the hash the next epoch
//! must link to (the chain's base descriptor while seq is 0).
struct ChainPosition {
	std::string database;
	std::string branch;
	uint64_t chain = 0;
	Hash256 base {};
	uint64_t seq = 0;
	Hash256 link {};
	//! True after a recovery seal of an earlier version, which named no successor base: nothing to read
	//! until the new leader moves the head (ReadNextEpoch then re-reads the head). Seals written now
	//! always name the successor's base, whose epoch 1 exists before the seal.
	bool awaiting_base = false;
	uint64_t awaiting_chain = 0;

	//! The start of the chain the head names. Refuses (not_shipping) a head without a chain.
	static ChainPosition FromHead(const BranchHead &head);
};

//! What one step found.
struct ChainStep {
	enum class Kind {
		NONE,   //! nothing after the position yet (one GET that found no object)
		COMMIT, //! a commit epoch; the position moved to it
		SEAL    //! a seal; the position moved to the successor chain's start (or awaits its base)
	};
	Kind kind = Kind::NONE;
	Epoch epoch;
	Hash256 hash {}; //! of the epoch object
	uint64_t bytes = 0;
};

//! One GET of the epoch after `pos`, verified (its checksum, its place, its link to `pos`). A seal whose
//! successor base is unknown makes the next call read the head instead. Refusals: corrupt_epoch (damaged
//! or not linked: the chain cannot be trusted past `pos`), and the request errors of FailRemote.
ChainStep ReadNextEpoch(ObjectStore &store, ChainPosition &pos);

//! The state a chain position stands for: the base descriptor, the main file's chunks changed since
//! the base (later epochs win), the WAL bytes since the base, and the main file's length.
struct ChainState {
	uint64_t chain = 0;
	Hash256 base {};
	uint64_t seq = 0;
	std::map<uint64_t, EpochChunk> chunks;
	std::string wal;
	uint64_t file_length = 0;
	//! True when no epoch was applied to the base (file_length is then the base's).
	bool Empty() const {
		return seq == 0;
	}
	//! Applies a verified commit epoch of this chain, or starts over at a seal's successor.
	void Apply(const ChainStep &step, const ChainPosition &after);
};

//! Reads from `pos` to the tip (until a GET finds nothing), calling `visit` for every step, and keeps
//! `state` in step. Returns the number of epochs read.
uint64_t WalkToTip(ObjectStore &store, ChainPosition &pos, ChainState &state,
                   const std::function<void(const ChainStep &)> &visit = nullptr);

} // namespace differential
