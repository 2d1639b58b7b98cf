// differential_merge_branch's engine: selects the inputs and base from recorded ancestry, checks
// the target, and publishes the result (an existing snapshot, or a merged one) in one transaction.
#pragma once

#include "merge/table_merge.hpp"
#include "metadata/metadata_store.hpp"

#include <optional>

namespace duckdb {
class DatabaseInstance;
}

namespace differential {

struct MergeBranchRequest {
	std::string database;
	std::string target;
	std::string source;
	std::string destination;
	std::optional<std::string> request_id;
	std::optional<int64_t> expected_base;
	std::optional<int64_t> expected_ours;
	std::optional<int64_t> expected_theirs;
	//! The arguments as one canonical string: a request id belongs to one set of them.
	std::string Canonical() const;
};

struct MergeSnapshotsRequest {
	std::string database;
	int64_t base = 0;
	int64_t ours = 0;
	int64_t theirs = 0;
	std::string destination;
	std::optional<std::string> request_id;
	std::string Canonical() const;
};

struct MergeTableResult {
	std::string table;
	TableMergeCounts counts;
};

struct MergeTimings {
	int64_t selection_ms = 0;
	int64_t comparison_ms = 0;
	int64_t application_ms = 0;
	int64_t publication_ms = 0;
	int64_t target_check_ms = 0;
};

struct MergeBranchResult {
	std::string branch_name;
	int64_t snapshot_id = -1;
	std::string merge_action;
	int64_t base = -1;
	int64_t ours = -1;
	int64_t theirs = -1;
	bool replayed = false;
	std::vector<MergeTableResult> tables;
	MergeTimings timings;
};

struct MergePreview {
	MergeBranchResult inputs;
	//! "valid" (staged in a disposable branch and every constraint held), "invalid", or
	//! "not_checked" (not validated, conflicts, or nothing to combine).
	std::string validation_state;
	std::string validation_error;
};

MergeBranchResult MergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                              const std::string &repository, const MergeBranchRequest &request);
//! A merge of three given snapshots (an explicit base, e.g. for criss-cross histories) into a
//! new branch.
MergeBranchResult MergeSnapshots(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                 const std::string &repository, const MergeSnapshotsRequest &request);
//! The staging and publication shared by both merges; `result` carries the inputs.
void StageAndPublish(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
                     const std::string &database, const std::string &destination, bool create_destination,
                     const std::string &description, MetadataStore::MergeRecord record, MergeBranchResult &result);
//! Compares without publishing anything; with `validate`, also builds the result in a staging
//! branch that is dropped afterwards, so DuckDB checks every constraint.
struct MergePreflight {
	MergeBranchResult inputs;
	bool ready = false;
	std::string merge_action;
	//! clean, attached (open in this process), locked (written by another process), dirty, or missing.
	std::string target_state;
	std::string validation_state;
	//! The first problem found, as "<code>: <message>", or empty when ready.
	std::string issue;
};

//! Every check a merge would make, at this moment, without merging: a reading, not a reservation.
MergePreflight PreflightMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                    const std::string &repository, const MergeBranchRequest &request);

MergePreview PreviewMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                const std::string &repository, const std::string &database, const std::string &target,
                                const std::string &source, bool validate);

} // namespace differential
