// The history lifecycle in the metadata: restore, clone, drop and expiry. Each is one transaction,
// and every check happens inside it before anything is written.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/records.hpp"

#include <string>
#include <vector>

namespace differential {

class LifecycleStore {
public:
	explicit LifecycleStore(MetadataCore &core) : core(core) {
	}

	//! Points the branch at a snapshot's state and records that as a new snapshot (parents: the
	//! branch head and the restored snapshot). The branch must be closed (checked by the caller).
	SnapshotRecord RestoreBranch(const std::string &database, const std::string &branch, int64_t snapshot_id);
	//! A new database whose main branch starts at a snapshot of another; it shares every chunk.
	DatabaseRecord CloneDatabase(const std::string &source, const std::string &target, int64_t snapshot_id);
	void DropBranch(const std::string &database, const std::string &branch);
	void DropDatabase(const std::string &database);
	//! Expires the given snapshots, all or nothing; refuses unknown ones and branch heads.
	std::vector<int64_t> ExpireSnapshots(const std::string &database, const std::vector<int64_t> &snapshot_ids);
	//! Expires every snapshot created before the cutoff, except branch heads.
	std::vector<int64_t> ExpireSnapshotsBefore(const std::string &database, int64_t cutoff_us);

private:
	MetadataCore &core;
};

} // namespace differential
