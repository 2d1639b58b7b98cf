// Recovering a branch from its epochs: walk to the tip, fence (same identity) by winning the create-only
// recovery seal at the tip, then import the base and write the state's chunks and WAL locally.
#include "replication/branch_recovery.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "metadata/metadata_store.hpp"
#include "replication/chain_writer.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/index_page.hpp"
#include "storage/versioned_file.hpp"

#include <algorithm>

namespace differential {

RecoveredExport ImportExportImage(const std::string &database, const std::string &store_url, const RemoteImage &image) {
	RecoveredExport recovered;
	recovered.database = database;
	recovered.store_url = store_url;
	recovered.length = image.length;
	auto count = std::min<uint64_t>(ChunkCount(image.length), image.chunks.size());
	for (uint64_t first = 0; first < count; first += SLOTS_PER_INDEX_PAGE) {
		std::vector<Hash256> slots;
		for (auto i = first; i < std::min<uint64_t>(count, first + SLOTS_PER_INDEX_PAGE); i++) {
			auto &chunk = image.chunks[i];
			slots.push_back(chunk.IsHole() ? Hash256 {} : chunk.chunk);
			if (!chunk.IsHole()) {
				recovered.chunks.push_back(chunk);
			}
		}
		NewIndexPage page;
		page.slots = EncodeIndexPage(slots);
		page.hash = Sha256(page.slots.data(), page.slots.size());
		recovered.pages.push_back(page.hash);
		recovered.new_pages.push_back(std::move(page));
	}
	return recovered;
}

static void CheckRequest(Repository &repository, const BranchRecoveryRequest &request) {
	if (repository.metadata->history.FindDatabase(request.name)) {
		Fail(ErrorCode::DATABASE_EXISTS,
		     "Database " + QuoteName(request.name) +
		         " already exists. Recover into a new name, or drop it first with differential_drop_database('" +
		         request.name + "').");
	}
	if (request.same_identity && (request.name != request.head.database || request.head.branch != "main")) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "same_identity => true continues the branch as the same database, so the new database must be named " +
		         QuoteName(request.head.database) + " and the head must be of branch main (this one is " +
		         request.head.database + "/" + request.head.branch +
		         "). Use that name, or same_identity => false for an independent copy.");
	}
}

//! The recovered chain's epoch 1: the tip's whole state (the chunks changed since the base, the WAL since
//! it) over the same base, so the seal can name a successor that exists, base included.
static Epoch RecoveredFirstEpoch(const ChainPosition &pos, const ChainState &state, const std::string &writer,
                                 uint64_t base_length) {
	Epoch first;
	first.kind = EpochKind::COMMIT;
	first.database = pos.database;
	first.branch = pos.branch;
	first.writer = writer;
	first.seq = 1;
	first.previous = state.base;
	first.wal_offset = 0;
	first.wal = state.wal;
	first.file_length = state.Empty() ? base_length : state.file_length;
	for (auto &entry : state.chunks) {
		first.chunks.push_back(entry.second);
	}
	return first;
}

//! PUT create-only; true when written, false when the key is taken.
static bool CreateOnly(ObjectStore &store, const std::string &key, const std::string &blob, const char *what) {
	PutRequest put;
	put.key = key;
	put.data = blob.data();
	put.size = blob.size();
	put.condition = PutCondition::CreateOnly();
	auto result = store.Put(put);
	if (result.outcome.Ok()) {
		return true;
	}
	if (result.outcome.status != ObjectStatus::PRECONDITION_FAILED && result.outcome.status != ObjectStatus::CONFLICT) {
		FailRemote(result.outcome, store, std::string("writing the ") + what + " " + key);
	}
	return false;
}

//! A seal PUT lost to another recovery's seal (docs/REPLICATION.md §12 (d)): that host took the branch over
//! while this one was recovering it. Following its seal would fence the new leader in turn, so stop.
static void FailIfRecoveredMeanwhile(ObjectStore &store, const std::string &key, const std::string &writer) {
	auto got = store.Get(key);
	if (!got.outcome.Ok()) {
		FailRemote(got.outcome, store, "reading the epoch " + key + " that refused the recovery seal");
	}
	Epoch there;
	std::string why;
	if (DecodeEpoch(got.data, there, why) && there.kind == EpochKind::SEAL && there.reason == SealReason::RECOVERY &&
	    there.writer != writer) {
		Fail(ErrorCode::HEAD_CONFLICT,
		     "Another host recovered " + there.database + "/" + there.branch +
		         " with the same identity while this recovery ran (its seal is " + key +
		         "), so it is the branch's writer now and nothing was recovered here. Follow the new leader, or "
		         "recover with same_identity => false for an independent copy.");
	}
}

