// Scope checks of a view's query over DuckDB's parse tree: a single SELECT over tables of its own
// database's main schema, with joins, filters, grouping and modifiers whose expressions pass the rules.
#include "merge/scope_rules.hpp"
#include "merge/supported_scope.hpp"

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

namespace differential {

using duckdb::ExpressionClass;
using duckdb::ParsedExpression;
using scope_rules::CheckConstantExpression;
using scope_rules::CheckExpression;
using scope_rules::ErrorMessage;
using scope_rules::FunctionName;
using scope_rules::Lower;

namespace {

//! The expression rules under one setting, for the many expressions of a query.
class Rules {
public:
	Rules(bool allow_aggregates, bool *has_star) : allow_aggregates(allow_aggregates), has_star(has_star) {
	}
	std::string Check(const ParsedExpression &expr) const {
		return CheckExpression(expr, allow_aggregates, has_star);
	}
	//! The first reason among a list of expressions (owning pointers, null ones skipped), in order.
	template <class LIST>
	std::string First(const LIST &expressions) const {
		for (auto &expr : expressions) {
			auto reason = expr ? Check(*expr) : "";
			if (!reason.empty()) {
				return reason;
			}
		}
		return "";
	}

private:
	bool allow_aggregates;
	bool *has_star;
};

bool IsValuesList(const duckdb::QueryNode &node) {
	if (node.type != duckdb::QueryNodeType::SELECT_NODE) {
		return false;
	}
	auto &select = node.Cast<duckdb::SelectNode>();
	return select.from_table && select.from_table->type == duckdb::TableReferenceType::EXPRESSION_LIST;
}

std::string DescribeSetOperation(duckdb::SetOperationType type) {
	switch (type) {
	case duckdb::SetOperationType::UNION:
	case duckdb::SetOperationType::UNION_BY_NAME:
		return "uses UNION";
	case duckdb::SetOperationType::EXCEPT:
		return "uses EXCEPT";
	case duckdb::SetOperationType::INTERSECT:
		return "uses INTERSECT";
	default:
		return "uses a set operation";
	}
}

std::string CheckJoin(const duckdb::JoinRef &join) {
	switch (join.ref_type) {
	case duckdb::JoinRefType::REGULAR:
		switch (join.type) {
		case duckdb::JoinType::INNER:
		case duckdb::JoinType::LEFT:
		case duckdb::JoinType::RIGHT:
		case duckdb::JoinType::OUTER:
			return "";
		case duckdb::JoinType::SEMI:
			return "uses a SEMI join";
		case duckdb::JoinType::ANTI:
			return "uses an ANTI join";
		default:
			return "uses an unsupported join";
		}
	case duckdb::JoinRefType::CROSS:
		return "";
	case duckdb::JoinRefType::NATURAL:
		// Its condition is whatever columns the two sides share, which a merge of their schemas can change.
		return "uses a NATURAL join";
	case duckdb::JoinRefType::POSITIONAL:
		return "uses a POSITIONAL join";
	case duckdb::JoinRefType::ASOF:
		return "uses an ASOF join";
	case duckdb::JoinRefType::DEPENDENT:
		return "uses a LATERAL join";
	case duckdb::JoinRefType::NEAREST:
		return "uses a NEAREST join";
	default:
		return "uses an unsupported join";
	}
}

class ViewChecker {
public:
	explicit ViewChecker(ViewScope &scope) : scope(scope) {
	}

	std::string CheckQueryNode(const duckdb::QueryNode &node) {
		if (!node.cte_map.map.empty()) {
			return "uses a CTE";
		}
		switch (node.type) {
		case duckdb::QueryNodeType::SELECT_NODE:
			break;
		case duckdb::QueryNodeType::SET_OPERATION_NODE:
			return DescribeSetOperation(node.Cast<duckdb::SetOperationNode>().setop_type);
		case duckdb::QueryNodeType::CTE_NODE:
		case duckdb::QueryNodeType::RECURSIVE_CTE_NODE:
			return "uses a CTE";
		default:
			return "is not a single SELECT";
		}
		auto &select = node.Cast<duckdb::SelectNode>();
		if (select.sample) {
			return "uses a sample";
		}
		if (select.from_table) {
			auto reason = CheckTableRef(*select.from_table);
			if (!reason.empty()) {
				return reason;
			}
		}
		Rules rules(true, &scope.has_star);
		auto reason = rules.First(select.select_list);
		if (reason.empty()) {
			reason = rules.First(std::vector<const ParsedExpression *> {select.where_clause.get(), select.having.get(),
			                                                            select.qualify.get()});
		}
		if (reason.empty()) {
			reason = rules.First(select.groups.group_expressions);
		}
		return reason.empty() ? CheckModifiers(node) : reason;
	}

private:
	ViewScope &scope;

	void AddRelation(const std::string &name) {
		auto lower = Lower(name);
		if (std::find(scope.relations.begin(), scope.relations.end(), lower) == scope.relations.end()) {
			scope.relations.push_back(lower);
		}
	}

	std::string CheckModifiers(const duckdb::QueryNode &node) {
		// ORDER BY ALL and DISTINCT ON stars expand over the select list, not over the tables, so they do not count
		// as a star of the view.
		bool ignored_star = false;
		Rules rules(true, &ignored_star);
		for (auto &modifier : node.modifiers) {
			auto reason = CheckModifier(*modifier, rules);
			if (!reason.empty()) {
				return reason;
			}
		}
		return "";
	}

