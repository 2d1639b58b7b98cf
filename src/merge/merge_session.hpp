// One merge's private workspace: read-only attachments of its three inputs on a private connection,
// their catalogs and the planned result, the comparison of every table, and (when staging) a private
// branch forked from ours that receives the result. Everything is released when the session ends.
#pragma once

#include "merge/foreign_keys.hpp"
#include "merge/merge_progress.hpp"
#include "merge/resolutions.hpp"
#include "merge/schema_plan.hpp"
#include "merge/storage_identity.hpp"
#include "metadata/metadata_store.hpp"

#include <map>
#include <memory>

namespace duckdb {
class DatabaseInstance;
class Connection;
} // namespace duckdb

namespace differential {

//! One row of a preview: a table, or a view whose definition differs between the inputs.
struct MergeObjectResult {
	ObjectType object_type = ObjectType::TABLE;
	std::string name;
	TableMergeCounts counts;
	//! STRUCT values (see ConflictDetailType), at most the call's conflict_limit.
	std::vector<duckdb::Value> conflict_details;
	std::vector<SchemaChange> schema_changes;
	TableAction table_action = TableAction::NONE;
	ViewAction view_action = ViewAction::NONE;
	MergeSide view_source = MergeSide::NONE;
	std::string view_sql;
	std::vector<SchemaConflict> schema_conflicts;
	//! OURS and/or THEIRS when that side's table is byte-identical to the base's and was not read.
	std::vector<MergeSide> unchanged_sides;
};

duckdb::LogicalType ConflictDetailType();
//! A materialized decision table's counts.
TableMergeCounts ReadCounts(duckdb::Connection &connection, const std::string &decisions);

struct MergeInputs {
	//! -1 when the base is virtual.
	int64_t base = -1;
	int64_t ours = -1;
	int64_t theirs = -1;
	//! The best common ancestors a virtual base merges (base => 'virtual'); empty for a snapshot base.
	std::vector<int64_t> bases;
};

//! One step of a virtual base (virtual_base.hpp): its inputs are databases already attached (snapshots, or
//! earlier steps' results), with the marks databases of those that are virtual; it writes its result and
//! that result's marks into two in-memory databases of the given names.
struct StepAliases {
	std::string base, ours, theirs;
	std::string base_marks, ours_marks, theirs_marks;
	std::string result, result_marks;
	//! The inputs' snapshot ids, a distinct negative number for each virtual one: an input equals the base
	//! only when it is the same database.
	MergeInputs ids;
};

class VirtualBase;

struct SessionSettings {
	SchemaMode schema_mode = SchemaMode::STRICT;
	NestedMode nested_mode = NestedMode::WHOLE;
	std::string time_zone;
	std::string calendar;
	int64_t conflict_limit = 100;
	int64_t conflict_offset = 0;
	//! Skip reading a side's table whose storage equals the base's (differential_merge_skip_unchanged).
	bool skip_unchanged = true;
};

class MergeSession {
public:
	MergeSession(duckdb::DatabaseInstance &instance, MetadataStore &metadata, std::string repository,
	             std::string database, const MergeInputs &inputs, const SessionSettings &settings,
	             MergeOperation &operation);
	//! A step of a virtual base: merges the three attached databases, conflicts left as marks.
	MergeSession(duckdb::DatabaseInstance &instance, MetadataStore &metadata, std::string repository,
	             std::string database, const StepAliases &aliases, const SessionSettings &settings,
	             MergeOperation &operation);
	~MergeSession();
	//! Builds the step's result: every row decided, each conflict kept as marks (virtual_base.cpp).
	void BuildVirtualStep();

	//! The result tables whose rows are compared, by name (resolution tables map onto these).
	std::map<std::string, TableShape> ComparedTables() const;
	//! Compares every table (and applies `resolutions`); with `stage`, also builds the result on a
	//! private staging branch (only when nothing conflicts). Fills `objects`.
	//! `counts` asks for every table's change counts even where building the result needs none.
	void Run(bool stage, bool counts, const std::vector<FrozenResolution> &resolutions,
	         std::vector<MergeObjectResult> &objects);
	int64_t RowConflicts() const {
		return row_conflicts;
	}
	const SchemaConflict *FirstSchemaConflict() const {
		return plan.FirstConflict();
	}
	//! Checkpoints the staged result, checks the staging budget, and closes the staging branch.
	void FinishStaging();
	duckdb::Connection &Connection() {
		return *connection;
	}