//! Writes the recovered state as epoch 1 of a chain id nobody holds, then the recovery seal at the tip naming
//! it (FORMAT §10.6), both create-only; when another epoch got to the tip first, reads on and tries again at
//! the new tip (the epoch 1 written for the old tip stays an orphan no seal names). Returns the new
//! chain's id and its epoch 1's hash.
static std::pair<uint64_t, Hash256> Fence(const BranchRecoveryRequest &request, const std::string &writer,
                                          ChainPosition &pos, ChainState &state,
                                          const std::function<uint64_t()> &base_length) {
	auto &store = *request.store;
	for (int attempt = 0; attempt < 16; attempt++) {
		if (pos.awaiting_base) {
			Fail(ErrorCode::HEAD_CONFLICT,
			     "The WAL chain of " + pos.database + "/" + pos.branch +
			         " was already sealed by another recovery, which now owns the branch. Recover with "
			         "same_identity => false for an independent copy, or follow the new leader.");
		}
		auto first = RecoveredFirstEpoch(pos, state, writer, base_length());
		std::string first_blob;
		uint64_t successor = 0;
		for (uint64_t id = pos.chain + 1; id < pos.chain + 1 + MAX_CHAIN_ID_PROBES && !successor; id++) {
			first.chain = id;
			first_blob = EncodeEpoch(first);
			if (CreateOnly(store, EpochKey(pos.database, pos.branch, id, 1), first_blob, "recovered chain's epoch")) {
				successor = id;
			}
		}
		if (!successor) {
			Fail(ErrorCode::HEAD_CONFLICT,
			     "Chain ids after " + std::to_string(pos.chain) + " of " + pos.database + "/" + pos.branch +
			         " are all taken: its writer is alive and busy. Stop it, then recover again.");
		}
		Epoch seal;
		seal.kind = EpochKind::SEAL;
		seal.reason = SealReason::RECOVERY;
		seal.database = pos.database;
		seal.branch = pos.branch;
		seal.chain = pos.chain;
		seal.seq = pos.seq + 1;
		seal.previous = pos.link;
		seal.writer = writer;
		seal.successor_chain = successor;
		seal.successor_base = state.base;
		PausePoint("recover.before_seal");
		auto seal_key = EpochKey(pos.database, pos.branch, pos.chain, pos.seq + 1);
		if (CreateOnly(store, seal_key, EncodeEpoch(seal), "recovery seal")) {
			return {successor, EpochHash(first_blob)};
		}
		FailIfRecoveredMeanwhile(store, seal_key, writer);
		// The old writer appended meanwhile: apply what it wrote and seal the new tip.
		WalkToTip(store, pos, state);
	}
	Fail(ErrorCode::HEAD_CONFLICT,
	     "The branch " + pos.database + "/" + pos.branch +
	         " kept growing while the recovery tried to seal it: its writer is alive. Stop it, then recover again.");
}

//! Writes the state's main-file chunks and WAL over the imported base, and publishes both.
static void WriteState(Repository &repository, const std::string &name, const ChainState &state, uint64_t base_length) {
	FileAddress main;
	main.repository = repository.root;
	main.database = name;
	main.branch = "main";
	main.file_name = MAIN_FILE_NAME;
	if (!state.Empty()) {
		auto file = VersionedFile::Open(main, repository.storage, true);
		file->Load();
		for (auto &entry : state.chunks) {
			auto &chunk = entry.second;
			file->Write(chunk.bytes.data(), chunk.bytes.size(), ChunkStart(chunk.index));
		}
		if (state.file_length < std::max(base_length, file->Length())) {
			file->Truncate(state.file_length);
		}
		file->Sync();
	}
	if (!state.wal.empty()) {
		auto wal_address = main;
		wal_address.file_name = std::string(MAIN_FILE_NAME) + ".wal";
		auto wal = VersionedFile::Open(wal_address, repository.storage, true);
		wal->Load();
		wal->CreateEmpty();
		wal->Write(state.wal.data(), state.wal.size(), 0);
		wal->Sync();
	}
}

BranchRecoveryResult RecoverBranch(Repository &repository, const BranchRecoveryRequest &request) {
	CheckRequest(repository, request);
	LogTimer timer;
	auto pos = ChainPosition::FromHead(request.head);
	ChainState state;
	WalkToTip(*request.store, pos, state);
	auto writer = request.writer.empty() ? NewUuid() : request.writer;
	RemoteImage image;
	Hash256 loaded {};
	auto load = [&]() {
		if (IsZeroHash(loaded) || loaded != state.base) {
			image = request.load_base(state.base);
			loaded = state.base;
		}
	};
	std::pair<uint64_t, Hash256> successor {0, Hash256 {}};
	if (request.same_identity) {
		successor = Fence(request, writer, pos, state, [&]() {
			load();
			return image.length;
		});
	}
	load();
	auto recovered = ImportExportImage(request.name, request.store_url, image);
	auto &metadata = *repository.metadata;
	metadata.remote.RecoverDatabase(recovered);
	WriteState(repository, request.name, state, image.length);
	BranchRecoveryResult result;
	result.database = request.name;
	result.chain = state.chain;
	result.seq = state.seq;
	result.wal_bytes = state.wal.size();
	result.chunks = state.chunks.size();
	if (request.same_identity) {
		// The new leader continues after epoch 1 of the chain the seal named; its first shipment seals it.
		metadata.shipping.SetSettings(request.name, "off", 1, writer);
		ShipState ship;
		ship.chain = successor.first;
		ship.seq = 1;
		ship.base = state.base;
		ship.link = successor.second;
		metadata.shipping.SetState(request.name, "main", ship);
		PublishedHead head {request.head.snapshot_id, request.head.descriptor, request.head_etag};
		head.chain = request.head.chain;
		head.chain_base = request.head.chain_base;
		metadata.remote.RecordHead(request.store_url, request.name, "main", head);
		result.fenced = true;
	}
	LogEvent("recover_branch", timer.ElapsedMs(),
	         request.name + " from chain " + std::to_string(state.chain) + " epoch " + std::to_string(state.seq) +
	             (request.same_identity ? ", fenced; continues in chain " + std::to_string(successor.first) : ""));
	return result;
}

} // namespace differential
