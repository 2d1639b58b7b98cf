// Scope checks over DuckDB's parse trees: a merge recreates views, defaults and CHECKs from their SQL text,
// so only SQL whose result depends on nothing but the rows it reads (no clock, randomness, sessions) passes.
// This file holds the expression rules; supported_views.cpp applies them to a view's query.
#include "merge/supported_scope.hpp"
#include "merge/scope_rules.hpp"

#include "duckdb/common/enums/catalog_type.hpp"
#include "duckdb/common/enums/expression_type.hpp"
#include "duckdb/common/enums/join_type.hpp"
#include "duckdb/common/enums/joinref_type.hpp"
#include "duckdb/common/enums/set_operation_type.hpp"
#include "duckdb/common/enums/statement_type.hpp"
#include "duckdb/common/enums/tableref_type.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/parser/expression/list.hpp"
#include "duckdb/parser/parsed_data/create_view_info.hpp"
#include "duckdb/parser/parsed_expression_iterator.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/qualified_name.hpp"
#include "duckdb/parser/query_node.hpp"
#include "duckdb/parser/query_node/select_node.hpp"
#include "duckdb/parser/query_node/set_operation_node.hpp"
#include "duckdb/parser/result_modifier.hpp"
#include "duckdb/parser/statement/create_statement.hpp"
#include "duckdb/parser/statement/select_statement.hpp"
#include "duckdb/parser/tableref/basetableref.hpp"
#include "duckdb/parser/tableref/expressionlistref.hpp"
#include "duckdb/parser/tableref/joinref.hpp"
#include "duckdb/parser/tableref/pivotref.hpp"
#include "duckdb/parser/tableref/subqueryref.hpp"
#include "duckdb/parser/tableref/table_function_ref.hpp"

#include <algorithm>
#include <cctype>
#include <unordered_set>

