// A cell as merge results show it: the column, its SQL type and the value in a typed field by kind,
// so conflict details and resolution audits can be read in SQL without knowing every table's types.
#pragma once

#include "duckdb/common/types.hpp"
#include "duckdb/common/types/value.hpp"

#include <string>

namespace differential {

//! STRUCT(column_name, sql_type, is_null, boolean_value, integer_value HUGEINT, double_value,
//! varchar_value, blob_value, text_value): text_value is the value cast to VARCHAR.
duckdb::LogicalType TypedValueType();
duckdb::Value MakeTypedValue(const std::string &column, const duckdb::Value &value);
duckdb::Value TypedValueList(const std::vector<std::string> &columns, const std::vector<duckdb::Value> &values);

} // namespace differential
