// A merge reads only published snapshots, through private read-only attachments, and builds its
// result on a private staging branch forked from ours; nothing reaches a visible branch here.
#include "merge/merge_session.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/process_identity.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/main/connection.hpp"
#include "merge/merge_sql.hpp"
#include "merge/storage_identity.hpp"
#include "merge/typed_value.hpp"
#include "storage/chunk_geometry.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <regex>
#include <tuple>
#include <unistd.h>

namespace differential {

using duckdb::LogicalType;
using duckdb::Value;

static constexpr const char *STAGING_PREFIX = "__merge-";

using Clock = std::chrono::steady_clock;

static int64_t MillisSince(Clock::time_point start) {
	return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

LogicalType ConflictDetailType() {
	duckdb::child_list_t<LogicalType> cell;
	cell.emplace_back("column_name", LogicalType::VARCHAR);
	cell.emplace_back("base", TypedValueType());
	cell.emplace_back("ours", TypedValueType());
	cell.emplace_back("theirs", TypedValueType());
	duckdb::child_list_t<LogicalType> fields;
	fields.emplace_back("key", LogicalType::LIST(TypedValueType()));
	fields.emplace_back("kind", LogicalType::VARCHAR);
	fields.emplace_back("columns", LogicalType::LIST(LogicalType::VARCHAR));
	fields.emplace_back("in_base", LogicalType::BOOLEAN);
	fields.emplace_back("in_ours", LogicalType::BOOLEAN);
	fields.emplace_back("in_theirs", LogicalType::BOOLEAN);
	fields.emplace_back("cells", LogicalType::LIST(LogicalType::STRUCT(std::move(cell))));
	return LogicalType::STRUCT(std::move(fields));
}

//! Staging branches are named __merge-<pid>-<n>; one whose process is gone belongs to a merge that
//! was interrupted before it published, and holds nothing anyone can see.
static void DropAbandonedStagingBranches(MetadataStore &metadata, const std::string &database) {
	static const std::regex staging_name("__merge-([0-9]+)-[0-9]+");
	for (auto &branch : metadata.history.ListBranches(database)) {
		std::smatch match;
		// Users cannot create names starting with "__", so only staging branches match.
		if (!std::regex_match(branch.name, match, staging_name)) {
			continue;
		}
		if (!ProcessAlive(std::atoll(match[1].str().c_str()), 0)) {
			metadata.lifecycle.DropBranch(database, branch.name);
		}
	}
}

MergeSession::MergeSession(duckdb::DatabaseInstance &instance, MetadataStore &metadata, std::string repository_p,
                           std::string database_p, const MergeInputs &inputs, const SessionSettings &settings,
                           MergeOperation &operation)
    : metadata(metadata), repository(std::move(repository_p)), database(std::move(database_p)), operation(operation),
      connection(std::make_unique<duckdb::Connection>(instance)) {
	static std::atomic<int64_t> counter {0};
	tag = std::to_string(getpid()) + "-" + std::to_string(++counter);
	base = "__merge_base@" + tag;
	ours = "__merge_ours@" + tag;
	theirs = "__merge_theirs@" + tag;
	stage = "__merge_stage@" + tag;
	ours_snapshot = inputs.ours;
	// The request's frozen settings: defaults, CHECKs and views are evaluated as on the first attempt.
	for (auto setting :
	     {std::make_pair("TimeZone", &settings.time_zone), std::make_pair("Calendar", &settings.calendar)}) {
		if (!setting.second->empty()) {
			connection->Query(std::string("SET ") + setting.first + " = " + SqlLiteral(*setting.second));
		}
	}
	try {
		Attach(base, "SNAPSHOT " + std::to_string(inputs.base) + ", READ_ONLY");
		Attach(ours, "SNAPSHOT " + std::to_string(inputs.ours) + ", READ_ONLY");
		Attach(theirs, "SNAPSHOT " + std::to_string(inputs.theirs) + ", READ_ONLY");
		operation.Phase("planning", 5);
		CatalogSide b, o, t;
		// Every input is read before refusing, so the refusal names the first unsupported object of
		// each input (one fix per branch, not one per attempt).
		std::string unsupported;
		for (auto side : {std::make_tuple(&b, &base, "the base"), std::make_tuple(&o, &ours, "ours"),
		                  std::make_tuple(&t, &theirs, "theirs")}) {
			try {
				*std::get<0>(side) = ReadCatalog(*connection, *std::get<1>(side), std::get<2>(side));
			} catch (DifferentialError &error) {
				if (error.code != "merge_unsupported") {
					throw;
				}
				auto message =
				    std::string(error.what()).substr(std::string("[differential:merge_unsupported] ").size());
				unsupported += (unsupported.empty() ? "" : " Also: ") + message;
			}
		}
		if (!unsupported.empty()) {
			Fail(ErrorKind::INVALID_INPUT, "merge_unsupported", unsupported);
		}
		plan = PlanSchema(b, o, t, settings.schema_mode);
	} catch (...) {
		// The destructor does not run for a constructor that throws: release the inputs here.
		DetachAll();
		throw;
	}
	conflict_limit = settings.conflict_limit;
	skip_unchanged = settings.skip_unchanged;
	this->inputs = inputs;
	conflict_offset = settings.conflict_offset;
}

MergeSession::~MergeSession() {
	DetachAll();
	if (!staging.empty() && !published) {
		try {
			metadata.lifecycle.DropBranch(database, staging);
		} catch (...) {
			// A leftover staging branch holds no published data; the next merge drops it.
		}
	}
}

std::string MergeSession::Alias(const std::string &side) const {
	return side == "ours" ? ours : side == "theirs" ? theirs : base;
}

void MergeSession::Attach(const std::string &alias, const std::string &options) {
	RunSql(*connection, "ATTACH " + SqlLiteral("differential:" + database) + " AS " + SqlIdentifier(alias) + " (" +
	                        options + ", REPOSITORY " + SqlLiteral(repository) + ")");
	attached.push_back(alias);
}

void MergeSession::DetachAll() {
	for (auto &alias : attached) {
		connection->Query("DETACH DATABASE IF EXISTS " + SqlIdentifier(alias));
	}
	attached.clear();
}

static int64_t Scalar(duckdb::Connection &connection, const std::string &sql) {
	int64_t value = 0;
	for (auto &row : QueryRows(connection, sql)) {
		value = row.GetBaseValue(0).IsNull() ? 0 : row.GetBaseValue(0).GetValue<int64_t>();
	}
	return value;
}

static int64_t DatabaseBytes(duckdb::Connection &connection, const std::string &alias) {
	return Scalar(connection, "SELECT total_blocks * block_size FROM pragma_database_size() WHERE database_name = " +
	                              SqlLiteral(alias));
}

//! The read budget is checked before comparing: the rows of every table side the comparison reads
//! (the storage shortcut reads fewer), and the size of the three input files.
void MergeSession::CheckReadBudget(const std::vector<InputReads> &reads) {
	auto &limits = operation.Limits();
	int64_t rows = 0;
	auto count = [&](const std::string &alias, const std::string &table, const std::string &where) {
		return Scalar(*connection, "SELECT count(*) FROM " + SqlIdentifier(alias) + ".main." + SqlIdentifier(table) +
		                               (where.empty() ? std::string() : " WHERE " + where));
	};
	for (size_t i = 0; i < plan.tables.size(); i++) {
		auto &table = plan.tables[i];
		auto &r = reads[i];
		if (r.ours_as_base && r.theirs_as_base) {
			continue;
		}
		auto &name = table.shape.name;
		if (table.shape.base.table_present) {
			rows += count(base, name, r.base_rows);
		}
		if (table.shape.ours.table_present && !r.ours_as_base) {
			rows +=
			    count(ours, name, r.ours_rows) + (r.ours_from_base.empty() ? 0 : count(base, name, r.ours_from_base));
		}
		if (table.shape.theirs.table_present && !r.theirs_as_base) {
			rows += count(theirs, name, r.theirs_rows) +
			        (r.theirs_from_base.empty() ? 0 : count(base, name, r.theirs_from_base));
		}
	}
	if (limits.max_rows_read > 0 && rows > limits.max_rows_read) {
		FailLimit("would read " + std::to_string(rows) + " rows", rows, limits.max_rows_read, "max_rows_read");
	}
	int64_t bytes =
	    DatabaseBytes(*connection, base) + DatabaseBytes(*connection, ours) + DatabaseBytes(*connection, theirs);
	if (limits.max_bytes_read > 0 && bytes > limits.max_bytes_read) {
		FailLimit("would read " + std::to_string(bytes) + " bytes", bytes, limits.max_bytes_read, "max_bytes_read");
	}
}

std::map<std::string, TableShape> MergeSession::ComparedTables() const {
	std::map<std::string, TableShape> out;
	for (auto &table : plan.tables) {
		if (table.merge_rows) {
			out[table.shape.name] = table.shape;
		}
	}
	return out;
}

static std::vector<Value> ConflictDetails(duckdb::Connection &connection, const TableShape &table,
                                          const std::string &decisions, int64_t limit, int64_t offset) {
	std::vector<Value> out;
	if (limit <= 0) {
		return out;
	}
	auto values = table.ValueColumns();
	auto nk = table.key.size();
	auto detail_type = ConflictDetailType();
	auto cell_type = duckdb::ListType::GetChildType(duckdb::StructType::GetChildType(detail_type, 6));
	for (auto &row : QueryRows(connection, ConflictQuery(table, decisions, limit, offset))) {
		duckdb::vector<Value> key;
		for (size_t i = 0; i < nk; i++) {
			key.push_back(MakeTypedValue(table.key[i], row.GetBaseValue(i)));
		}
		auto columns = row.GetBaseValue(nk + 4);
		duckdb::vector<Value> cells;
		for (auto &name : duckdb::ListValue::GetChildren(columns)) {
			for (size_t i = 0; i < values.size(); i++) {
				if (values[i] != name.ToString()) {
					continue;
				}
				auto at = nk + 5 + 3 * i;
				cells.push_back(Value::STRUCT({{"column_name", Value(values[i])},
				                               {"base", MakeTypedValue(values[i], row.GetBaseValue(at))},
				                               {"ours", MakeTypedValue(values[i], row.GetBaseValue(at + 1))},
				                               {"theirs", MakeTypedValue(values[i], row.GetBaseValue(at + 2))}}));
			}
		}

		out.push_back(Value::STRUCT(detail_type, {Value::LIST(TypedValueType(), key), row.GetBaseValue(nk + 3), columns,
		                                          row.GetBaseValue(nk), row.GetBaseValue(nk + 1),
		                                          row.GetBaseValue(nk + 2), Value::LIST(cell_type, cells)}));
	}
	return out;
}

void MergeSession::Run(bool stage_result, bool counts, const std::vector<FrozenResolution> &resolutions,
                       std::vector<MergeObjectResult> &objects) {
	std::vector<std::string> names;
	for (auto &table : plan.tables) {
		names.push_back(table.shape.name);
	}
	operation.SetTables(names);
	operation.Phase("comparison", 10);
	std::vector<InputReads> reads(plan.tables.size());
	FindUnchangedStorage(reads);
	CheckReadBudget(reads);
	std::vector<std::string> decision_tables(plan.tables.size());
	for (size_t i = 0; i < plan.tables.size(); i++) {
		operation.CheckDeadline();
		auto &table = plan.tables[i];
		MergeObjectResult object;
		object.object_type = "table";
		object.name = table.shape.name;
		if (!table.table_drop_check.empty() &&
		    Scalar(*connection, ChangedRowsQuery(table.shape, base, Alias(table.table_drop_check), "")) > 0) {
			table.schema_conflicts.push_back({"table_delete_modify", "",
			                                  "table " + QuoteName(table.shape.name) +
			                                      " was dropped on one side and "
			                                      "its rows changed on " +
			                                      table.table_drop_check});
		}
		for (auto &check : table.column_drop_checks) {
			if (Scalar(*connection, ChangedRowsQuery(table.shape, base, Alias(check.second), check.first)) > 0) {
				table.schema_conflicts.push_back({"column_delete_modify", check.first,
				                                  "column " + QuoteName(table.shape.name + "." + check.first) +
				                                      " was dropped on one side and changed on " + check.second});
			}
		}
		// A table whose definitions clash has no single shape to compare rows in.
		bool definitions_clash = false;
		for (auto &conflict : table.schema_conflicts) {
			definitions_clash = definitions_clash || conflict.kind == "merge_schema_conflict";
		}
		auto ours_same = reads[i].ours_as_base, theirs_same = reads[i].theirs_as_base;
		if (ours_same) {
			object.unchanged_sides.push_back("ours");
		}
		if (theirs_same) {
			object.unchanged_sides.push_back("theirs");
		}
		bool resolved = false;
		for (auto &resolution : resolutions) {
			resolved = resolved || resolution.table == table.shape.name;
		}
		// Neither side changed the table, or (when building the result) theirs did not: nothing to
		// decide or apply, since staging starts from ours. Decisions for it still get validated.
		bool untouched = (ours_same && theirs_same) || (!counts && theirs_same && !resolved);
		if (table.merge_rows && !definitions_clash && !untouched) {
			// Numbered, not named: table names differing only in case are one name to DuckDB.
			auto decisions = SqlIdentifier("__merge_decisions@" + tag + "@" + std::to_string(i));
			decision_tables[i] = decisions;
			RunSql(*connection, "CREATE TEMP TABLE " + decisions + " AS " +
			                        DecisionQuery(table.shape, base, ours, theirs, reads[i]));
			for (auto &resolution : resolutions) {
				if (resolution.table == table.shape.name) {
					ApplyResolution(*connection, table.shape, decisions, resolution,
					                "__merge_resolution@" + tag + "@" + std::to_string(i));
				}
			}
			int64_t *fields[] = {&object.counts.ours_inserts,   &object.counts.ours_updates,
			                     &object.counts.ours_deletes,   &object.counts.theirs_inserts,
			                     &object.counts.theirs_updates, &object.counts.theirs_deletes,
			                     &object.counts.conflicts,      &object.counts.resolved_conflicts};
			for (auto &row : QueryRows(*connection, CountQuery(decisions))) {
				for (size_t f = 0; f < 8; f++) {
					*fields[f] = row.GetBaseValue(f).GetValue<int64_t>();
				}
			}
			object.conflict_details =
			    ConflictDetails(*connection, table.shape, decisions, conflict_limit, conflict_offset);
			row_conflicts += object.counts.conflicts;
		}
		object.schema_changes = table.schema_changes;
		object.table_action = table.table_action;
		object.schema_conflicts = table.schema_conflicts;
		objects.push_back(object);
		operation.TableDone(i, "compared", object.counts);
	}
	for (auto &view : plan.views) {
		if (view.action.empty() && view.schema_conflicts.empty()) {
			continue;
		}
		MergeObjectResult object;
		object.object_type = "view";
		object.name = view.name;
		object.view_action = view.action;
		object.view_source = view.source;
		object.view_sql = view.sql;
		object.schema_conflicts = view.schema_conflicts;
		objects.push_back(object);
	}
	if (stage_result && row_conflicts == 0 && plan.SchemaConflicts() == 0) {
		operation.Phase("application", 60);
		auto start = Clock::now();
		PrepareStage();
		for (size_t i = 0; i < plan.tables.size(); i++) {
			operation.CheckDeadline();
			if (decision_tables[i].empty()) {
				operation.TableDone(i, "applied", objects[i].counts);
				continue;
			}
			for (auto &sql : ApplyStatements(plan.tables[i].shape, decision_tables[i], stage)) {
				RunSql(*connection, sql);
			}
			operation.TableDone(i, "applied", objects[i].counts);
		}
		ApplyViews();
		application_ms += MillisSince(start);
		CheckViews();
		// View conflicts found in the built result join their rows.
		for (auto &view : plan.views) {
			for (auto &conflict : view.schema_conflicts) {
				bool listed = false;
				for (auto &object : objects) {
					if (object.object_type == "view" && object.name == view.name) {
						listed = true;
						object.schema_conflicts.push_back(conflict);
					}
				}
				if (!listed) {
					MergeObjectResult object;
					object.object_type = "view";
					object.name = view.name;
					object.schema_conflicts.push_back(conflict);
					objects.push_back(object);
				}
			}
		}
		staged = plan.SchemaConflicts() == 0;
	}
	for (auto &decisions : decision_tables) {
		if (!decisions.empty()) {
			connection->Query("DROP TABLE IF EXISTS " + decisions);
		}
	}
}

//! A rowid predicate selecting the given row groups of a layout, as ranges of consecutive groups.
static std::string RowGroupRanges(const std::vector<size_t> &groups, const TableLayout &layout) {
	std::vector<std::string> ranges;
	for (size_t i = 0; i < groups.size();) {
		size_t j = i;
		while (j + 1 < groups.size() && groups[j + 1] == groups[j] + 1) {
			j++;
		}
		ranges.push_back("rowid BETWEEN " + std::to_string(layout.starts[groups[i]]) + " AND " +
		                 std::to_string(layout.starts[groups[j] + 1] - 1));
		i = j + 1;
	}
	return ranges.empty() ? "false" : "(" + JoinSql(ranges, " OR ", "false") + ")";
}

void MergeSession::FindUnchangedStorage(std::vector<InputReads> &reads) {
	if (!skip_unchanged) {
		return;
	}
	// The layout argument holds only for a side whose file was built from the base's by ordinary
	// snapshots (see storage_identity).
	auto graph = metadata.history.SnapshotParents(database);
	bool ours_descends = IsStorageAncestor(graph, inputs.base, inputs.ours);
	bool theirs_descends = IsStorageAncestor(graph, inputs.base, inputs.theirs);
	if (!ours_descends && !theirs_descends) {
		return;
	}
	// Chunk k holds block k - 1 only at DuckDB's default block size.
	for (auto alias : {base, ours, theirs}) {
		if (Scalar(*connection, "SELECT block_size FROM pragma_database_size() WHERE database_name = " +
		                            SqlLiteral(alias)) != int64_t(CHUNK_SIZE)) {
			return;
		}
	}
	auto base_chunks = SnapshotChunkHashes(metadata, repository, database, inputs.base);
	std::vector<Hash256> ours_chunks, theirs_chunks;
	if (ours_descends) {
		ours_chunks = SnapshotChunkHashes(metadata, repository, database, inputs.ours);
	}
	if (theirs_descends) {
		theirs_chunks = SnapshotChunkHashes(metadata, repository, database, inputs.theirs);
	}
	for (size_t i = 0; i < plan.tables.size(); i++) {
		auto &table = plan.tables[i];
		auto &shape = table.shape;
		if (!table.merge_rows || !table.schema_changes.empty() || !table.table_action.empty() ||
		    !shape.base.table_present || !shape.ours.table_present || !shape.theirs.table_present) {
			continue;
		}
		auto b = ReadTableLayout(*connection, base, shape.name, base_chunks);
		if (!b.known) {
			continue;
		}
		TableLayout o, t;
		if (ours_descends) {
			o = ReadTableLayout(*connection, ours, shape.name, ours_chunks);
		}
		if (theirs_descends) {
			t = ReadTableLayout(*connection, theirs, shape.name, theirs_chunks);
		}
		auto &r = reads[i];
		r.ours_as_base = o.known && o.groups == b.groups;
		r.theirs_as_base = t.known && t.groups == b.groups;
		if (!o.known || !t.known) {
			continue;
		}
		// Narrow to the row groups either side changed: a key outside them has the same row on all three
		// inputs (keys are unique, so a key in a row group equal to the base's is in no changed one).
		auto same_o = SameRowGroups(b, o), same_t = SameRowGroups(b, t);
		std::vector<size_t> base_groups, ours_groups, theirs_groups, ours_from_base, theirs_from_base;
		bool narrower = false;
		for (size_t g = 0; g < b.groups.size(); g++) {
			if (!same_o[g] || !same_t[g]) {
				base_groups.push_back(g);
			} else {
				narrower = true;
			}
			if (same_o[g] && !same_t[g]) {
				ours_from_base.push_back(g);
			}
			if (same_t[g] && !same_o[g]) {
				theirs_from_base.push_back(g);
			}
		}
		for (size_t g = 0; g < o.groups.size(); g++) {
			if (!same_o[g]) {
				ours_groups.push_back(g);
			}
		}
		for (size_t g = 0; g < t.groups.size(); g++) {
			if (!same_t[g]) {
				theirs_groups.push_back(g);
			}
		}
		if (!narrower) {
			continue;
		}
		r.base_rows = RowGroupRanges(base_groups, b);
		if (!r.ours_as_base) {
			r.ours_rows = RowGroupRanges(ours_groups, o);
			if (!ours_from_base.empty()) {
				r.ours_from_base = RowGroupRanges(ours_from_base, b);
			}
		}
		if (!r.theirs_as_base) {
			r.theirs_rows = RowGroupRanges(theirs_groups, t);
			if (!theirs_from_base.empty()) {
				r.theirs_from_base = RowGroupRanges(theirs_from_base, b);
			}
		}
	}
}

//! Runs statements written for the staging database (unqualified DDL as DuckDB rendered it) with the
//! staging database as the default catalog.
static void RunIn(duckdb::Connection &connection, const std::string &alias, const std::vector<std::string> &sql) {
	std::string previous = "memory";
	for (auto &row : QueryRows(connection, "SELECT current_database()")) {
		previous = row.GetBaseValue(0).ToString();
	}
	RunSql(connection, "USE " + SqlIdentifier(alias));
	try {
		for (auto &statement : sql) {
			RunSql(connection, statement);
		}
	} catch (...) {
		connection.Query("USE " + SqlIdentifier(previous));
		throw;
	}
	RunSql(connection, "USE " + SqlIdentifier(previous));
}

void MergeSession::PrepareStage() {
	DropAbandonedStagingBranches(metadata, database);
	staging = STAGING_PREFIX + tag;
	metadata.history.CreateBranch(database, staging, ours_snapshot);
	Attach(stage, "BRANCH " + SqlLiteral(staging));
	auto qualified = [&](const std::string &table) {
		return SqlIdentifier(stage) + ".main." + SqlIdentifier(table);
	};
	// Views theirs removed go first: a table theirs added may take the name.
	for (auto &view : plan.views) {
		if (view.stage_apply && view.sql.empty()) {
			RunSql(*connection, "DROP VIEW IF EXISTS " + qualified(view.name));
		}
	}
	for (auto &table : plan.tables) {
		if (table.stage_drop) {
			RunSql(*connection, "DROP TABLE " + qualified(table.shape.name));
		}
		if (!table.stage_create_sql.empty()) {
			std::vector<std::string> statements {table.stage_create_sql};
			statements.insert(statements.end(), table.stage_indexes.begin(), table.stage_indexes.end());
			RunIn(*connection, stage, statements);
		}
		for (auto &column : table.stage_add_columns) {
			RunSql(*connection, "ALTER TABLE " + qualified(table.shape.name) + " ADD COLUMN " +
			                        SqlIdentifier(column.name) + " " + column.type);
		}
		if (table.stage_drop_columns.empty()) {
			continue;
		}
		// DuckDB refuses to drop a column of a table with indexes: drop them, then recreate them.
		std::vector<std::string> indexes;
		for (auto &row :
		     QueryRows(*connection, "SELECT index_name, sql FROM duckdb_indexes() WHERE database_name = " +
		                                SqlLiteral(stage) + " AND table_name = " + SqlLiteral(table.shape.name))) {
			RunSql(*connection,
			       "DROP INDEX " + SqlIdentifier(stage) + ".main." + SqlIdentifier(row.GetBaseValue(0).ToString()));
			indexes.push_back(row.GetBaseValue(1).ToString());
		}
		for (auto &column : table.stage_drop_columns) {
			RunSql(*connection, "ALTER TABLE " + qualified(table.shape.name) + " DROP COLUMN " + SqlIdentifier(column));
		}
		RunIn(*connection, stage, indexes);
	}
}

void MergeSession::ApplyViews() {
	std::vector<const ViewPlan *> pending;
	for (auto &view : plan.views) {
		if (!view.stage_apply) {
			continue;
		}
		if (!view.sql.empty()) {
			pending.push_back(&view);
		}
	}
	// Views bind when created, so one that reads another waits for it: retry until a round makes no progress.
	while (!pending.empty()) {
		std::vector<const ViewPlan *> failed;
		std::map<const ViewPlan *, std::string> errors;
		for (auto *view : pending) {
			auto sql = view->sql;
			if (sql.rfind("CREATE VIEW", 0) == 0) {
				sql = "CREATE OR REPLACE VIEW" + sql.substr(11);
			}
			try {
				RunIn(*connection, stage, {sql});
			} catch (duckdb::Exception &e) {
				failed.push_back(view);
				errors[view] = duckdb::ErrorData(e).RawMessage();
			}
		}
		if (failed.size() == pending.size()) {
			for (auto &view : plan.views) {
				if (errors.count(&view)) {
					view.schema_conflicts.push_back(
					    {"view_binding", "",
					     "view " + QuoteName(view.name) +
					         " does not bind against the merged catalog: " + errors[&view]});
				}
			}
			return;
		}
		pending = failed;
	}
}

static std::string OutputShape(duckdb::Connection &connection, const std::string &alias, const std::string &view,
                               std::string &error) {
	auto result =
	    connection.Query("SELECT * FROM " + SqlIdentifier(alias) + ".main." + SqlIdentifier(view) + " LIMIT 0");
	if (result->HasError()) {
		error = result->GetErrorObject().RawMessage();
		return "";
	}
	std::string shape;
	for (size_t i = 0; i < result->ColumnCount(); i++) {
		shape += result->ColumnName(i).GetIdentifierName() + " " + result->GetTypes()[i].ToString() + ", ";
	}
	return shape;
}

void MergeSession::CheckViews() {
	for (auto &view : plan.views) {
		if (view.sql.empty() || !view.schema_conflicts.empty()) {
			continue;
		}
		std::string error;
		auto merged = OutputShape(*connection, stage, view.name, error);
		if (!error.empty()) {
			view.schema_conflicts.push_back(
			    {"view_binding", "",
			     "view " + QuoteName(view.name) + " does not bind against the merged catalog: " + error});
			continue;
		}
		std::string ignored;
		auto expected = OutputShape(*connection, Alias(view.output_side), view.name, ignored);
		if (merged != expected) {
			view.schema_conflicts.push_back({"view_output", "",
			                                 "view " + QuoteName(view.name) +
			                                     " would return other columns in the result (" + merged + ") than on " +
			                                     view.output_side + " (" + expected + ")"});
		}
	}
}

void MergeSession::FinishStaging() {
	auto start = Clock::now();
	operation.Phase("validation", 85);
	RunSql(*connection, "CHECKPOINT " + SqlIdentifier(stage));
	auto &limits = operation.Limits();
	auto grown = DatabaseBytes(*connection, stage) - DatabaseBytes(*connection, ours);
	if (limits.max_staging_bytes > 0 && grown > limits.max_staging_bytes) {
		FailLimit("grew its staging copy by " + std::to_string(grown) + " bytes", grown, limits.max_staging_bytes,
		          "max_staging_bytes");
	}
	DetachAll();
	application_ms += MillisSince(start);
}

} // namespace differential