namespace differential {

using duckdb::ExpressionClass;
using duckdb::ExpressionType;
using duckdb::ParsedExpression;
using scope_rules::ErrorMessage;
using scope_rules::Lower;

namespace {

const char *const NOT_DETERMINISTIC = ", which is not on the merge's list of deterministic functions";
const char *const DEFAULT_SHAPE = ", but a default can only be a constant, a cast of a constant or arithmetic on "
                                  "constants";

//! Functions whose result depends only on their arguments. Anything missing, including user macros, is refused:
//! a merge re-evaluates the SQL later and elsewhere, and must get the same answer.
bool IsDeterministicFunction(const std::string &name) {
	static const std::unordered_set<std::string> names {
	    "abs", "round", "floor", "ceil", "ceiling", "sign", "lower", "upper", "length", "trim", "ltrim", "rtrim",
	    "substring", "substr", "concat", "concat_ws", "coalesce", "ifnull", "nullif", "least", "greatest", "contains",
	    "starts_with", "ends_with", "prefix", "suffix", "replace", "left", "right", "strlen", "date_part", "extract",
	    "date_trunc", "year", "month", "day", "hour", "minute", "second", "isnan", "isinf", "list_value", "struct_pack",
	    "row", "map", "array_length", "len", "list_contains",
	    // Operators parse as functions; LIKE ... ESCAPE becomes like_escape / ilike_escape.
	    "+", "-", "*", "/", "//", "%", "||", "~~", "!~~", "~~*", "!~~*", "^", "**", "like_escape", "ilike_escape"};
	return names.count(name) != 0;
}

//! The aggregates a view may use; count(*) parses as count_star.
bool IsAllowedAggregate(const std::string &name) {
	static const std::unordered_set<std::string> names {"count", "count_star", "sum", "min", "max", "avg"};
	return names.count(name) != 0;
}

bool IsArithmetic(const std::string &name) {
	static const std::unordered_set<std::string> names {"+", "-", "*", "/", "//", "%", "^", "**"};
	return names.count(name) != 0;
}

//! A bare name such as current_timestamp parses as a column reference and only becomes a function when binding
//! finds no such column, so these names are treated as the calls they usually are.
std::string SqlValueFunction(const duckdb::ColumnRefExpression &column) {
	static const std::unordered_set<std::string> names {
	    "current_catalog", "current_date", "current_schema", "current_role", "current_time", "current_timestamp",
	    "current_user",    "localtime",    "localtimestamp", "session_user", "user"};
	if (column.ColumnNames().size() != 1) {
		return "";
	}
	auto name = Lower(column.ColumnNames()[0].GetIdentifierName());
	return names.count(name) ? name : "";
}

std::string FunctionDisplayName(const duckdb::FunctionExpression &function) {
	auto &qualified = function.GetQualifiedName();
	if (qualified.Path().size() > 1) {
		return qualified.ToString();
	}
	auto name = Lower(function.FunctionName().GetIdentifierName());
	return name == "count_star" ? "count" : name;
}

std::string DescribeOperator(ExpressionType type) {
	switch (type) {
	case ExpressionType::OPERATOR_NOT:
		return "NOT";
	case ExpressionType::OPERATOR_IS_NULL:
	case ExpressionType::OPERATOR_IS_NOT_NULL:
		return "IS NULL";
	case ExpressionType::COMPARE_IN:
	case ExpressionType::COMPARE_NOT_IN:
		return "an IN list";
	case ExpressionType::OPERATOR_COALESCE:
		return "COALESCE";
	case ExpressionType::OPERATOR_UNPACK:
		return "UNPACK";
	case ExpressionType::OPERATOR_TRY:
		return "TRY";
	case ExpressionType::GROUPING_FUNCTION:
		return "GROUPING";
	case ExpressionType::ARRAY_CONSTRUCTOR:
		return "an ARRAY constructor";
	case ExpressionType::ARRAY_EXTRACT:
	case ExpressionType::ARRAY_SLICE:
	case ExpressionType::STRUCT_EXTRACT:
		return "a subscript";
	default:
		return "an unsupported operator";
	}
}

std::string Describe(const ParsedExpression &expr) {
	switch (expr.GetExpressionClass()) {
	case ExpressionClass::CASE:
		return "a CASE expression";
	case ExpressionClass::COMPARISON:
		return "a comparison";
	case ExpressionClass::CONJUNCTION:
		return "AND or OR";
	case ExpressionClass::BETWEEN:
		return "BETWEEN";
	case ExpressionClass::COLLATE:
		return "COLLATE";
	case ExpressionClass::OPERATOR:
		return DescribeOperator(expr.GetExpressionType());
	case ExpressionClass::STAR:
		return "a star";
	case ExpressionClass::LAMBDA:
	case ExpressionClass::LAMBDA_REF:
		return "a lambda";
	case ExpressionClass::PARAMETER:
		return "a parameter";
	case ExpressionClass::POSITIONAL_REFERENCE:
		return "a positional column reference";
	case ExpressionClass::DEFAULT:
		return "DEFAULT";
	case ExpressionClass::TYPE:
		return "a type expression";
	default:
		return "an unsupported expression";
	}
}

//! First non-empty reason among the children, in parse order.
template <class CHECK>
std::string CheckChildren(const ParsedExpression &expr, CHECK &&check) {
	std::string reason;
	duckdb::ParsedExpressionIterator::EnumerateChildren(expr, [&](const ParsedExpression &child) {
		if (reason.empty()) {
			reason = check(child);
		}
	});
	return reason;
}

std::string CheckDefaultExpression(const ParsedExpression &expr) {
	switch (expr.GetExpressionClass()) {
	case ExpressionClass::CONSTANT:
		return "";
	case ExpressionClass::CAST:
		return CheckChildren(expr, CheckDefaultExpression);
	case ExpressionClass::FUNCTION: {
		auto &function = expr.Cast<duckdb::FunctionExpression>();
		auto name = FunctionDisplayName(function);
		if (function.GetQualifiedName().Path().size() == 1 && IsArithmetic(name)) {
			return CheckChildren(expr, CheckDefaultExpression);
		}
		if (function.GetQualifiedName().Path().size() == 1 &&
		    (IsDeterministicFunction(name) || IsAllowedAggregate(Lower(function.FunctionName().GetIdentifierName())))) {
			return "calls " + name + DEFAULT_SHAPE;
		}
		return "calls " + name + NOT_DETERMINISTIC;
	}
	case ExpressionClass::COLUMN_REF: {
		auto &column = expr.Cast<duckdb::ColumnRefExpression>();
		auto function = SqlValueFunction(column);
		if (!function.empty()) {
			return "calls " + function + NOT_DETERMINISTIC;
		}
		return "references the column " + column.ToString();
	}
	case ExpressionClass::SUBQUERY:
		return "uses a subquery";
	case ExpressionClass::WINDOW:
		return "uses a window function";
	default:
		return "uses " + Describe(expr) + DEFAULT_SHAPE;
	}
}

//! Expressions of views and CHECKs. A CHECK is evaluated per row, so it gets neither aggregates nor stars.
class ExpressionRules {
public:
	ExpressionRules(bool allow_aggregates, bool *has_star) : allow_aggregates(allow_aggregates), has_star(has_star) {
	}

	std::string Check(const ParsedExpression &expr) const {
		auto reason = CheckNode(expr);
		if (!reason.empty()) {
			return reason;
		}
		return CheckChildren(expr, [this](const ParsedExpression &child) { return Check(child); });
	}

private:
	bool allow_aggregates;
	//! Null where stars are refused.
	bool *has_star;

