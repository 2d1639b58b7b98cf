// Building a virtual base: the steps' sessions, the marks their conflicts leave, and the in-memory
// databases that hold both until the merge ends.
#include "merge/virtual_base.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/main/connection.hpp"
#include "merge/marked_cells.hpp"
#include "merge/merge_sql.hpp"
#include "merge/merge_steps.hpp"

namespace differential {

VirtualBasePlan VirtualBaseOf(MetadataStore &metadata, const std::string &database, int64_t ours, int64_t theirs) {
	auto graph = metadata.history.ReachableParents(database, {ours, theirs});
	auto ancestry = ComputeAncestry(graph, ours, theirs);
	if (ancestry.selection != BaseSelection::AMBIGUOUS) {
		return VirtualBasePlan();
	}
	return PlanVirtualBase(graph, ancestry.candidates);
}

VirtualBase::VirtualBase(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
                         const std::string &database, const MergeInputs &inputs, const SessionSettings &settings,
                         MergeOperation &operation, const std::string &tag)
    : instance(instance), metadata(metadata), repository(repository), database(database), tag(tag), settings(settings),
      operation(operation), connection(std::make_unique<duckdb::Connection>(instance)) {
	auto plan =
	    PlanVirtualBase(metadata.history.ReachableParents(database, {inputs.ours, inputs.theirs}), inputs.bases);
	RequireKeptInputs(metadata, database, plan.Snapshots());
	try {
		for (auto id : plan.Snapshots()) {
			auto alias = InputAlias(VirtualInput {id, -1});
			AttachInput(*connection, repository, database, alias, "SNAPSHOT " + std::to_string(id) + ", READ_ONLY");
			attached.push_back(alias);
		}
		for (size_t i = 0; i < plan.steps.size(); i++) {
			auto &step = plan.steps[i];
			VirtualInput self {-1, int64_t(i)};
			auto id = [](const VirtualInput &input) {
				return input.IsStep() ? -2 - input.step : input.snapshot;
			};
			StepAliases aliases {InputAlias(step.base),
			                     InputAlias(step.ours),
			                     InputAlias(step.theirs),
			                     MarksAlias(step.base),
			                     MarksAlias(step.ours),
			                     MarksAlias(step.theirs),
			                     InputAlias(self),
			                     MarksAlias(self),
			                     MergeInputs {id(step.base), id(step.ours), id(step.theirs), {}}};
			RunStep(i, step, aliases);
			result = aliases.result;
			result_marks = aliases.result_marks;
		}
	} catch (...) {
		// The destructor does not run for a constructor that throws: release the databases here.
		DetachAll();
		throw;
	}
}

VirtualBase::~VirtualBase() {
	DetachAll();
}

void VirtualBase::DetachAll() {
	for (auto &alias : attached) {
		connection->Query("DETACH DATABASE IF EXISTS " + SqlIdentifier(alias));
	}
	attached.clear();
}

std::string VirtualBase::InputAlias(const VirtualInput &input) const {
	return input.IsStep() ? "__merge_virtual" + std::to_string(input.step) + "@" + tag
	                      : "__merge_input" + std::to_string(input.snapshot) + "@" + tag;
}

std::string VirtualBase::MarksAlias(const VirtualInput &input) const {
	return input.IsStep() ? "__merge_marks" + std::to_string(input.step) + "@" + tag : "";
}

static std::string Named(const VirtualInput &input) {
	return input.IsStep() ? "the virtual base of step " + std::to_string(input.step + 1)
	                      : "snapshot " + std::to_string(input.snapshot);
}

void VirtualBase::RunStep(size_t index, const VirtualBaseStep &step, const StepAliases &aliases) {
	// Listed before the step runs: a step that fails part way leaves its databases for the cleanup.
	attached.push_back(aliases.result);
	attached.push_back(aliases.result_marks);
	auto context = "Building the virtual base (step " + std::to_string(index + 1) + ": " + Named(step.ours) + " and " +
	               Named(step.theirs) + " merged against " + Named(step.base) + "): ";
	try {
		MergeSession session(instance, metadata, repository, database, aliases, settings, operation);
		session.BuildVirtualStep();
	} catch (DifferentialError &error) {
		Fail(error.kind, error.code, context + error.detail);
	} catch (duckdb::Exception &error) {
		duckdb::ErrorData data(error);
		if (data.Type() != duckdb::ExceptionType::CONSTRAINT) {
			throw;
		}
		Fail(ErrorCode::MERGE_BASE_AMBIGUOUS,
		     context + "the merged ancestors violate a constraint (" + data.RawMessage() +
		         "), which a virtual base cannot hold; nothing was merged. Merge with differential_merge_snapshots "
		         "and an explicit base.");
	}
}

void MergeSession::BuildVirtualStep() {
	std::vector<MergeObjectResult> objects;
	Run(true, false, {}, objects);
	if (auto conflict = plan.FirstConflict()) {
		Fail(ErrorCode::MERGE_BASE_AMBIGUOUS,
		     "the best common ancestors' schemas conflict (" + std::string(ToString(conflict->kind)) + ": " +
		         conflict->message +
		         "), and a virtual base marks only conflicting rows and cells; nothing was merged. Merge with "
		         "differential_merge_snapshots and an explicit base.");
	}
}

std::string MergeSession::MarksTable(const std::string &alias, const std::string &table) {
	auto found = marks_of.find(alias);
	if (found == marks_of.end() ||
	    ScalarInt(*connection,
	              "SELECT count(*) FROM duckdb_tables() WHERE database_name = " + SqlLiteral(found->second) +
	                  " AND lower(table_name) = " + SqlLiteral(duckdb::StringUtil::Lower(table))) == 0) {
		return "";
	}
	return SqlIdentifier(found->second) + ".main." + SqlIdentifier(table);
}

void MergeSession::ReadMarks(size_t index, InputReads &reads) {
	if (plan.tables[index].whole) {
		return;
	}
	auto &name = plan.tables[index].shape.name;
	reads.base_marks = MarksTable(base, name);
	reads.ours_marks = MarksTable(ours, name);
	reads.theirs_marks = MarksTable(theirs, name);
}

bool MergeSession::HasMarks(const std::string &alias, const std::string &table) {
	auto marks = MarksTable(alias, table);
	return !marks.empty() && ScalarInt(*connection, "SELECT count(*) FROM " + marks) > 0;
}

void MergeSession::MarkConflicts(size_t index, const std::string &decisions) {
	auto &shape = plan.tables[index].shape;
	auto values = shape.ValueColumns();
	InputReads reads;
	ReadMarks(index, reads);
	std::vector<std::string> key, marked, any;
	for (size_t i = 0; i < shape.key.size(); i++) {
		key.push_back(Numbered("k_", i) + " AS " + SqlIdentifier(shape.key[i]));
	}
	for (size_t i = 0; i < values.size(); i++) {
		marked.push_back(ResultMark(shape, i, Marks(reads, i)));
	}
	auto list = MarkedColumnsList(shape, marked);
	RunSql(*connection, "CREATE TABLE " + SqlIdentifier(step->result_marks) + ".main." + SqlIdentifier(shape.name) +
	                        " AS SELECT " + JoinSql(key, ", ", "") + ", __differential_marked FROM (SELECT *, " + list +
	                        " AS __differential_marked FROM " + decisions +
	                        " WHERE action <> 'delete') WHERE len(__differential_marked) > 0");
	// The result keeps every conflicting row: ours' values where the sides disagree, the changed side's
	// row where one side deleted it.
	std::vector<std::string> set {"action = CASE WHEN action IN ('conflict:cell', 'conflict:insert_insert') THEN "
	                              "'update' WHEN action = 'conflict:delete_update' AND in_o THEN 'keep' WHEN action "
	                              "= 'conflict:delete_update' THEN 'insert' ELSE action END"};
	for (size_t i = 0; i < values.size(); i++) {
		set.push_back(Numbered("m_", i) + " = CASE WHEN action = 'conflict:delete_update' AND NOT in_o THEN " +
		              Numbered("t_", i) + " ELSE " + Numbered("m_", i) + " END");
	}
	RunSql(*connection, "UPDATE " + decisions + " SET " + JoinSql(set, ", ", ""));
}

} // namespace differential
