// Field-level decisions of STRUCT cells as SQL: one CASE per STRUCT level, the whole-value rule at the leaves.
#include "merge/struct_fields.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/common/types.hpp"
#include "duckdb/common/types/value.hpp"
#include "merge/table_merge.hpp"

namespace differential {

NestedMode ParseNestedMode(const std::optional<std::string> &mode) {
	if (!mode) {
		return NestedMode::WHOLE;
	}
	auto lower = duckdb::StringUtil::Lower(*mode);
	if (lower == "whole") {
		return NestedMode::WHOLE;
	}
	if (lower == "fields") {
		return NestedMode::FIELDS;
	}
	Fail(ErrorCode::INVALID_ARGUMENT, "nested " + QuoteName(*mode) + " is not one of 'whole' or 'fields'.");
}

const char *ToString(NestedMode mode) {
	return mode == NestedMode::FIELDS ? "fields" : "whole";
}

FieldTree FieldTreeOf(const std::string &name, const duckdb::LogicalType &type) {
	FieldTree tree;
	tree.name = name;
	tree.type = type.ToString();
	if (type.id() == duckdb::LogicalTypeId::STRUCT) {
		for (auto &child : duckdb::StructType::GetChildTypes(type)) {
			tree.fields.push_back(FieldTreeOf(child.first.GetIdentifierName(), child.second));
		}
	}
	return tree;
}

//! `parent.name`, quoting a name that holds a dot or a quote so that a path reads one way only.
static std::string FieldPath(const std::string &parent, const std::string &name) {
	if (name.find('.') == std::string::npos && name.find('"') == std::string::npos) {
		return parent + "." + name;
	}
	return parent + "." + SqlIdentifier(name);
}

static std::string FieldOf(const std::string &value, const std::string &field) {
	return "struct_extract(" + value + ", " + SqlLiteral(field) + ")";
}

static std::string AllPresent(const std::string &b, const std::string &o, const std::string &t) {
	return "(" + b + " IS NOT NULL AND " + o + " IS NOT NULL AND " + t + " IS NOT NULL)";
}

//! The STRUCT literal built from per-field expressions, cast to the declared type (a literal's types are inferred).
static std::string Rebuilt(const FieldTree &tree, const std::vector<std::string> &fields) {
	std::vector<std::string> packed;
	for (size_t i = 0; i < tree.fields.size(); i++) {
		packed.push_back(SqlLiteral(tree.fields[i].name) + ": " + fields[i]);
	}
	return "CAST({" + JoinSql(packed, ", ", "") + "} AS " + tree.type + ")";
}

CellDecision WholeValueDecision(const std::string &path, const std::string &b, const std::string &o,
                                const std::string &t) {
	CellDecision decision;
	decision.merged = "CASE WHEN " + o + " IS NOT DISTINCT FROM " + b + " THEN " + t + " ELSE " + o + " END";
	decision.conflict = "(" + o + " IS DISTINCT FROM " + b + " AND " + t + " IS DISTINCT FROM " + b + " AND " + o +
	                    " IS DISTINCT FROM " + t + ")";
	decision.parts.push_back({path, decision.conflict});
	return decision;
}

CellDecision FieldDecision(const FieldTree &tree, const std::string &path, const std::string &b, const std::string &o,
                           const std::string &t) {
	auto whole = WholeValueDecision(path, b, o, t);
	if (!tree.IsStruct()) {
		return whole;
	}
	auto all_present = AllPresent(b, o, t);
	CellDecision decision;
	decision.combines = true;
	// Where a side's STRUCT is NULL the value is decided whole, and a conflict is about the whole part.
	decision.parts.push_back({path, "(NOT " + all_present + " AND " + whole.conflict + ")"});
	std::vector<std::string> merged, conflicts;
	for (auto &field : tree.fields) {
		auto decided = FieldDecision(field, FieldPath(path, field.name), FieldOf(b, field.name), FieldOf(o, field.name),
		                             FieldOf(t, field.name));
		merged.push_back(decided.merged);
		conflicts.push_back(decided.conflict);
		for (auto &part : decided.parts) {
			decision.parts.push_back({part.path, "(" + all_present + " AND " + part.conflict + ")"});
		}
	}
	decision.merged = "CASE WHEN " + all_present + " THEN " + Rebuilt(tree, merged) + " ELSE " + whole.merged + " END";
	decision.conflict = "CASE WHEN " + all_present + " THEN (" + JoinSql(conflicts, " OR ", "false") + ") ELSE " +
	                    whole.conflict + " END";
	return decision;
}

bool ValueAtPath(const FieldTree &tree, const std::string &column, const std::string &path, const duckdb::Value &value,
                 duckdb::Value &out) {
	if (path == column) {
		out = value;
		return true;
	}
	for (size_t i = 0; i < tree.fields.size(); i++) {
		auto child = FieldPath(column, tree.fields[i].name);
		if (path != child && path.compare(0, child.size() + 1, child + ".") != 0) {
			continue;
		}
		auto type = duckdb::StructType::GetChildType(value.type(), i);
		auto field = value.IsNull() ? duckdb::Value(type) : duckdb::StructValue::GetChildren(value)[i];
		return ValueAtPath(tree.fields[i], child, path, field, out);
	}
	return false;
}

std::string ResolvedCell(const FieldTree &tree, const std::string &path, const CellChoice &in) {
	auto choice = in.choice(path);
	auto chosen =
	    "CASE " + choice + " WHEN 'ours' THEN " + in.o + " WHEN 'theirs' THEN " + in.t + " ELSE " + in.custom + " END";
	auto merged = WholeValueDecision(path, in.b, in.o, in.t).merged;
	if (tree.IsStruct()) {
		std::vector<std::string> fields;
		for (auto &field : tree.fields) {
			CellChoice sub {FieldOf(in.b, field.name), FieldOf(in.o, field.name), FieldOf(in.t, field.name),
			                FieldOf(in.custom, field.name), in.choice};
			fields.push_back(ResolvedCell(field, FieldPath(path, field.name), sub));
		}
		merged =
		    "CASE WHEN " + AllPresent(in.b, in.o, in.t) + " THEN " + Rebuilt(tree, fields) + " ELSE " + merged + " END";
	}
	return "CASE WHEN " + choice + " IS NOT NULL THEN " + chosen + " ELSE " + merged + " END";
}

} // namespace differential
