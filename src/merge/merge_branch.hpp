// The merge functions' engine: selects the inputs and base from recorded ancestry, keeps the durable
// request, checks the target, and publishes the result (an existing snapshot, or a merged one) in
// one transaction.
#pragma once

#include "merge/merge_progress.hpp"
#include "merge/merge_publisher.hpp"
#include "merge/merge_session.hpp"
#include "merge/virtual_base_plan.hpp"
#include "metadata/metadata_store.hpp"

#include <atomic>
#include <memory>
#include <optional>

namespace duckdb {
class DatabaseInstance;
}

namespace differential {

//! Per-call options. schema_mode, nested_mode and resolution_tables belong to a request's identity;
//! limits, settings and preview paging do not (a retry may change them).
struct MergeOptions {
	SchemaMode schema_mode = SchemaMode::STRICT;
	NestedMode nested_mode = NestedMode::WHOLE;
	BaseMode base_mode = BaseMode::SELECTED;
	ResolutionMapping resolution_tables;
	MergeLimits limits;
	int64_t max_concurrent = 2;
	//! The caller's session TimeZone and Calendar; a request freezes them at its first attempt.
	std::string time_zone;
	std::string calendar;
	std::shared_ptr<std::atomic<double>> progress;
	bool validate = false;
	int64_t conflict_limit = 100;
	int64_t conflict_offset = 0;
	//! SET differential_merge_skip_unchanged: use the storage shortcut (false: always read all three sides).
	bool skip_unchanged = true;
	//! Set for a single-writer S3 database: the merge then requires a request_id and publishes in the
	//! durable steps of docs/DURABILITY.md §13.9.
	std::shared_ptr<MergePublisher> publisher;
	//! The identity-bearing options as text (empty for the defaults, so older requests still match).
	std::string Canonical() const;
};

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

struct MergeTimings {
	int64_t selection_ms = 0;
	//! Attaching the inputs, reading their catalogs, checking the scope and the read budget.
	int64_t planning_ms = 0;
	int64_t comparison_ms = 0;
	int64_t application_ms = 0;
	int64_t publication_ms = 0;
	int64_t target_check_ms = 0;
	//! Reading inputs' evicted chunks back from their S3 exports (0 when none was evicted).
	int64_t materialization_ms = 0;
};

struct MergeBranchResult {
	std::string branch_name;
	int64_t snapshot_id = -1;
	MergeAction merge_action = MergeAction::MERGED;
	//! -1 for a virtual base, whose best common ancestors are `bases`.
	int64_t base = -1;
	int64_t ours = -1;
	int64_t theirs = -1;
	std::vector<int64_t> bases;
	bool replayed = false;
	std::string operation_id;
	std::vector<MergeObjectResult> objects;
	MergeTimings timings;
};

struct MergePreview {
	MergeBranchResult inputs;
	ValidationState validation_state = ValidationState::NOT_CHECKED;
	//! Why it is invalid: merge_validation_failed (a constraint) or a schema conflict kind.
	std::optional<ErrorCode> validation_code;
	std::string validation_error;
};

struct MergePreflight {
	MergeBranchResult inputs;
	bool ready = false;
	MergeAction merge_action = MergeAction::MERGED;
	TargetState target_state = TargetState::UNKNOWN;
	ValidationState validation_state = ValidationState::NOT_CHECKED;
	//! Every problem found, each as "<code>: <message>"; empty when ready.
	std::vector<std::string> issues;
};

MergeBranchResult MergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                              const std::string &repository, const MergeBranchRequest &request,
                              const MergeOptions &options);
//! A merge of three given snapshots (an explicit base, e.g. for criss-cross histories) into a new branch.
MergeBranchResult MergeSnapshots(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                 const std::string &repository, const MergeSnapshotsRequest &request,
                                 const MergeOptions &options);
//! Compares without publishing anything; with `validate`, also builds the result in a staging
//! branch that is dropped afterwards, so DuckDB checks every constraint and view.
MergePreview PreviewMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                const std::string &repository, const std::string &database, const std::string &target,
                                const std::string &source, const MergeOptions &options);
MergePreview PreviewMergeSnapshots(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                   const std::string &repository, const std::string &database, int64_t base,
                                   int64_t ours, int64_t theirs, const MergeOptions &options);
//! Every check a merge would make, at this moment, without merging: a reading, not a reservation.
MergePreflight PreflightMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                    const std::string &repository, const MergeBranchRequest &request,
                                    const MergeOptions &options);

} // namespace differential
