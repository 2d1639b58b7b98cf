// A merge reads only published snapshots, through private read-only attachments, and compares every
// table there; building the result on a private staging branch is merge_staging.cpp's part.
#include "merge/merge_session.hpp"

#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/parallel/task_scheduler.hpp"
#include "merge/merge_sql.hpp"
#include "merge/positional_match.hpp"
#include "merge/storage_identity.hpp"
#include "merge/typed_value.hpp"
#include "merge/virtual_base.hpp"

#include <algorithm>
#include <atomic>
#include <tuple>
#include <unistd.h>

namespace differential {

using duckdb::LogicalType;
using duckdb::Value;

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
	// A foreign_key_violation's parent table and the parent key it misses (NULL for other kinds).
	fields.emplace_back("parent_table", LogicalType::VARCHAR);
	fields.emplace_back("parent_key", LogicalType::LIST(TypedValueType()));
	return LogicalType::STRUCT(std::move(fields));
}

MergeSession::MergeSession(duckdb::DatabaseInstance &instance, MetadataStore &metadata, std::string repository_p,
                           std::string database_p, const MergeInputs &inputs_p, const SessionSettings &settings_p,
                           MergeOperation &operation)
    : metadata(metadata), repository(std::move(repository_p)), database(std::move(database_p)), operation(operation),
      connection(std::make_unique<duckdb::Connection>(instance)), inputs(inputs_p), settings(settings_p) {
	static std::atomic<int64_t> counter {0};
	tag = std::to_string(getpid()) + "-" + std::to_string(++counter);
	base = "__merge_base@" + tag;
	ours = "__merge_ours@" + tag;
	theirs = "__merge_theirs@" + tag;
	stage = "__merge_stage@" + tag;
	FreezeSettings(settings);
	try {
		if (inputs.bases.empty()) {
			Attach(base, "SNAPSHOT " + std::to_string(inputs.base) + ", READ_ONLY");
		} else {
			// A virtual base lives in memory: there is no stored layout to compare storage with.
			this->settings.skip_unchanged = false;
			virtual_base = std::make_unique<VirtualBase>(instance, metadata, repository, database, inputs,
			                                             this->settings, operation, tag);
			base = virtual_base->Result();
			marks_of[base] = virtual_base->ResultMarks();
		}
		Attach(ours, "SNAPSHOT " + std::to_string(inputs.ours) + ", READ_ONLY");
		Attach(theirs, "SNAPSHOT " + std::to_string(inputs.theirs) + ", READ_ONLY");
		Open(this->settings);
	} catch (...) {
		// The destructor does not run for a constructor that throws: release the inputs here.
		DetachAll();
		throw;
	}
}

MergeSession::MergeSession(duckdb::DatabaseInstance &instance, MetadataStore &metadata, std::string repository_p,
                           std::string database_p, const StepAliases &aliases, const SessionSettings &settings_p,
                           MergeOperation &operation)
    : metadata(metadata), repository(std::move(repository_p)), database(std::move(database_p)), operation(operation),
      connection(std::make_unique<duckdb::Connection>(instance)), inputs(aliases.ids), settings(settings_p) {
	static std::atomic<int64_t> counter {0};
	tag = std::to_string(getpid()) + "-step-" + std::to_string(++counter);
	base = aliases.base;
	ours = aliases.ours;
	theirs = aliases.theirs;
	stage = aliases.result;
	step = std::make_unique<StepAliases>(aliases);
	for (auto input : {std::make_pair(&base, &aliases.base_marks), std::make_pair(&ours, &aliases.ours_marks),
	                   std::make_pair(&theirs, &aliases.theirs_marks)}) {
		if (!input.second->empty()) {
			marks_of[*input.first] = *input.second;
		}
	}
	settings.skip_unchanged = false;
	FreezeSettings(settings);
	Open(settings);
}

