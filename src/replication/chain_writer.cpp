// Writing the epoch chain: every object create-only, so each (chain, seq) is written once; the head is
// only a hint moved with If-Match. A refused PUT is read back to learn who holds the key.
#include "replication/chain_writer.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/fault_points.hpp"
#include "common/logging.hpp"
#include "export/export_pending.hpp"
#include "export/snapshot_export.hpp"
#include "remote/export_format.hpp"
#include "remote/object_key.hpp"

#include <chrono>

namespace differential {

void FailFenced(const std::string &database, const std::string &branch, const std::string &why) {
	Fail(ErrorCode::HEAD_CONFLICT,
	     "Branch " + database + "/" + branch + " was taken over by another writer (" + why +
	         "), so this database no longer ships its WAL and this commit was not applied (DuckDB rolled it "
	         "back); earlier commits stay in the local database. To keep this copy, attach it with SHIP_WAL 'off' "
	         "(and clone it under a new name to publish it); to continue the branch, recover a fresh copy with "
	         "differential_recover_branch().");
}

ChainWriter::ChainWriter(ShipTarget target_p) : target(std::move(target_p)) {
	auto stored = target.repository->metadata->shipping.State(target.database, target.branch);
	if (stored) {
		state = *stored;
	}
}

void ChainWriter::Save() {
	target.repository->metadata->shipping.SetState(target.database, target.branch, state);
}

void ChainWriter::CheckNotFenced() const {
	if (state.fenced) {
		FailFenced(target.database, target.branch,
		           "shipping stopped earlier: a recovery sealed its WAL chain, or its shipped history diverged from "
		           "its WAL");
	}
}

void ChainWriter::Fenced(const std::string &why) {
	state.fenced = true;
	Save();
	LogWarning("ship_fenced", target.database + "/" + target.branch + ": " + why);
	FailFenced(target.database, target.branch, why);
}

bool ChainWriter::PutCreateOnly(const std::string &key, const std::string &blob, std::string &there) {
	auto &store = *target.store;
	counters.requests++;
	auto result = store.Put(PutOf(key, blob, PutCondition::CreateOnly()));
	// Tests: the PUT landed but its answer was lost (a 5xx or a cut connection after the store applied it);
	// `unconfirmed`: and the store stays unreachable for the GET that would tell.
	bool unconfirmed = result.outcome.Ok() && InjectedFault("ship.epoch_put_unconfirmed");
	if (unconfirmed || (result.outcome.Ok() && InjectedFault("ship.epoch_put_answer"))) {
		result.outcome.status = ObjectStatus::TRANSIENT;
		result.outcome.detail = "injected: the answer to a PUT that landed was lost";
	}
	if (result.outcome.Ok()) {
		counters.bytes += blob.size();
		return true;
	}
	if (result.outcome.status != ObjectStatus::PRECONDITION_FAILED && result.outcome.status != ObjectStatus::CONFLICT) {
		// On doubt, read: the PUT may have landed (the answer was lost), and then the commit is shipped.
		counters.requests++;
		auto check = unconfirmed ? GetResult {result.outcome, {}, {}} : store.Get(key);
		if (check.outcome.Ok() && check.data == blob) {
			counters.bytes += blob.size();
			return true;
		}
		FailRemote(result.outcome, store, "shipping the epoch " + key);
	}
	counters.requests++;
	auto got = store.Get(key);
	if (!got.outcome.Ok()) {
		FailRemote(got.outcome, store, "reading the epoch " + key + " another PUT holds");
	}
	there = std::move(got.data);
	return there == blob; // identical: our own write, whose answer was lost
}

bool ChainWriter::PutNext(const std::string &blob, bool follow_own_seal, Epoch *ours) {
	auto key = EpochKey(target.database, target.branch, state.chain, state.seq + 1);
	std::string got;
	if (PutCreateOnly(key, blob, got)) {
		return true;
	}
	Epoch there;
	std::string why;
	if (!DecodeEpoch(got, there, why) ||
	    !VerifyEpoch(there, target.database, target.branch, state.chain, state.seq + 1, state.link, why)) {
		Fenced("the object at " + key + " is not a valid continuation of this chain: " + why);
	}
	if (there.writer != target.settings.writer || (there.kind == EpochKind::SEAL && !follow_own_seal)) {
		Fenced(std::string("a ") + (there.kind == EpochKind::SEAL ? SealReasonName(there.reason) : "commit") +
		       " epoch of writer " + there.writer + " holds " + key);
	}
	if (there.kind == EpochKind::SEAL) {
		// Our own seal of a chain start that a crash cut short: continue in the chain it names (its first
		// epoch exists: a seal is written after it).
		state.chain = there.successor_chain;
		state.seq = 0;
		state.base = there.successor_base;
		state.link = there.successor_base;
		Save();
		return false;
	}
	if (ours) {
		TrimLanded(there, *ours, key);
	}
	// An epoch this database wrote before a crash, or whose answer was lost, which the metadata never recorded:
	// step past it.
	state.seq++;
	state.link = EpochHash(got);
	Save();
	return false;
}

std::string ChainWriter::FirstEpochBlob(Epoch &first, uint64_t chain, const Hash256 &base) const {
	first.kind = EpochKind::COMMIT;
	first.database = target.database;
	first.branch = target.branch;
	first.writer = target.settings.writer;
	first.chain = chain;
	first.seq = 1;
	first.previous = base;
	return EncodeEpoch(first);
}

uint64_t ChainWriter::WriteFirstEpoch(uint64_t from, const Hash256 &base, Epoch &first, std::string &blob) {
	// A chain id is taken by whoever creates its epoch 1. One that exists belongs to another attempt (a
	// crashed chain start, whose orphan no seal names, or another writer): try the next id.
	for (uint64_t chain = from; chain < from + MAX_CHAIN_ID_PROBES; chain++) {
		blob = FirstEpochBlob(first, chain, base);
		std::string there;
		if (PutCreateOnly(EpochKey(target.database, target.branch, chain, 1), blob, there)) {
			CrashPoint("ship.after_first_epoch_put");
			return chain;
		}
	}
	Fail(ErrorCode::HEAD_CONFLICT,
	     "Chain ids " + std::to_string(from) + " to " + std::to_string(from + MAX_CHAIN_ID_PROBES - 1) + " of " +
	         target.database + "/" + target.branch + " in " + target.store->Describe() +
	         " are all taken, so no new WAL chain can start: another writer keeps starting chains on this branch. "
	         "Stop it (or recover the branch with differential_recover_branch()), then commit again.");
}

void ChainWriter::TrimLanded(const Epoch &there, Epoch &ours, const std::string &key) {
	// Ours only if its WAL bytes are a prefix of what we ship now, from the same offset: an earlier attempt
	// (its answer lost) with fewer commits. Otherwise the bytes there belong to a commit DuckDB rolled back
	// here after its PUT failed (the PUT landed all the same): the local WAL no longer continues the shipped
	// history, and shipping past it would write the same WAL offset twice.
	bool prefix = there.wal_offset == ours.wal_offset && there.wal.size() <= ours.wal.size() &&
	              ours.wal.compare(0, there.wal.size(), there.wal) == 0;
	if (!prefix) {
		state.fenced = true;
		Save();
		LogWarning("ship_diverged", target.database + "/" + target.branch + ": " + key);
		Fail(ErrorCode::SHIP_DIVERGED,
		     "The epoch " + key + " in " + target.store->Describe() +
		         " holds WAL bytes of a commit whose COMMIT failed here (its PUT landed but the answer was lost, "
		         "and DuckDB rolled the commit back), so this database no longer continues its shipped history and "
		         "stops shipping; this commit was not applied. The branch in S3 is intact and includes that commit: "
		         "recover it with differential_recover_branch(), or keep this copy by attaching it with SHIP_WAL "
		         "'off'.");
	}
	ours.wal.erase(0, there.wal.size());
	ours.wal_offset += there.wal.size();
}

void ChainWriter::PutCommit(Epoch &epoch) {
	CheckNotFenced();
	LogTimer timer;
	epoch.kind = EpochKind::COMMIT;
	epoch.database = target.database;
	epoch.branch = target.branch;
	epoch.writer = target.settings.writer;
	std::string blob;
	CrashPoint("ship.before_epoch_put");
	for (bool first = true;; first = false) {
		if (!first && epoch.wal.empty() && epoch.chunks.empty()) {
			Save();
			return; // the epoch an earlier attempt landed carried all of it
		}
		epoch.chain = state.chain;
		epoch.seq = state.seq + 1;
		epoch.previous = state.link;
		blob = EncodeEpoch(epoch);
		if (PutNext(blob, false, &epoch)) {
			break;
		}
	}
	CrashPoint("ship.after_epoch_put");
	state.seq++;
	state.link = EpochHash(blob);
	Save();
	counters.epochs++;
	chain_epochs++;
	chain_bytes += blob.size();
	LogEvent("ship_epoch", timer.ElapsedMs(),
	         EpochKey(target.database, target.branch, state.chain, state.seq) + " " + std::to_string(blob.size()) +
	             " bytes, " + std::to_string(epoch.wal.size()) + " WAL bytes, " + std::to_string(epoch.chunks.size()) +
	             " chunks");
}

void ChainWriter::MoveHead(const Hash256 &base, uint64_t chain) {
	auto &store = *target.store;
	auto key = HeadKey(target.database, target.branch);
	for (int attempt = 0; attempt < 4; attempt++) {
		counters.requests++;
		auto got = store.Get(key);
		BranchHead head;
		PutCondition condition = PutCondition::CreateOnly();
		if (got.outcome.Ok()) {
			std::string why;
			if (!DecodeHead(got.data, head, why)) {
				Fail(
				    ErrorKind::IO, ErrorCode::CORRUPT_HEAD,
				    "The head " + key + " in " + store.Describe() + " is damaged (" + why +
				        "), so the WAL chain cannot be published. Restore it from a bucket backup, then commit again.");
			}
			if (head.chain > chain ||
			    (head.chain == chain && head.chain_base != base && !IsZeroHash(head.chain_base))) {
				Fenced("the head " + key + " names chain " + std::to_string(head.chain) + " of another writer");
			}
			condition = PutCondition::IfMatch(got.etag);
		} else if (got.outcome.status == ObjectStatus::NOT_FOUND) {
			head.database = target.database;
			head.branch = target.branch;
			head.descriptor = base; // no snapshot exported yet: remote readers see the base
		} else {
			FailRemote(got.outcome, store, "reading the head " + key);
		}
		head.chain = chain;
		head.chain_base = base;
		auto text = EncodeHead(head);
		counters.requests++;
		auto result = store.Put(PutOf(key, text, condition));
		if (result.outcome.Ok()) {
			PublishedHead record {head.snapshot_id, head.descriptor, result.etag};
			record.chain = chain;
			record.chain_base = base;
			target.repository->metadata->remote.RecordHead(target.store_url, target.database, target.branch, record);
			return;
		}
		if (result.outcome.status != ObjectStatus::PRECONDITION_FAILED &&
		    result.outcome.status != ObjectStatus::CONFLICT && result.outcome.status != ObjectStatus::NOT_FOUND) {
			FailRemote(result.outcome, store, "moving the head " + key);
		}
		// The head moved meanwhile (a snapshot export of this database): read it again.
	}
	Fail(ErrorCode::HEAD_CONFLICT,
	     "The head " + HeadKey(target.database, target.branch) + " in " + target.store->Describe() +
	         " kept changing while the WAL chain was published; the epochs are safe (readers follow the seal). "
	         "Commit again to retry.");
}

void ChainWriter::AdoptReservedChainBase() {
	// A chain reserved by our recovery seal whose base an earlier attempt (cut short by a crash) already
	// published in the head: continue that chain (its epochs are ours) instead of giving it a second base.
	auto key = HeadKey(target.database, target.branch);
	counters.requests++;
	auto got = target.store->Get(key);
	if (!got.outcome.Ok()) {
		return; // no head to adopt from; MoveHead reports a store failure
	}
	BranchHead head;
	std::string why;
	if (DecodeHead(got.data, head, why) && head.chain == state.chain && !IsZeroHash(head.chain_base)) {
		state.base = head.chain_base;
		state.link = head.chain_base;
		state.seq = 0;
		Save();
	}
}

bool ChainWriter::StartReservedChain(const Hash256 &base, Epoch &first) {
	// The id is fixed by the recovery seal, so epoch 1 goes there, then the head gives readers its base.
	std::string blob = FirstEpochBlob(first, state.chain, base);
	std::string got;
	auto key = EpochKey(target.database, target.branch, state.chain, 1);
	if (PutCreateOnly(key, blob, got)) {
		CrashPoint("ship.after_first_epoch_put");
		MoveHead(base, state.chain);
		EnterChain(state.chain, base, blob);
		return true;
	}
	// An earlier attempt of ours (a crash before the head move) wrote epoch 1 on another base: adopt that
	// chain and publish it, then the caller seals it and starts a fresh one from this base.
	Epoch there;
	std::string why;
	if (!DecodeEpoch(got, there, why) || there.kind != EpochKind::COMMIT || there.chain != state.chain ||
	    there.seq != 1 || there.writer != target.settings.writer) {
		Fenced("the object at " + key + " is not this writer's first epoch of the chain its recovery reserved" +
		       (why.empty() ? "" : ": " + why));
	}
	state.base = there.previous;
	state.seq = 1;
	state.link = EpochHash(got);
	Save();
	MoveHead(state.base, state.chain);
	return false;
}

Hash256 ChainWriter::ExportBase(const ChainBase &base) {
	ExportStats stats;
	ExportContext context {*target.repository, target.database, *target.store,
	                       target.store_url,   nullptr,         ExportTuning().upload_concurrency};
	ExportDescriptor descriptor;
	descriptor.database = target.database;
	descriptor.snapshot_id = 0;
	descriptor.created_unix_ms =
	    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
	        .count();
	descriptor.length = base.length;
	Hash256 base_hash;
	try {
		base_hash = ExportImage(context, base.chunks, descriptor, stats);
	} catch (ExportFailure &failure) {
		ObjectOutcome outcome;
		outcome.status = failure.status;
		outcome.detail = failure.what();
		FailRemote(outcome, *target.store, "exporting the base of a new WAL chain");
	}
	counters.requests += stats.requests;
	return base_hash;
}

void ChainWriter::EnterChain(uint64_t chain, const Hash256 &base, const std::string &first_blob) {
	state.chain = chain;
	state.seq = 1;
	state.base = base;
	state.link = EpochHash(first_blob);
	Save();
	counters.chains++;
	counters.epochs++;
	chain_epochs = 1;
	chain_bytes = first_blob.size();
}

void ChainWriter::StartChain(const ChainBase &base, SealReason reason, Epoch &first) {
	CheckNotFenced();
	LogTimer timer;
	auto base_hash = ExportBase(base);
	if (state.chain != 0 && IsZeroHash(state.base)) {
		AdoptReservedChainBase();
	}
	if (state.chain != 0 && IsZeroHash(state.base) && StartReservedChain(base_hash, first)) {
		LogChain(timer, base_hash, reason);
		return;
	}
	// Order matters (FORMAT §10.6): epoch 1 of the new chain, with the WAL since the base's checkpoint, exists
	// before any seal names the chain, so a crash at any step leaves every acknowledged commit reachable.
	std::string first_blob;
	uint64_t next = WriteFirstEpoch(state.chain + 1, base_hash, first, first_blob);
	if (state.chain != 0) {
		Epoch seal;
		seal.kind = EpochKind::SEAL;
		seal.reason = reason;
		seal.database = target.database;
		seal.branch = target.branch;
		seal.writer = target.settings.writer;
		seal.successor_base = base_hash;
		std::string blob;
		do {
			if (state.chain >= next) {
				// Our own earlier seal led past the id just taken: take one after it.
				next = WriteFirstEpoch(state.chain + 1, base_hash, first, first_blob);
			}
			seal.chain = state.chain;
			seal.seq = state.seq + 1;
			seal.previous = state.link;
			seal.successor_chain = next;
			blob = EncodeEpoch(seal);
		} while (!PutNext(blob, true));
		CrashPoint("ship.after_seal_put");
	}
	if (state.chain == 0) {
		MoveHead(base_hash, next); // the first chain: only the head leads readers to it
	} else {
		MoveHeadAfterSeal(base_hash, next);
	}
	CrashPoint("ship.after_head_move");
	EnterChain(next, base_hash, first_blob);
	LogChain(timer, base_hash, reason);
}

void ChainWriter::MoveHeadAfterSeal(const Hash256 &base, uint64_t chain) {
	// The seal made the new chain part of the history (readers follow it), so the commit shipped in its
	// epoch 1 must not fail now: DuckDB would revert a commit that readers already see. A head that
	// could not move is only a stale entry point; the next chain start moves it again.
	try {
		MoveHead(base, chain);
	} catch (DifferentialError &error) {
		if (error.code == ErrorCode::HEAD_CONFLICT && state.fenced) {
			throw; // a recovery took the branch over after our seal
		}
		LogWarning("ship_head_stale", target.database + "/" + target.branch + ": the head names a chain older than " +
		                                  std::to_string(chain) + " (readers follow the seals): " + error.what());
	}
}

void ChainWriter::LogChain(LogTimer &timer, const Hash256 &base, SealReason reason) {
	LogEvent("ship_chain", timer.ElapsedMs(),
	         target.database + "/" + target.branch + " chain " + std::to_string(state.chain) + " base " +
	             HashToHex(base) + " (" + SealReasonName(reason) + ")");
	// Epoch 1 is written inside the chain start; one ship_epoch event per epoch all the same.
	LogEvent("ship_epoch", 0,
	         EpochKey(target.database, target.branch, state.chain, 1) + " " + std::to_string(chain_bytes) +
	             " bytes, the first of its chain");
}

} // namespace differential
