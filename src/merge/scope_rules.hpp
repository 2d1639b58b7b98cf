// The expression rules of the scope checks (supported_scope.cpp), shared with the view checks
// (supported_views.cpp): what a view, a default or a CHECK may compute.
#pragma once

#include "duckdb/parser/expression/function_expression.hpp"
#include "duckdb/parser/parsed_expression.hpp"

#include <exception>
#include <string>

namespace differential {
namespace scope_rules {

std::string Lower(std::string text);
//! The readable part of a parser's exception.
std::string ErrorMessage(const std::exception &e);
//! Why `expr` is not a constant, a cast of one or arithmetic on constants (a default's shape, and a
//! LIMIT's), or empty.
std::string CheckConstantExpression(const duckdb::ParsedExpression &expr);
//! Why `expr` (and its children) is outside the scope, or empty. Aggregates only when allowed; a star
//! sets *has_star, or is refused when `has_star` is null.
std::string CheckExpression(const duckdb::ParsedExpression &expr, bool allow_aggregates, bool *has_star);
//! A function's name as messages show it (count(*) as count, qualified names in full).
std::string FunctionName(const duckdb::FunctionExpression &function);

} // namespace scope_rules
} // namespace differential
