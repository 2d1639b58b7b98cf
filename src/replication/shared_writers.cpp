// Shared writers: the head read before a snapshot (to keep work that can no longer publish), the import
// of another writer's head (no chunk downloaded: all start evicted), and branch_conflict's wording.
#include "replication/shared_writers.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "host/database_export.hpp"
#include "host/export_opening.hpp"
#include "host/object_store_access.hpp"
#include "remote/export_format.hpp"
#include "replication/branch_recovery.hpp"
#include "repository/evicted_chunk_reader.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/index_page.hpp"

#include <algorithm>

namespace differential {

void ReadSharedWriterOption(const std::string &key, const std::string &value, SharedWriterRequest &request) {
	if (key == "writers" && (value == "shared" || value == "single")) {
		request.shared = value == "shared";
		return;
	}
	if (key == "on_conflict" && (value == "branch" || value == "fail")) {
		request.conflict_to_branch = value == "branch";
		return;
	}
	Fail(ErrorCode::INVALID_OPTION, key == "writers"
	                                    ? "ATTACH option WRITERS takes 'shared' or 'single', got '" + value + "'."
	                                    : "ATTACH option ON_CONFLICT takes 'fail' or 'branch', got '" + value + "'.");
}

void CheckSharedWriterRequest(Repository &repository, const std::string &database, const SharedWriterRequest &request,
                              bool has_data_path, bool read_only) {
	if (!request.shared && !request.conflict_to_branch) {
		return;
	}
	auto &metadata = *repository.metadata;
	bool exists = metadata.history.FindDatabase(database).has_value();
	if (read_only) {
		Fail(ErrorCode::INVALID_OPTION,
		     "WRITERS and ON_CONFLICT are stored with the database by a read-write ATTACH; a read-only ATTACH "
		     "publishes nothing. Remove them, or attach read-write.");
	}
	bool shared = request.shared.value_or(exists && metadata.shared.Settings(database).shared);
	if (request.conflict_to_branch && !shared) {
		Fail(ErrorCode::INVALID_OPTION,
		     "ON_CONFLICT applies to databases written by several hosts. Add WRITERS 'shared' (with a DATA_PATH), "
		     "or remove ON_CONFLICT.");
	}
	if (shared && !has_data_path && !(exists && metadata.remote.DataPath(database))) {
		Fail(ErrorCode::DATA_PATH_REQUIRED,
		     "WRITERS 'shared' publishes through the branch heads in an object store, and database " +
		         QuoteName(database) +
		         " has no DATA_PATH. Add DATA_PATH 's3://bucket/prefix/' to the ATTACH (nothing was changed).");
	}
}

std::optional<StoreHead> ReadStoreHead(ObjectStore &store, const std::string &store_url, const std::string &database,
                                       const std::string &branch) {
	auto key = HeadKey(database, branch);
	auto got = store.Get(key);
	if (got.outcome.status == ObjectStatus::NOT_FOUND) {
		return std::nullopt;
	}
	if (!got.outcome.Ok()) {
		Fail(ErrorCode::EXPORT_FAILED,
		     "Cannot read the head " + store_url + key + " (" + ObjectStatusName(got.outcome.status) + ": " +
		         got.outcome.detail +
		         "), so this shared writer cannot tell where the branch is; nothing was changed. "
		         "Check the store and the TYPE s3 secret, then retry.");
	}
	StoreHead out;
	std::string why;
	if (!DecodeHead(got.data, out.head, why)) {
		Fail(ErrorCode::CORRUPT_HEAD,
		     "The head " + store_url + key + " cannot be read: " + why + ". Nothing was changed.");
	}
	out.etag = got.etag;
	return out;
}

bool SeenByUs(Repository &repository, const std::string &store_url, const std::string &database,
              const std::string &branch, const std::optional<StoreHead> &head) {
	auto seen = repository.metadata->remote.Head(store_url, database, branch);
	return head ? seen && seen->etag == head->etag : !seen;
}

std::optional<int64_t> FollowStoreHead(duckdb::ClientContext &context, Repository &repository,
                                       const std::string &database, const std::string &branch,
                                       const std::string &store_url) {
	DuckDBLogScope log(context);
	auto store = OpenObjectStore(context, store_url);
	auto head = ReadStoreHead(*store, store_url, database, branch);
	// Seen already, and the branch is at it: nothing to do. A branch at kept work (a settled conflict)
	// goes back to the store's head even when that did not move.
	auto seen = repository.metadata->remote.Head(store_url, database, branch);
	auto record = repository.metadata->history.FindBranch(database, branch);
	bool at_seen = seen && record && record->head_snapshot_id == seen->snapshot_id;
	if (!head || (SeenByUs(repository, store_url, database, branch, head) && at_seen)) {
		return std::nullopt;
	}
	bool has_wal = false;
	if (repository.metadata->history.HasUnsnapshottedChanges(database, branch, has_wal)) {
		// Work of this repository's own that the store lacks: publishing it decides (branch_conflict).
		LogWarning("shared_head_not_followed", database + "/" + branch + " has changes not in a snapshot");
		return std::nullopt;
	}
	auto opened = OpenExport(context, store_url + DescriptorKey(head->head.descriptor));
	RegisterEvictionStore(store_url, opened.store, PACKS_PREFIX);
	ImportedHead imported;
	imported.image = ImportExportImage(database, store_url, opened.resolved.image);
	imported.branch = branch;
	imported.snapshot_id = head->head.snapshot_id;
	imported.snapshot_name = opened.resolved.descriptor.snapshot_name;
	imported.descriptor = head->head.descriptor;
	imported.etag = head->etag;
	auto local = repository.metadata->shared.ImportHead(imported);
	LogEvent("shared_head_followed", -1,
	         database + "/" + branch + ": store snapshot " + std::to_string(imported.snapshot_id) +
	             (local ? " imported as local snapshot " + std::to_string(*local) : " not imported (local work)"));
	return local;
}

SharedWriterPlan PlanSharedWriters(duckdb::ClientContext &context, Repository &repository, const std::string &database,
                                   const std::string &branch, const SharedWriterRequest &request,
                                   const std::optional<std::string> &store_url, bool read_only) {
	SharedWriterPlan plan;
	auto &metadata = *repository.metadata;
	bool exists = metadata.history.FindDatabase(database).has_value();
	auto settings = exists ? metadata.shared.Settings(database) : SharedWriterSettings();
	if (request.shared || request.conflict_to_branch) {
		settings.shared = request.shared.value_or(settings.shared);
		settings.conflict_to_branch = request.conflict_to_branch.value_or(settings.conflict_to_branch);
		plan.settings = settings;
	}
	if (!settings.shared || read_only) {
		return plan;
	}
	plan.store_url = store_url;
	if (!plan.store_url && exists) {
		auto data_path = metadata.remote.DataPath(database);
		plan.store_url = data_path ? std::optional<std::string>(data_path->store_url) : std::nullopt;
	}
	if (!plan.store_url) {
		return plan;
	}
	plan.active = true;
	DuckDBLogScope log(context);
	ReadStoreHead(*OpenObjectStore(context, *plan.store_url), *plan.store_url, database, branch);
	return plan;
}

std::string ConflictBranchName(const std::string &branch, int64_t kept) {
	return branch + "-conflict-" + std::to_string(kept);
}

} // namespace differential
