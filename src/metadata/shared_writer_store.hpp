// What a repository knows about databases written by several hosts (WRITERS 'shared'): the stored options,
// the conflict a publication ran into, and the import of another writer's head as a branch's state.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/remote_store.hpp"

#include <optional>
#include <string>

namespace differential {

//! ATTACH's WRITERS and ON_CONFLICT, as stored with the database.
struct SharedWriterSettings {
	bool shared = false;
	bool conflict_to_branch = false; //! ON_CONFLICT 'branch' (else 'fail')
};

//! A head published by another writer, imported as a branch's state without downloading its chunks.
struct ImportedHead {
	RecoveredExport image; //! database, store_url, chunk map
	std::string branch;
	int64_t snapshot_id = 0; //! the head's snapshot id in the store
	std::optional<std::string> snapshot_name;
	Hash256 descriptor {};
	std::string etag;
};

class SharedWriterStore {
public:
	explicit SharedWriterStore(MetadataCore &core) : core(core) {
	}

	SharedWriterSettings Settings(const std::string &database);
	void SetSettings(const std::string &database, const SharedWriterSettings &settings);

	//! The local snapshot a refused publication of the branch kept (the unresolved conflict), if any.
	std::optional<int64_t> Conflict(const std::string &database, const std::string &branch);
	//! Records the conflict: `kept` is never exported as the branch's head (PendingExports skips it).
	void RecordConflict(const std::string &database, const std::string &branch, int64_t kept);
	//! Whether the snapshot is kept work (never to be published as the branch's head, nor built upon there).
	bool IsKept(const std::string &database, int64_t snapshot_id);
	//! The conflict is settled: `kept` is safe on another branch, so the branch may follow the store.
	void SettleConflict(const std::string &database, const std::string &branch, int64_t kept);

	//! Makes the next local snapshot id at least `above` + 1, so a snapshot taken after seeing another
	//! writer's head never reuses that head's id.
	void ReserveSnapshotIdsAbove(const std::string &database, int64_t above);

	//! Imports the head as the branch's state and newest snapshot (exported, head recorded as seen), in one
	//! transaction, when the branch holds nothing that is not in the store or kept elsewhere: its head is
	//! the head it last saw, or a settled conflict's snapshot, and it has no unsnapshotted changes.
	//! Returns the local snapshot id, or nothing (and changes nothing) when the branch has such work.
	std::optional<int64_t> ImportHead(const ImportedHead &head);
	//! The id a local snapshot has in the store: its own, unless it was imported under another id (the
	//! store's id was taken here by work of this repository's own).
	int64_t StoreSnapshotId(const std::string &database, int64_t local_id);

private:
	MetadataCore &core;
};

} // namespace differential
