// The epoch chain reader: GET (chain, seq+1); 404 means the tip; a commit moves the position, a seal moves
// it into the successor chain. Every object is checked before anything is taken from it.
#include "remote/epoch_chain.hpp"

#include "common/errors.hpp"

namespace differential {

ChainPosition ChainPosition::FromHead(const BranchHead &head) {
	if (head.chain == 0) {
		Fail(ErrorCode::NOT_SHIPPING,
		     "The head of " + head.database + "/" + head.branch +
		         " names no WAL chain: the database does not ship its WAL. Attach it with SHIP_WAL 'sync' or "
		         "'async' on its writer, or read its exported snapshots instead.");
	}
	ChainPosition pos;
	pos.database = head.database;
	pos.branch = head.branch;
	pos.chain = head.chain;
	pos.base = head.chain_base;
	pos.link = head.chain_base;
	return pos;
}

//! After a recovery seal: the successor's base comes from the head once the new leader moved it.
static bool ResolveAwaitedBase(ObjectStore &store, ChainPosition &pos) {
	auto key = HeadKey(pos.database, pos.branch);
	auto got = store.Get(key);
	if (!got.outcome.Ok()) {
		FailRemote(got.outcome, store, "reading the head " + key);
	}
	BranchHead head;
	std::string why;
	if (!DecodeHead(got.data, head, why)) {
		Fail(ErrorCode::CORRUPT_HEAD, "The head " + key + " in " + store.Describe() + " is damaged: " + why +
		                                  ". Ask the writer to move it again.");
	}
	if (head.chain != pos.awaiting_chain) {
		return false;
	}
	pos.chain = head.chain;
	pos.base = head.chain_base;
	pos.link = head.chain_base;
	pos.seq = 0;
	pos.awaiting_base = false;
	return true;
}

[[noreturn]] static void FailCorrupt(const ObjectStore &store, const std::string &key, const std::string &why) {
	Fail(ErrorCode::CORRUPT_EPOCH,
	     "The epoch " + key + " in " + store.Describe() + " cannot be used: " + why +
	         ". Nothing after the last good epoch was applied; recover from the last good state, or restore the "
	         "object from a bucket backup.");
}

ChainStep ReadNextEpoch(ObjectStore &store, ChainPosition &pos) {
	ChainStep step;
	if (pos.awaiting_base && !ResolveAwaitedBase(store, pos)) {
		return step;
	}
	auto key = EpochKey(pos.database, pos.branch, pos.chain, pos.seq + 1);
	auto got = store.Get(key);
	if (got.outcome.status == ObjectStatus::NOT_FOUND) {
		return step;
	}
	if (!got.outcome.Ok()) {
		FailRemote(got.outcome, store, "reading the epoch " + key);
	}
	std::string why;
	if (!DecodeEpoch(got.data, step.epoch, why) ||
	    !VerifyEpoch(step.epoch, pos.database, pos.branch, pos.chain, pos.seq + 1, pos.link, why)) {
		FailCorrupt(store, key, why);
	}
	step.hash = EpochHash(got.data);
	step.bytes = got.data.size();
	if (step.epoch.kind == EpochKind::COMMIT) {
		step.kind = ChainStep::Kind::COMMIT;
		pos.seq++;
		pos.link = step.hash;
		return step;
	}
	step.kind = ChainStep::Kind::SEAL;
	pos.seq = 0;
	if (IsZeroHash(step.epoch.successor_base)) {
		pos.awaiting_base = true;
		pos.awaiting_chain = step.epoch.successor_chain;
		return step;
	}
	pos.chain = step.epoch.successor_chain;
	pos.base = step.epoch.successor_base;
	pos.link = step.epoch.successor_base;
	return step;
}

void ChainState::Apply(const ChainStep &step, const ChainPosition &after) {
	if (step.kind == ChainStep::Kind::SEAL && after.awaiting_base) {
		// A recovery seal: the state stays the sealed chain's tip until the successor has a base.
		return;
	}
	if (step.kind == ChainStep::Kind::SEAL || chain != after.chain) {
		chain = after.chain;
		base = after.base;
		seq = 0;
		chunks.clear();
		wal.clear();
		file_length = 0;
	}
	if (step.kind != ChainStep::Kind::COMMIT) {
		return;
	}
	auto &epoch = step.epoch;
	// Epochs carry the WAL from where the previous one ended; a gap would replay a WAL with a hole.
	if (epoch.wal_offset != wal.size()) {
		Fail(ErrorCode::CORRUPT_EPOCH, "The epoch " + EpochKey(epoch.database, epoch.branch, epoch.chain, epoch.seq) +
		                                   " starts its WAL at " + std::to_string(epoch.wal_offset) +
		                                   " but the chain's WAL ends at " + std::to_string(wal.size()) +
		                                   ". Recover from the last good state.");
	}
	wal += epoch.wal;
	for (auto &chunk : epoch.chunks) {
		chunks[chunk.index] = chunk;
	}
	file_length = epoch.file_length;
	seq = epoch.seq;
}

uint64_t WalkToTip(ObjectStore &store, ChainPosition &pos, ChainState &state,
                   const std::function<void(const ChainStep &)> &visit) {
	uint64_t read = 0;
	if (state.chain != pos.chain) {
		state.chain = pos.chain;
		state.base = pos.base;
	}
	while (true) {
		bool was_awaiting = pos.awaiting_base;
		auto step = ReadNextEpoch(store, pos);
		if (step.kind == ChainStep::Kind::NONE) {
			if (was_awaiting && !pos.awaiting_base) {
				state.Apply(step, pos);
				continue;
			}
			return read;
		}
		read++;
		state.Apply(step, pos);
		if (visit) {
			visit(step);
		}
	}
}

} // namespace differential
