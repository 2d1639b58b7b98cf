// Building a merge's result: a private staging branch forked from ours receives theirs' schema
// changes, the decided rows and the views; nothing reaches a visible branch here.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/process_identity.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/main/connection.hpp"
#include "merge/merge_session.hpp"
#include "merge/merge_sql.hpp"

#include <chrono>
#include <cstdlib>
#include <regex>

namespace differential {

static constexpr const char *STAGING_PREFIX = "__merge-";

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

//! View conflicts found in the built result join their view's row (or get one).
static void AddViewConflicts(const std::vector<ViewPlan> &views, std::vector<MergeObjectResult> &objects) {
	for (auto &view : views) {
		for (auto &conflict : view.schema_conflicts) {
			bool listed = false;
			for (auto &object : objects) {
				if (object.object_type == ObjectType::VIEW && object.name == view.name) {
					listed = true;
					object.schema_conflicts.push_back(conflict);
				}
			}
			if (!listed) {
				MergeObjectResult object;
				object.object_type = ObjectType::VIEW;
				object.name = view.name;
				object.schema_conflicts.push_back(conflict);
				objects.push_back(object);
			}
		}
	}
}

void MergeSession::StageResult(const std::vector<std::string> &decision_tables,
                               std::vector<MergeObjectResult> &objects) {
	operation.Phase(MergePhase::APPLICATION);
	auto start = std::chrono::steady_clock::now();
	PrepareStage();
	std::vector<std::vector<std::string>> statements(plan.tables.size());
	std::vector<std::vector<bool>> updated(plan.tables.size());
	for (size_t i = 0; i < plan.tables.size(); i++) {
		if (!decision_tables[i].empty()) {
			if (step) {
				MarkConflicts(i, decision_tables[i]);
			}
			auto &shape = plan.tables[i].shape;
			auto value_count = shape.ValueColumns().size();
			for (auto &row : QueryRows(*connection, UpdatedColumnsQuery(shape, decision_tables[i]))) {
				for (size_t c = 0; c < value_count; c++) {
					updated[i].push_back(row.GetBaseValue(c).GetValue<bool>());
				}
			}
			statements[i] = ApplyStatements(shape, decision_tables[i], stage, updated[i]);
		}
	}
	ApplyRows(decision_tables, statements, updated);
	for (auto i : parents_first) {
		operation.TableDone(i, TableState::APPLIED, objects[i].counts);
	}
	ApplyViews();
	application_ms += MillisSince(start);
	CheckViews();
	AddViewConflicts(plan.views, objects);
	staged = plan.SchemaConflicts() == 0;
}

//! Each statement commits on its own, so DuckDB checks foreign keys statement by statement: rows of
//! tables with foreign keys are inserted and updated parents first (a child may move to a new parent,
//! or away from one that goes), then deleted children first; other tables delete first, so that a
//! UNIQUE value may move from a deleted row to another. DuckDB updates a row's foreign key column as a
//! delete and an insert, which it refuses for a row other rows reference: where an update moves a row
//! that is itself a parent, the tables with foreign keys are rewritten whole from the merged rows.
void MergeSession::ApplyRows(const std::vector<std::string> &decision_tables,
                             std::vector<std::vector<std::string>> &statements,
                             const std::vector<std::vector<bool>> &updated) {
	std::vector<bool> linked(plan.tables.size(), false), parent(plan.tables.size(), false);
	for (auto &edge : foreign_keys) {
		linked[edge.child] = linked[edge.parent] = true;
		parent[edge.parent] = true;
	}
	bool rewrite = false;
	for (auto &edge : foreign_keys) {
		auto values = plan.tables[edge.child].shape.ValueColumns();
		for (size_t v = 0; v < values.size() && v < updated[edge.child].size(); v++) {
			for (auto &column : edge.columns) {
				rewrite = rewrite || (parent[edge.child] && updated[edge.child][v] && values[v] == column);
			}
		}
	}
	for (size_t i = 0; rewrite && i < plan.tables.size(); i++) {
		if (linked[i]) {
			auto &shape = plan.tables[i].shape;
			std::vector<std::string> columns, key;
			for (auto &c : shape.columns) {
				columns.push_back(SqlIdentifier(c));
			}
			for (auto &k : shape.key) {
				key.push_back(SqlIdentifier(k));
			}
			auto target = SqlIdentifier(stage) + ".main." + SqlIdentifier(shape.name);
			statements[i] = {"DELETE FROM " + target, "INSERT INTO " + target + " (" + JoinSql(columns, ", ", "") +
			                                              ") SELECT * FROM " +
			                                              MergedRows(shape, ours, decision_tables[i], shape.columns) +
			                                              " ORDER BY " + JoinSql(key, ", ", "1")};
		}
	}
	// Rewriting: every linked table is emptied (children first) before any is filled (parents first).
	for (auto it = parents_first.rbegin(); rewrite && it != parents_first.rend(); ++it) {
		if (linked[*it]) {
			RunSql(*connection, statements[*it].front());
		}
	}
	for (auto i : parents_first) {
		operation.CheckDeadline();
		for (size_t s = linked[i] ? 1 : 0; s < statements[i].size(); s++) {
			RunSql(*connection, statements[i][s]);
		}
	}
	for (auto it = parents_first.rbegin(); it != parents_first.rend(); ++it) {
		operation.CheckDeadline();
		if (!rewrite && linked[*it] && !statements[*it].empty()) {
			RunSql(*connection, statements[*it].front());
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
	if (step) {
		// A virtual base's step starts from a copy of ours in memory, as a merge starts from a fork of ours.
		RunSql(*connection, "ATTACH ':memory:' AS " + SqlIdentifier(stage));
		RunSql(*connection, "ATTACH ':memory:' AS " + SqlIdentifier(step->result_marks));
		RunSql(*connection, "COPY FROM DATABASE " + SqlIdentifier(ours) + " TO " + SqlIdentifier(stage));
	} else {
		DropAbandonedStagingBranches(metadata, database);
		staging = STAGING_PREFIX + tag;
		metadata.history.CreateBranch(database, staging, inputs.ours);
		Attach(stage, "BRANCH " + SqlLiteral(staging));
	}
	// Views theirs removed go first: a table theirs added may take the name.
	for (auto &view : plan.views) {
		if (view.stage_apply && view.sql.empty()) {
			RunSql(*connection, "DROP VIEW IF EXISTS " + SqlIdentifier(stage) + ".main." + SqlIdentifier(view.name));
		}
	}
	// A table is dropped after the tables referencing it, and created after the tables it references.
	for (auto it = parents_first.rbegin(); it != parents_first.rend(); ++it) {
		if (plan.tables[*it].stage_drop) {
			RunSql(*connection,
			       "DROP TABLE " + SqlIdentifier(stage) + ".main." + SqlIdentifier(plan.tables[*it].shape.name));
		}
	}
	for (auto i : parents_first) {
		StageTable(plan.tables[i]);
	}
}

//! Theirs' changes to one table's definition, made on ours' copy.
void MergeSession::StageTable(const TablePlan &table) {
	auto qualified = SqlIdentifier(stage) + ".main." + SqlIdentifier(table.shape.name);
	if (!table.stage_create_sql.empty()) {
		std::vector<std::string> statements {table.stage_create_sql};
		statements.insert(statements.end(), table.stage_indexes.begin(), table.stage_indexes.end());
		RunIn(*connection, stage, statements);
	}
	if (table.stage_copy_rows) {
		RunSql(*connection, "INSERT INTO " + qualified + " SELECT * FROM " + SqlIdentifier(theirs) + ".main." +
		                        SqlIdentifier(table.shape.name));
	}
	for (auto &column : table.stage_add_columns) {
		RunSql(*connection,
		       "ALTER TABLE " + qualified + " ADD COLUMN " + SqlIdentifier(column.name) + " " + column.type);
	}
	if (table.stage_drop_columns.empty()) {
		return;
	}
	// DuckDB refuses to drop a column of a table with indexes: drop them, then recreate them.
	std::vector<std::string> indexes;
	for (auto &row : QueryRows(
	         *connection, "SELECT index_name, sql FROM duckdb_indexes() WHERE database_name = " + SqlLiteral(stage) +
	                          " AND table_name = " + SqlLiteral(table.shape.name))) {
		RunSql(*connection,
		       "DROP INDEX " + SqlIdentifier(stage) + ".main." + SqlIdentifier(row.GetBaseValue(0).ToString()));
		indexes.push_back(row.GetBaseValue(1).ToString());
	}
	for (auto &column : table.stage_drop_columns) {
		RunSql(*connection, "ALTER TABLE " + qualified + " DROP COLUMN " + SqlIdentifier(column));
	}
	RunIn(*connection, stage, indexes);
}

static SchemaConflict ViewBinding(const std::string &view, const std::string &error) {
	return {ErrorCode::VIEW_BINDING, "",
	        "view " + QuoteName(view) + " does not bind against the merged catalog: " + error};
}

void MergeSession::ApplyViews() {
	std::vector<const ViewPlan *> pending;
	for (auto &view : plan.views) {
		if (view.stage_apply && !view.sql.empty()) {
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
					view.schema_conflicts.push_back(ViewBinding(view.name, errors[&view]));
				}
			}
			return;
		}
		pending = failed;
	}
}

//! A view's output columns and types, as text; `error` says why it does not bind.
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
			view.schema_conflicts.push_back(ViewBinding(view.name, error));
			continue;
		}
		std::string ignored;
		auto expected = OutputShape(*connection, Alias(view.output_side), view.name, ignored);
		if (merged != expected) {
			view.schema_conflicts.push_back({ErrorCode::VIEW_OUTPUT, "",
			                                 "view " + QuoteName(view.name) +
			                                     " would return other columns in the result (" + merged + ") than on " +
			                                     ToString(view.output_side) + " (" + expected + ")"});
		}
	}
}

void MergeSession::FinishStaging() {
	auto start = std::chrono::steady_clock::now();
	operation.Phase(MergePhase::VALIDATION);
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
