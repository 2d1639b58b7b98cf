// differential_merge_resolutions(database, request_id): the decisions a request froze at its first
// attempt, kept as an audit: one row per decision, ordered by table and key.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/resolutions.hpp"
#include "merge/typed_value.hpp"

#include <algorithm>

namespace differential {

using namespace duckdb;

struct DecisionRow {
	vector<Value> key;
	vector<Value> row;
};

static Rows DecisionRows(const FrozenResolution &resolution) {
	auto &row_type = ListType::GetChildType(resolution.rows.type());
	auto &fields = StructType::GetChildTypes(row_type);
	std::vector<DecisionRow> decisions;
	for (auto &row : ListValue::GetChildren(resolution.rows)) {
		DecisionRow decision;
		auto &values = StructValue::GetChildren(row);
		decision.row = vector<Value>(values.begin(), values.end());
		for (auto &k : resolution.key) {
			for (size_t i = 0; i < fields.size(); i++) {
				if (StringUtil::CIEquals(fields[i].first.GetIdentifierName(), k)) {
					decision.key.push_back(values[i]);
				}
			}
		}
		decisions.push_back(decision);
	}
	std::sort(decisions.begin(), decisions.end(), [](const DecisionRow &a, const DecisionRow &b) {
		for (size_t i = 0; i < a.key.size() && i < b.key.size(); i++) {
			if (a.key[i] != b.key[i]) {
				return a.key[i] < b.key[i];
			}
		}
		return false;
	});
	Rows rows;
	for (auto &decision : decisions) {
		std::vector<std::string> key_names(resolution.key.begin(), resolution.key.end());
		Value action(LogicalType::VARCHAR), columns(LogicalType::MAP(LogicalType::VARCHAR, LogicalType::VARCHAR));
		std::vector<std::string> value_names;
		std::vector<Value> values;
		for (size_t i = 0; i < fields.size(); i++) {
			auto name = fields[i].first.GetIdentifierName();
			if (StringUtil::CIEquals(name, "_merge_action")) {
				action = decision.row[i];
			} else if (StringUtil::CIEquals(name, "_merge_columns")) {
				columns = decision.row[i];
			} else {
				value_names.push_back(name);
				values.push_back(decision.row[i]);
			}
		}
		rows.push_back({Value(resolution.table),
		                TypedValueList(key_names, std::vector<Value>(decision.key.begin(), decision.key.end())), action,
		                columns, TypedValueList(value_names, values)});
	}
	return rows;
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	auto request_id = StringArgument(input, 1, "request id");
	ValidateName("request", request_id);
	return BindRows(
	    {{"table_name", LogicalType::VARCHAR},
	     {"key", LogicalType::LIST(TypedValueType())},
	     {"action", LogicalType::VARCHAR},
	     {"columns", LogicalType::MAP(LogicalType::VARCHAR, LogicalType::VARCHAR)},
	     {"row_values", LogicalType::LIST(TypedValueType())}},
	    [=](ClientContext &context) {
		    auto &metadata = *CurrentRepository(context)->metadata;
		    if (!metadata.merges.FindMergeRequest(database, request_id)) {
			    Fail(ErrorCode::MERGE_REQUEST_NOT_FOUND,
			         "Database " + QuoteName(database) + " has no merge request " + QuoteName(request_id) +
			             ". List them with differential_merge_requests('" + database + "').");
		    }
		    Rows rows;
		    for (auto &frozen : metadata.merges.FrozenResolutions(database, request_id)) {
			    for (auto &row : DecisionRows(DeserializeResolution(frozen.first, frozen.second))) {
				    rows.push_back(row);
			    }
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction MergeResolutionsFunction() {
	return MakeRowsFunction("differential_merge_resolutions", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                        TranslatedBind<Bind>);
}

} // namespace differential
