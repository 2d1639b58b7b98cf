// Exports of S3 databases: every snapshot that is durable locally but not yet in its DATA_PATH is
// exported (packs, export index pages, descriptor, commit record), then each branch head is moved.
#pragma once

#include "common/hash.hpp"
#include "export/export_uploads.hpp"
#include "repository/repository.hpp"
#include "storage/object_store.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace differential {

//! The processes of one repository export one at a time (an flock on <root>/export.lock), so they
//! never race each other for a commit record or head; only other repositories can.
class ExportLock {
public:
	explicit ExportLock(const std::string &root);
	~ExportLock();
	ExportLock(const ExportLock &) = delete;
	ExportLock &operator=(const ExportLock &) = delete;

private:
	int fd = -1;
};

//! One snapshot an export run exported.
struct ExportedSnapshot {
	int64_t snapshot_id = 0;
	std::string branch_name;
	Hash256 descriptor {};
	ExportStats stats;
};

//! A branch head an export run moved.
struct PublishedBranchHead {
	std::string branch_name;
	int64_t snapshot_id = 0;
};

struct ExportRun {
	std::vector<ExportedSnapshot> snapshots;
	std::vector<PublishedBranchHead> heads;
	//! Expiry records written for exported snapshots that were expired locally.
	uint64_t expiry_records = 0;
	ExportStats stats; //! of the whole run, head moves included (the probe's requests are not)
};

//! Exports the database's unexported snapshots (up to `up_to`), oldest first, to `store` (opened on
//! `store_url`, the database's DATA_PATH), then moves every branch head in the store that does not
//! name the branch's (exported) head snapshot. Runs under the repository's export lock, so the processes of one
//! repository take turns. Throws export_failed / access_denied (the snapshot stays local, a retry continues),
//! head_conflict (another writer moved the head) or conditional_writes_unsupported.
//! How an export run goes about it (nothing here changes what it writes).
struct ExportTuning {
	//! Called with the run's percentage (0-100): the snapshots' chunk uploads make up the first 90, then the
	//! heads and records.
	std::function<void(double)> progress;
	//! Pack PUTs in flight at once; index pages, descriptor, commit record and heads wait for all of them.
	size_t upload_concurrency = 4;
};
ExportRun ExportPendingSnapshots(Repository &repository, const std::string &database, ObjectStore &store,
                                 const std::string &store_url, std::optional<int64_t> up_to = std::nullopt,
                                 const ExportTuning &tuning = ExportTuning());

} // namespace differential
