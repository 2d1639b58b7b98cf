// Which SQL a merge can recreate and re-evaluate deterministically: a view, a column DEFAULT, a CHECK.
// Decided from DuckDB's parse tree only, without binding, so anything the parser cannot vouch for is refused.
#pragma once

#include <string>
#include <vector>

namespace differential {

struct ViewScope {
	//! Empty when the view is inside the merge's scope; otherwise why not, as a phrase such as
	//! "uses a window function" or "reads the table function range".
	std::string unsupported;
	//! Unqualified names of the tables and views the view reads (deduplicated, lowercase), for dependency order.
	std::vector<std::string> relations;
	//! True when the select list has a star (SELECT * or t.*), whose output can change with the tables.
	bool has_star = false;
};

//! `create_sql` is duckdb_views().sql, e.g. "CREATE VIEW v AS SELECT a, b FROM t WHERE (d > 1);".
ViewScope CheckView(const std::string &create_sql);
//! `expression` is duckdb_columns().column_default text, e.g. "'x'" or "CAST(0 AS INTEGER)" or "now()".
//! Empty when allowed (constants, casts of constants, unary minus, arithmetic on constants); otherwise why not.
std::string CheckDefault(const std::string &expression);
//! `expression` is duckdb_constraints().expression of a CHECK, e.g. "(b != 'y')". Empty when allowed.
std::string CheckCheckConstraint(const std::string &expression);

} // namespace differential