	std::string CheckNode(const ParsedExpression &expr) const {
		switch (expr.GetExpressionClass()) {
		case ExpressionClass::CONSTANT:
		case ExpressionClass::CAST:
		case ExpressionClass::CASE:
		case ExpressionClass::COMPARISON:
		case ExpressionClass::CONJUNCTION:
		case ExpressionClass::BETWEEN:
		case ExpressionClass::COLLATE:
		case ExpressionClass::TYPE:
			return "";
		case ExpressionClass::COLUMN_REF: {
			auto function = SqlValueFunction(expr.Cast<duckdb::ColumnRefExpression>());
			return function.empty() ? "" : "calls " + function + NOT_DETERMINISTIC;
		}
		case ExpressionClass::OPERATOR:
			return CheckOperator(expr.GetExpressionType());
		case ExpressionClass::FUNCTION:
			return CheckFunction(expr.Cast<duckdb::FunctionExpression>());
		case ExpressionClass::STAR:
			if (!has_star) {
				return "uses a star";
			}
			*has_star = true;
			return "";
		case ExpressionClass::WINDOW:
			return "uses a window function";
		case ExpressionClass::SUBQUERY:
			return "uses a subquery";
		default:
			return "uses " + Describe(expr);
		}
	}

	std::string CheckOperator(ExpressionType type) const {
		switch (type) {
		case ExpressionType::OPERATOR_NOT:
		case ExpressionType::OPERATOR_IS_NULL:
		case ExpressionType::OPERATOR_IS_NOT_NULL:
		case ExpressionType::COMPARE_IN:
		case ExpressionType::COMPARE_NOT_IN:
		case ExpressionType::OPERATOR_COALESCE:
		case ExpressionType::OPERATOR_TRY:
		case ExpressionType::ARRAY_CONSTRUCTOR:
		case ExpressionType::ARRAY_EXTRACT:
		case ExpressionType::ARRAY_SLICE:
		case ExpressionType::STRUCT_EXTRACT:
			return "";
		case ExpressionType::GROUPING_FUNCTION:
			return allow_aggregates ? "" : "uses GROUPING";
		default:
			return "uses " + DescribeOperator(type);
		}
	}

	std::string CheckFunction(const duckdb::FunctionExpression &function) const {
		auto display = FunctionDisplayName(function);
		if (function.GetQualifiedName().Path().size() > 1) {
			// A qualified name can resolve to a macro or to another database's function.
			return "calls " + display + NOT_DETERMINISTIC;
		}
		auto name = Lower(function.FunctionName().GetIdentifierName());
		bool ordered = function.OrderBy() && !function.OrderBy()->orders.empty();
		if (IsAllowedAggregate(name)) {
			if (!allow_aggregates) {
				return "uses the aggregate function " + display;
			}
			if (ordered) {
				return "orders the input of the aggregate " + display;
			}
			if (function.ExportState()) {
				return "exports the state of the aggregate " + display;
			}
			return "";
		}
		if (!IsDeterministicFunction(name)) {
			return "calls " + display + NOT_DETERMINISTIC;
		}
		if (ordered) {
			return "orders the input of " + display;
		}
		return "";
	}
};

} // namespace

namespace scope_rules {

std::string Lower(std::string text) {
	std::transform(text.begin(), text.end(), text.begin(),
	               [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
	return text;
}

std::string ErrorMessage(const std::exception &e) {
	// what() of a DuckDB exception can be a JSON document; the raw message is the readable part.
	return duckdb::ErrorData(e).RawMessage();
}

std::string CheckConstantExpression(const ParsedExpression &expr) {
	return CheckDefaultExpression(expr);
}

std::string CheckExpression(const ParsedExpression &expr, bool allow_aggregates, bool *has_star) {
	ExpressionRules rules(allow_aggregates, has_star);
	return rules.Check(expr);
}

std::string FunctionName(const duckdb::FunctionExpression &function) {
	return FunctionDisplayName(function);
}

} // namespace scope_rules

namespace {

std::string ParseExpression(const std::string &text, duckdb::unique_ptr<ParsedExpression> &result) {
	try {
		auto parser = duckdb::Parser::GetBuiltinParser();
		auto expressions = parser.ParseExpressionList(text);
		if (expressions.size() != 1) {
			return "is not a single expression";
		}
		result = std::move(expressions[0]);
		return "";
	} catch (std::exception &e) {
		return "cannot be parsed: " + ErrorMessage(e);
	} catch (...) {
		return "cannot be parsed";
	}
}

template <class CHECK>
std::string CheckExpressionText(const std::string &text, CHECK &&check) {
	duckdb::unique_ptr<ParsedExpression> expr;
	auto reason = ParseExpression(text, expr);
	if (!reason.empty()) {
		return reason;
	}
	try {
		return check(*expr);
	} catch (std::exception &e) {
		return "cannot be checked: " + ErrorMessage(e);
	}
}

} // namespace

std::string CheckDefault(const std::string &expression) {
	return CheckExpressionText(expression, CheckDefaultExpression);
}

std::string CheckCheckConstraint(const std::string &expression) {
	return CheckExpressionText(expression, [](const ParsedExpression &expr) {
		ExpressionRules rules(false, nullptr);
		return rules.Check(expr);
	});
}

} // namespace differential
