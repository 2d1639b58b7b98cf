// Recovering a branch from its epochs: walk to the tip, fence (same identity) by winning the create-only
// recovery seal at the tip, then import the base and write the state's chunks and WAL locally.
#include "replication/branch_recovery.hpp"

#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "metadata/metadata_store.hpp"
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
		Fail(ErrorKind::CONFLICT, "database_exists",
		     "Database " + QuoteName(request.name) +
		         " already exists. Recover into a new name, or drop it first with differential_drop_database('" +
		         request.name + "').");
	}
	if (request.same_identity && (request.name != request.head.database || request.head.branch != "main")) {
		Fail(ErrorKind::INVALID_INPUT, "invalid_argument",
		     "same_identity => true continues the branch as the same database, so the new database must be named " +
		         QuoteName(request.head.database) + " and the head must be of branch main (this one is " +
		         request.head.database + "/" + request.head.branch +
		         "). Use that name, or same_identity => false for an independent copy.");
	}
}

//! Writes the recovery seal at the tip create-only; when another epoch got there first, reads on and
//! tries again at the new tip. Returns the successor chain the seal reserves.
static uint64_t Fence(const BranchRecoveryRequest &request, const std::string &writer, ChainPosition &pos,
                      ChainState &state) {
	for (int attempt = 0; attempt < 16; attempt++) {
		if (pos.awaiting_base) {
			Fail(ErrorKind::CONFLICT, "head_conflict",
			     "The WAL chain of " + pos.database + "/" + pos.branch +
			         " was already sealed by another recovery, which now owns the branch. Recover with "
			         "same_identity => false for an independent copy, or follow the new leader.");
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
		seal.successor_chain = pos.chain + 1;
		auto blob = EncodeEpoch(seal);
		PutRequest put;
		put.key = EpochKey(pos.database, pos.branch, pos.chain, pos.seq + 1);
		put.data = blob.data();
		put.size = blob.size();
		put.condition = PutCondition::CreateOnly();
		auto result = request.store->Put(put);
		if (result.outcome.Ok()) {
			return pos.chain + 1;
		}
		if (result.outcome.status != ObjectStatus::PRECONDITION_FAILED &&
		    result.outcome.status != ObjectStatus::CONFLICT) {
			FailRemote(result.outcome, *request.store, "writing the recovery seal " + put.key);
		}
		// The old writer appended meanwhile: apply what it wrote and seal the new tip.
		WalkToTip(*request.store, pos, state);
	}
	Fail(ErrorKind::CONFLICT, "head_conflict",
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
	auto writer = NewUuid();
	uint64_t successor = 0;
	if (request.same_identity) {
		successor = Fence(request, writer, pos, state);
	}
	auto image = request.load_base(state.base);
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
		// The new leader continues in the reserved chain, whose base it exports when it first ships.
		metadata.shipping.SetSettings(request.name, "off", 1, writer);
		ShipState ship;
		ship.chain = successor;
		metadata.shipping.SetState(request.name, "main", ship);
		PublishedHead head {request.head.snapshot_id, request.head.descriptor, request.head_etag};
		head.chain = request.head.chain;
		head.chain_base = request.head.chain_base;
		metadata.remote.RecordHead(request.store_url, request.name, "main", head);
		result.fenced = true;
	}
	LogEvent("recover_branch", timer.ElapsedMs(),
	         request.name + " from chain " + std::to_string(state.chain) + " epoch " + std::to_string(state.seq) +
	             (request.same_identity ? ", fenced" : ""));
	return result;
}

} // namespace differential