void MergeSession::Open(const SessionSettings &frozen) {
	operation.Phase(MergePhase::PLANNING);
	ReadCatalogs(frozen);
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

//! The request's frozen settings: defaults, CHECKs and views are evaluated as on the first attempt.
//! A setting this process cannot take (ICU not loaded, say) stops the merge rather than letting it
//! evaluate them otherwise.
void MergeSession::FreezeSettings(const SessionSettings &frozen) {
	for (auto setting : {std::make_pair("TimeZone", &frozen.time_zone), std::make_pair("Calendar", &frozen.calendar)}) {
		if (setting.second->empty()) {
			continue;
		}
		auto result = connection->Query(std::string("SET ") + setting.first + " = " + SqlLiteral(*setting.second));
		if (result->HasError()) {
			Fail(ErrorCode::MERGE_SETTING_UNAVAILABLE,
			     std::string("The merge evaluates its inputs with ") + setting.first + " " +
			         QuoteName(*setting.second) +
			         ", frozen by the request's first attempt, but this session cannot "
			         "set it (" +
			         result->GetErrorObject().RawMessage() +
			         "); nothing was merged. LOAD icu (or the extension providing it) and retry, or start the merge "
			         "again under a new request_id.");
		}
	}
}

//! Every input is read before refusing, so the refusal names the first unsupported object of each
//! input (one fix per branch, not one per attempt).
void MergeSession::ReadCatalogs(const SessionSettings &settings) {
	CatalogSide b, o, t;
	std::string unsupported;
	for (auto side : {std::make_tuple(&b, &base, "the base"), std::make_tuple(&o, &ours, "ours"),
	                  std::make_tuple(&t, &theirs, "theirs")}) {
		try {
			*std::get<0>(side) = ReadCatalog(*connection, *std::get<1>(side), std::get<2>(side));
		} catch (DifferentialError &error) {
			if (error.code != ErrorCode::MERGE_UNSUPPORTED) {
				throw;
			}
			unsupported += (unsupported.empty() ? "" : " Also: ") + error.detail;
		}
	}
	if (!unsupported.empty()) {
		Fail(ErrorCode::MERGE_UNSUPPORTED, unsupported);
	}
	plan = PlanSchema(b, o, t, settings.schema_mode);
	foreign_keys = ResultForeignKeys(plan, o, t);
	parents_first = ParentsFirst(plan, foreign_keys);
	for (auto &table : plan.tables) {
		table.shape.nested_mode = settings.nested_mode;
	}
	DecideWholeTables();
}

std::string MergeSession::Alias(MergeSide side) const {
	return side == MergeSide::OURS ? ours : side == MergeSide::THEIRS ? theirs : base;
}

void MergeSession::Attach(const std::string &alias, const std::string &options) {
	AttachInput(*connection, repository, database, alias, options);
	attached.push_back(alias);
}

void MergeSession::DetachAll() {
	for (auto &alias : attached) {
		connection->Query("DETACH DATABASE IF EXISTS " + SqlIdentifier(alias));
	}
	attached.clear();
}

//! The read budget is checked before comparing: the rows of every table side the comparison reads
//! (the storage shortcut reads fewer), and the size of the three input files.
void MergeSession::CheckReadBudget(const std::vector<InputReads> &reads) {
	auto &limits = operation.Limits();
	int64_t rows = 0;
	auto count = [&](const std::string &alias, const std::string &table, const std::string &where) {
		return ScalarInt(*connection, "SELECT count(*) FROM " + SqlIdentifier(alias) + ".main." + SqlIdentifier(table) +
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
		// The positional groups are scanned on the base and each side that rewrote columns there.
		auto scanned = 1 + !r.ours_positional_columns.empty() + !r.theirs_positional_columns.empty();
		rows += r.positional_rows.empty() ? 0 : scanned * count(base, name, r.positional_rows);
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
		for (auto &entry : duckdb::ListValue::GetChildren(columns)) {
			auto name = entry.ToString();
			for (size_t i = 0; i < values.size(); i++) {
				// A STRUCT field's path (merging by field) shows the field's values, not the whole cell's.
				auto &fields = table.FieldsOf(values[i]);
				auto at = nk + 5 + 3 * i;
				Value sides[3];
				if (!ValueAtPath(fields, values[i], name, row.GetBaseValue(at), sides[0])) {
					continue;
				}
				ValueAtPath(fields, values[i], name, row.GetBaseValue(at + 1), sides[1]);
				ValueAtPath(fields, values[i], name, row.GetBaseValue(at + 2), sides[2]);
				cells.push_back(Value::STRUCT({{"column_name", Value(name)},
				                               {"base", MakeTypedValue(name, sides[0])},
				                               {"ours", MakeTypedValue(name, sides[1])},
				                               {"theirs", MakeTypedValue(name, sides[2])}}));
			}
		}

		out.push_back(Value::STRUCT(
		    detail_type, {Value::LIST(TypedValueType(), key), row.GetBaseValue(nk + 3), columns, row.GetBaseValue(nk),
		                  row.GetBaseValue(nk + 1), row.GetBaseValue(nk + 2), Value::LIST(cell_type, cells),
		                  Value(LogicalType::VARCHAR), Value(LogicalType::LIST(TypedValueType()))}));
	}
	return out;
}

static MergeObjectResult ViewObject(const ViewPlan &view) {
	MergeObjectResult object;
	object.object_type = ObjectType::VIEW;
	object.name = view.name;
	object.view_action = view.action;
	object.view_source = view.source;
	object.view_sql = view.sql;
	object.schema_conflicts = view.schema_conflicts;
	return object;
}

void MergeSession::Run(bool stage_result, bool counts, const std::vector<FrozenResolution> &resolutions,
                       std::vector<MergeObjectResult> &objects) {
	std::vector<std::string> names;
	for (auto &table : plan.tables) {
		names.push_back(table.shape.name);
	}
	operation.SetTables(names);
	operation.Phase(MergePhase::COMPARISON);
	auto reads = FindUnchangedStorage();
	LogTimer budget;
	CheckReadBudget(reads);
	LogEvent("read_budget_checked", budget.ElapsedMs(), "database " + database);
	std::vector<std::string> decision_tables(plan.tables.size());
	for (size_t i = 0; i < plan.tables.size(); i++) {
		operation.CheckDeadline();
		ReadMarks(i, reads[i]);
		MergeObjectResult object;
		LogTimer timer;
		decision_tables[i] = CompareTable(i, reads[i], counts, resolutions, object);
		LogEvent("table_compared", timer.ElapsedMs(), "table " + plan.tables[i].shape.name);
		objects.push_back(object);
		operation.TableDone(i, TableState::COMPARED, object.counts);
	}
	// Foreign keys are checked on a result whose every row is decided.
	if (!foreign_keys.empty() && row_conflicts == 0 && plan.SchemaConflicts() == 0 && !step) {
		CheckForeignKeys(decision_tables, objects);
	}
	for (auto &deferred : deferred_decisions) {
		connection->Query("DROP TABLE IF EXISTS " + SqlIdentifier(deferred.second));
	}
	deferred_decisions.clear();
	for (auto &view : plan.views) {
		if (view.action != ViewAction::NONE || !view.schema_conflicts.empty()) {
			objects.push_back(ViewObject(view));
		}
	}
	// A step of a virtual base keeps its conflicts as marks, so they do not stop it.
	if (stage_result && (row_conflicts == 0 || step) && plan.SchemaConflicts() == 0) {
		StageResult(decision_tables, objects);
	}
	for (auto &decisions : decision_tables) {
		if (!decisions.empty()) {
			connection->Query("DROP TABLE IF EXISTS " + decisions);
		}
	}
}

//! A removal on one side holds only if the other side left the removed data as in the base.
void MergeSession::CheckDropsAgainstChanges(TablePlan &table) {
	auto &name = table.shape.name;
	// A marked row of the base or of the checked side counts as changed.
	auto base_marked = HasMarks(base, name);
	if (table.table_drop_check != MergeSide::NONE &&
	    (base_marked || HasMarks(Alias(table.table_drop_check), name) ||
	     ScalarInt(*connection, ChangedRowsQuery(table.shape, base, Alias(table.table_drop_check), "")) > 0)) {
		table.schema_conflicts.push_back({ErrorCode::TABLE_DELETE_MODIFY, "",
		                                  "table " + QuoteName(name) +
		                                      " was dropped on one side and its rows changed on " +
		                                      ToString(table.table_drop_check)});
	}
	for (auto &check : table.column_drop_checks) {
		if (base_marked || HasMarks(Alias(check.second), name) ||
		    ScalarInt(*connection, ChangedRowsQuery(table.shape, base, Alias(check.second), check.first)) > 0) {
			table.schema_conflicts.push_back({ErrorCode::COLUMN_DELETE_MODIFY, check.first,
			                                  "column " + QuoteName(name + "." + check.first) +
			                                      " was dropped on one side and changed on " + ToString(check.second)});
		}
	}
}

TableMergeCounts ReadCounts(duckdb::Connection &connection, const std::string &decisions) {
	TableMergeCounts counts;
	int64_t *fields[] = {&counts.ours_inserts,   &counts.ours_updates,      &counts.ours_deletes,
	                     &counts.theirs_inserts, &counts.theirs_updates,    &counts.theirs_deletes,
	                     &counts.conflicts,      &counts.resolved_conflicts};
	for (auto &row : QueryRows(connection, CountQuery(decisions))) {
		for (size_t f = 0; f < 8; f++) {
			*fields[f] = row.GetBaseValue(f).GetValue<int64_t>();
		}
	}
	return counts;
}

std::string MergeSession::CompareTable(size_t index, const InputReads &reads, bool counts,
                                       const std::vector<FrozenResolution> &resolutions, MergeObjectResult &object) {
	auto &table = plan.tables[index];
	object.object_type = ObjectType::TABLE;
	object.name = table.shape.name;
	CheckDropsAgainstChanges(table);
	object.schema_changes = table.schema_changes;
	object.table_action = table.table_action;
	if (table.whole) {
		object.counts = table.whole_counts;
		object.unchanged_sides = table.unchanged_sides;
		return "";
	}
	object.schema_conflicts = table.schema_conflicts;
	// A table whose definitions clash has no single shape to compare rows in.
	bool definitions_clash = false;
	for (auto &conflict : table.schema_conflicts) {
		definitions_clash = definitions_clash || conflict.kind == ErrorCode::MERGE_SCHEMA_CONFLICT;
	}
	if (reads.ours_as_base) {
		object.unchanged_sides.push_back(MergeSide::OURS);
	}
	if (reads.theirs_as_base) {
		object.unchanged_sides.push_back(MergeSide::THEIRS);
	}
	bool resolved = false;
	for (auto &resolution : resolutions) {
		resolved = resolved || resolution.table == table.shape.name;
	}
	// Neither side changed the table, or (when building the result) theirs did not: nothing to
	// decide or apply, since staging starts from ours. Decisions for it still get validated.
	bool untouched = !resolved && ((reads.ours_as_base && reads.theirs_as_base) || (!counts && reads.theirs_as_base));
	if (!table.merge_rows || definitions_clash || untouched) {
		return "";
	}
	// Numbered, not named: table names differing only in case are one name to DuckDB.
	auto decisions = SqlIdentifier("__merge_decisions@" + tag + "@" + std::to_string(index));
	auto positions = SqlIdentifier("__merge_positions@" + tag + "@" + std::to_string(index));
	auto used = MatchPositions(table.shape, reads, positions);
	RunSql(*connection,
	       "CREATE TEMP TABLE " + decisions + " AS " + DecisionQuery(table.shape, base, ours, theirs, used));
	if (!used.positions.empty()) {
		RunSql(*connection, "DROP TABLE " + positions);
	}
	bool has_foreign_keys = false;
	for (auto &edge : foreign_keys) {
		has_foreign_keys = has_foreign_keys || edge.child == index || edge.parent == index;
	}
	for (auto &resolution : resolutions) {
		auto scratch = "__merge_resolution@" + tag + "@" + std::to_string(index);
		if (resolution.table == table.shape.name &&
		    ApplyResolution(*connection, table.shape, decisions, resolution, scratch, has_foreign_keys)) {
			deferred_decisions[index] = scratch;
		}
	}
	object.counts = ReadCounts(*connection, decisions);
	object.conflict_details =
	    ConflictDetails(*connection, table.shape, decisions, settings.conflict_limit, settings.conflict_offset);
	row_conflicts += object.counts.conflicts;
	return decisions;
}

InputReads MergeSession::MatchPositions(const TableShape &table, const InputReads &reads,
                                        const std::string &positions) {
	if (reads.positional_rows.empty()) {
		return reads;
	}
	LogTimer timer;
	// One part per thread; the parts run in parallel only where the result need not keep their order
	// (nothing reads the positions in order), so insertion order is off for this one statement.
	auto threads = duckdb::TaskScheduler::GetScheduler(*connection->context).NumberOfThreads();
	auto parts = std::max<size_t>(1, std::min<size_t>(threads, reads.positional_groups.size()));
	RunSql(*connection, "SET SESSION preserve_insertion_order = false");
	try {
		RunSql(*connection,
		       "CREATE TEMP TABLE " + positions + " AS " + PositionsQuery(table, base, ours, theirs, reads, parts));
	} catch (...) {
		connection->Query("RESET SESSION preserve_insertion_order");
		throw;
	}
	RunSql(*connection, "RESET SESSION preserve_insertion_order");
	if (ScalarInt(*connection, "SELECT count(*) FROM " + positions + " WHERE misaligned") == 0) {
		if (LogEnabled()) {
			LogEvent("positions_matched", timer.ElapsedMs(),
			         "table " + table.name + ": " + std::to_string(reads.ours_positional_columns.size()) + " + " +
			             std::to_string(reads.theirs_positional_columns.size()) + " column(s) compared by position, " +
			             std::to_string(ScalarInt(*connection, "SELECT count(*) FROM " + positions)) +
			             " row(s) differ, in " + std::to_string(parts) + " part(s)");
		}
		auto used = reads;
		used.positions = positions;
		return used;
	}
	// Equal live counts with other deleted rows: the storage argument does not hold for this table,
	// so every row of it is matched by key, as the reference method does.
	RunSql(*connection, "DROP TABLE " + positions);
	LogWarning("positions_misaligned",
	           "table " + table.name + ": rows at one position differ in rowid between the inputs; matched by key");
	InputReads whole;
	whole.ours_as_base = reads.ours_as_base;
	whole.theirs_as_base = reads.theirs_as_base;
	return whole;
}

void MergeSession::LoadInputStorage(InputStorage &b, InputStorage &o, InputStorage &t) {
	// The layout argument holds only for a side whose file was built from the base's by ordinary
	// snapshots (see storage_identity).
	auto graph = metadata.history.ReachableParents(database, {inputs.ours, inputs.theirs});
	bool ours_descends = IsStorageAncestor(graph, inputs.base, inputs.ours);
	bool theirs_descends = IsStorageAncestor(graph, inputs.base, inputs.theirs);
	bool distinguishable = ours_descends || theirs_descends;
	for (auto &alias : {base, ours, theirs}) {
		distinguishable = distinguishable && BlockIdentity::Distinguishes(DatabaseBlockSize(*connection, alias));
	}
	if (!distinguishable) {
		return;
	}
	auto blocks = [&](int64_t snapshot) {
		return BlockIdentity::Load(metadata.files, SnapshotDatabaseFile(repository, database, snapshot));
	};
	b.blocks = blocks(inputs.base);
	if (ours_descends) {
		o.blocks = blocks(inputs.ours);
	}
	if (theirs_descends) {
		t.blocks = blocks(inputs.theirs);
	}
}

std::vector<InputReads> MergeSession::FindUnchangedStorage() {
	InputStorage b {base, {}}, o {ours, {}}, t {theirs, {}};
	if (!settings.skip_unchanged) {
		return UnchangedStorageReads(*connection, plan.tables, b, o, t);
	}
	LoadInputStorage(b, o, t);
	LogTimer timer;
	auto reads = UnchangedStorageReads(*connection, plan.tables, b, o, t);
	LogEvent("storage_layout_read", timer.ElapsedMs(), "database " + database);
	return reads;
}

} // namespace differential
