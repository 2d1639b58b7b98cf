// The steps of an export run, shared by its files: one snapshot's objects, and the branch heads.
#pragma once

#include "export/export_uploads.hpp"
#include "remote/export_format.hpp"
#include "repository/repository.hpp"

#include <functional>
#include <optional>
#include <string>

namespace differential {

struct ExportContext {
	Repository &repository;
	const std::string &database;
	ObjectStore &store;
	const std::string &store_url;
	//! Called with (packs uploaded, packs to upload) of the snapshot being exported, for a progress bar.
	std::function<void(size_t, size_t)> pack_progress;
	//! How many pack PUTs may be in flight at once (ExportTuning).
	size_t upload_concurrency;
};

//! Uploads what the snapshot needs that the store does not hold (packs, then export index pages),
//! then its descriptor and its create-only commit record, and records the export. Returns the
//! descriptor's hash. Throws ExportFailure, or head_conflict when another writer's commit record
//! holds the snapshot's key.
Hash256 ExportSnapshotObjects(ExportContext &context, int64_t snapshot_id, ExportStats &stats);

//! Uploads the chunks of a file image (chunk hashes in chunk order, zero for holes; every chunk must be
//! published locally) the store does not hold, its export index pages and its descriptor (`descriptor`'s
//! index pages are filled in). Returns the descriptor's hash. WAL shipping exports chain bases with it.
Hash256 ExportImage(ExportContext &context, const std::vector<Hash256> &chunks, ExportDescriptor &descriptor,
                    ExportStats &stats);
//! ExportImage, then the create-only commit record naming the descriptor as snapshot
//! `descriptor.snapshot_id` (with `parent`, the shared writers' store id of its parent). Records nothing
//! locally. Throws RemoteConflict when another writer's record holds the number.
Hash256 ExportAsSnapshot(ExportContext &context, const std::vector<Hash256> &chunks, ExportDescriptor &descriptor,
                         const std::optional<int64_t> &parent, ExportStats &stats);
//! The chunk hashes of a published file version, in chunk order (zero for holes).
std::vector<Hash256> PublishedChunkHashes(FileCatalog &catalog, const StoredFile &file);

//! A commit record or head that another writer holds: the caller words the head_conflict.
class RemoteConflict : public std::runtime_error {
public:
	explicit RemoteConflict(const std::string &what) : std::runtime_error(what) {
	}
};

//! A store that failed the conditional-write probe.
class ProbeRefusal : public std::runtime_error {
public:
	explicit ProbeRefusal(const std::string &what) : std::runtime_error(what) {
	}
};

//! Runs the conditional-write probe of the context's store once per process; throws ProbeRefusal when
//! the store failed it, ExportFailure when it could not finish.
void RequireConditionalWrites(ExportContext &context);

//! Moves the head of `branch` to the snapshot (If-None-Match: * for a new head, If-Match on the etag
//! this repository last published otherwise); a head that already holds exactly this is adopted.
//! Returns false when the head was already there. Runs the probe first (once per store and process).
bool PublishBranchHead(ExportContext &context, const std::string &branch, int64_t snapshot_id,
                       const Hash256 &descriptor, ExportStats &stats);

} // namespace differential