	static std::string CheckModifier(const duckdb::ResultModifier &modifier, const Rules &rules) {
		switch (modifier.type) {
		case duckdb::ResultModifierType::ORDER_MODIFIER: {
			std::vector<const ParsedExpression *> expressions;
			for (auto &order : modifier.Cast<duckdb::OrderModifier>().orders) {
				expressions.push_back(order.expression.get());
			}
			return rules.First(expressions);
		}
		case duckdb::ResultModifierType::DISTINCT_MODIFIER:
			return rules.First(modifier.Cast<duckdb::DistinctModifier>().distinct_on_targets);
		case duckdb::ResultModifierType::LIMIT_MODIFIER: {
			auto &limit = modifier.Cast<duckdb::LimitModifier>();
			return CheckLimit(limit.limit.get(), limit.offset.get());
		}
		case duckdb::ResultModifierType::LEGACY_LIMIT_PERCENT_MODIFIER: {
			auto &limit = modifier.Cast<duckdb::LegacyLimitPercentModifier>();
			return CheckLimit(limit.limit.get(), limit.offset.get());
		}
		default:
			return "uses an unsupported result modifier";
		}
	}

	static std::string CheckLimit(const ParsedExpression *limit, const ParsedExpression *offset) {
		if (limit && !CheckConstantExpression(*limit).empty()) {
			return "uses a LIMIT that is not a constant";
		}
		if (offset && !CheckConstantExpression(*offset).empty()) {
			return "uses an OFFSET that is not a constant";
		}
		return "";
	}

	std::string CheckTableRef(const duckdb::TableRef &ref) {
		if (ref.sample) {
			return "uses a sample";
		}
		switch (ref.type) {
		case duckdb::TableReferenceType::BASE_TABLE: {
			auto &table = ref.Cast<duckdb::BaseTableRef>();
			auto &name = table.GetQualifiedName();
			// Only schema main of the view's own database is recreated by the merge.
			if (name.Path().size() > 2 || (name.Path().size() == 2 && name.Schema() != "main")) {
				return "references " + name.ToString() + " outside its database";
			}
			if (table.at_clause) {
				return "reads " + name.ToString() + " at a fixed version or time";
			}
			auto &table_name = name.Name().GetIdentifierName();
			// FROM 'data.csv' parses like a table and is a replacement scan of a file when no such table exists.
			if (table_name.find_first_of("./\\:") != std::string::npos) {
				return "reads " + table_name + ", which may be a file rather than a table";
			}
			AddRelation(table_name);
			return "";
		}
		case duckdb::TableReferenceType::JOIN: {
			auto &join = ref.Cast<duckdb::JoinRef>();
			auto reason = CheckJoin(join);
			if (reason.empty() && join.left) {
				reason = CheckTableRef(*join.left);
			}
			if (reason.empty() && join.right) {
				reason = CheckTableRef(*join.right);
			}
			if (reason.empty() && join.condition) {
				Rules rules(false, &scope.has_star);
				reason = rules.Check(*join.condition);
			}
			return reason;
		}
		case duckdb::TableReferenceType::SUBQUERY: {
			auto &subquery = ref.Cast<duckdb::SubqueryRef>();
			// VALUES in FROM parses as a subquery over the list.
			if (subquery.subquery && subquery.subquery->node && IsValuesList(*subquery.subquery->node)) {
				return "uses a VALUES list";
			}
			return "uses a subquery";
		}
		case duckdb::TableReferenceType::TABLE_FUNCTION: {
			auto &function = ref.Cast<duckdb::TableFunctionRef>();
			if (function.function && function.function->GetExpressionClass() == ExpressionClass::FUNCTION) {
				return "reads the table function " +
				       FunctionName(function.function->Cast<duckdb::FunctionExpression>());
			}
			return "reads a table function";
		}
		case duckdb::TableReferenceType::EXPRESSION_LIST:
			return "uses a VALUES list";
		case duckdb::TableReferenceType::EMPTY_FROM:
			return "";
		case duckdb::TableReferenceType::PIVOT:
			return ref.Cast<duckdb::PivotRef>().unpivot_names.empty() ? "uses PIVOT" : "uses UNPIVOT";
		case duckdb::TableReferenceType::SHOW_REF:
			return "uses DESCRIBE or SUMMARIZE";
		default:
			return "uses an unsupported table reference";
		}
	}
};

} // namespace

ViewScope CheckView(const std::string &create_sql) {
	ViewScope scope;
	duckdb::vector<duckdb::unique_ptr<duckdb::SQLStatement>> statements;
	try {
		auto parser = duckdb::Parser::GetBuiltinParser();
		parser.ParseQuery(create_sql);
		statements = std::move(parser.statements);
	} catch (std::exception &e) {
		scope.unsupported = "cannot be parsed: " + ErrorMessage(e);
		return scope;
	} catch (...) {
		scope.unsupported = "cannot be parsed";
		return scope;
	}
	if (statements.size() != 1 || statements[0]->type != duckdb::StatementType::CREATE_STATEMENT) {
		scope.unsupported = "is not a single CREATE VIEW statement";
		return scope;
	}
	auto &create = statements[0]->Cast<duckdb::CreateStatement>();
	if (!create.info || create.info->type != duckdb::CatalogType::VIEW_ENTRY) {
		scope.unsupported = "is not a single CREATE VIEW statement";
		return scope;
	}
	auto &info = create.info->Cast<duckdb::CreateViewInfo>();
	if (!info.query || !info.query->node) {
		scope.unsupported = "has no query";
		return scope;
	}
	try {
		ViewChecker checker(scope);
		scope.unsupported = checker.CheckQueryNode(*info.query->node);
	} catch (std::exception &e) {
		scope.unsupported = "cannot be checked: " + ErrorMessage(e);
	}
	return scope;
}

} // namespace differential