	MetadataStore &metadata;
	std::string repository;
	std::string database;
	std::string staging;
	bool published = false;
	bool staged = false;
	int64_t application_ms = 0;

private:
	void Attach(const std::string &alias, const std::string &options);
	void Open(const SessionSettings &settings);
	//! The marks tables of the inputs that have them, for table `index` (virtual_base.cpp).
	void ReadMarks(size_t index, InputReads &reads);
	//! A step's conflicts become marks in its result's marks database, and its decisions are rewritten to
	//! build the result with them (virtual_base.cpp).
	void MarkConflicts(size_t index, const std::string &decisions);
	//! The qualified marks table of `table` in the marks database of input `alias`; empty when it has none.
	std::string MarksTable(const std::string &alias, const std::string &table);
	//! Whether `alias`'s marks table of `table` holds any row (a drop check counts marked rows as changed).
	bool HasMarks(const std::string &alias, const std::string &table);
	void DetachAll();
	void FreezeSettings(const SessionSettings &settings);
	void ReadCatalogs(const SessionSettings &settings);
	//! Decides each table without a primary key from its contents: which side changed it, what the
	//! result takes; refuses one both sides changed (whole_tables.cpp).
	void DecideWholeTables();
	void CheckReadBudget(const std::vector<InputReads> &reads);
	//! What to read of each table (by plan index): sides left as in the base are not read, and of a
	//! changed table only the row groups a side changed (storage_identity).
	std::vector<InputReads> FindUnchangedStorage();
	//! Fills the inputs' block identities where the storage shortcut may vouch for them.
	void LoadInputStorage(InputStorage &b, InputStorage &o, InputStorage &t);
	//! Compares table `index` into `object`; returns the name of its materialized decision table, or
	//! empty when the table needs no decisions.
	std::string CompareTable(size_t index, const InputReads &reads, bool counts,
	                         const std::vector<FrozenResolution> &resolutions, MergeObjectResult &object);
	//! Materializes the positions where a positional group differs into `positions` and returns the
	//! reads that use them; falls back to the key join for the whole table when the scans disagree.
	InputReads MatchPositions(const TableShape &table, const InputReads &reads, const std::string &positions);
	void CheckDropsAgainstChanges(TablePlan &table);
	void StageResult(const std::vector<std::string> &decision_tables, std::vector<MergeObjectResult> &objects);
	// The foreign key check (merge_foreign_keys.cpp).
	void CheckForeignKeys(std::vector<std::string> &decision_tables, std::vector<MergeObjectResult> &objects);
	void AddDecisionRows(size_t index, const std::string &keys, std::vector<std::string> &decision_tables);
	void FindViolations(const std::vector<std::string> &decision_tables, const std::vector<std::string> &violations);
	std::string DecisionTargets(size_t index, const std::vector<std::string> &violations);
	void ReportViolations(const ForeignKeyEdge &edge, const std::string &violations, MergeObjectResult &object);
	void ApplyRows(const std::vector<std::string> &decision_tables, std::vector<std::vector<std::string>> &statements,
	               const std::vector<std::vector<bool>> &updated);
	void PrepareStage();
	void StageTable(const TablePlan &table);
	void ApplyViews();
	void CheckViews();
	std::string Alias(MergeSide side) const;

	MergeOperation &operation;
	std::unique_ptr<duckdb::Connection> connection;
	std::string tag, base, ours, theirs, stage;
	SchemaPlan plan;
	std::vector<ForeignKeyEdge> foreign_keys;
	//! Table indexes, parents before children: staging creates and fills tables in this order and
	//! deletes rows and drops tables in the reverse one.
	std::vector<size_t> parents_first;
	//! Per table index, the temp table of its resolution decisions that matched no row conflict: they
	//! wait for the foreign key check.
	std::map<size_t, std::string> deferred_decisions;
	std::vector<std::string> attached;
	//! The marks database of each input alias that is virtual.
	std::map<std::string, std::string> marks_of;
	//! Set for a step of a virtual base: where its result and marks go.
	std::unique_ptr<StepAliases> step;
	//! The virtual base this session merges from, when it has one.
	std::unique_ptr<VirtualBase> virtual_base;
	int64_t row_conflicts = 0;
	MergeInputs inputs;
	SessionSettings settings;
};

} // namespace differential
