// Failover: a new local database from a branch's shipped WAL. The newest chain's base is imported without
// downloading it (its chunks start out evicted), the epochs' chunks and WAL bytes are written locally,
// and DuckDB replays the WAL when the database is attached. With the same identity, a recovery seal
// fences the old writer first (docs/FORMAT.md §10.6).
#pragma once

#include "metadata/remote_store.hpp"
#include "remote/epoch_chain.hpp"
#include "repository/repository.hpp"

#include <functional>

namespace differential {

//! An export's image as a new local database's chunk map (no chunk is downloaded).
RecoveredExport ImportExportImage(const std::string &database, const std::string &store_url, const RemoteImage &image);

struct BranchRecoveryRequest {
	std::string name;
	bool same_identity = false;
	//! The new leader's writer id (same identity); empty: a new one. A standby passes its lease's holder id.
	std::string writer;
	std::string store_url;
	std::shared_ptr<ObjectStore> store;
	//! The head the URL named, as read now (with its etag).
	BranchHead head;
	std::string head_etag;
	//! Reads a base descriptor's image (verified) from the store.
	std::function<RemoteImage(const Hash256 &descriptor)> load_base;
};

struct BranchRecoveryResult {
	std::string database;
	uint64_t chain = 0;
	uint64_t seq = 0; //! the last commit epoch applied in `chain` (0: the base alone)
	uint64_t wal_bytes = 0;
	uint64_t chunks = 0;
	bool fenced = false;
};

//! Refusals: database_exists, not_shipping, head_conflict (another recovery sealed the chain first),
//! invalid_argument (same identity under another name or branch), corrupt_epoch, and request errors.
BranchRecoveryResult RecoverBranch(Repository &repository, const BranchRecoveryRequest &request);

} // namespace differential
