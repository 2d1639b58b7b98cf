// The shape every differential table function shares: bind validates arguments and declares
// columns; the work runs once, at execution (never at bind, PREPARE or EXPLAIN), and its rows stream out.
#pragma once

#include "common/duckdb_errors.hpp"
#include "duckdb/function/table_function.hpp"
#include "duckdb/main/client_context.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>

namespace differential {

struct ResultColumn {
	std::string name;
	duckdb::LogicalType type;
};

using Rows = duckdb::vector<duckdb::vector<duckdb::Value>>;
using RowProducer = std::function<Rows(duckdb::ClientContext &context)>;

//! Declares the columns and keeps the producer to run at execution. A producer that reports its
//! progress (0-100) into `progress` shows it in DuckDB's progress bar.
duckdb::unique_ptr<duckdb::FunctionData> BindRows(const std::vector<ResultColumn> &columns, RowProducer producer,
                                                  duckdb::vector<duckdb::LogicalType> &types,
                                                  duckdb::vector<duckdb::Identifier> &names,
                                                  std::shared_ptr<std::atomic<double>> progress = nullptr);
//! A table function whose bind is `bind` and whose execution runs the bound producer once.
duckdb::TableFunction MakeRowsFunction(const std::string &name, duckdb::vector<duckdb::LogicalType> arguments,
                                       duckdb::table_function_bind_t bind);

//! Wraps a bind callback so its refusals reach SQL as DuckDB exceptions of the right type.
template <duckdb::table_function_bind_t BIND>
duckdb::unique_ptr<duckdb::FunctionData>
TranslatedBind(duckdb::ClientContext &context, duckdb::TableFunctionBindInput &input,
               duckdb::vector<duckdb::LogicalType> &types, duckdb::vector<duckdb::Identifier> &names) {
	return Translated([&]() { return BIND(context, input, types, names); });
}

//! Positional VARCHAR argument; refuses NULL.
std::string StringArgument(duckdb::TableFunctionBindInput &input, size_t index, const std::string &what);
//! Positional snapshot id; refuses NULL (the message names it as "the <what> snapshot").
int64_t SnapshotArgument(duckdb::TableFunctionBindInput &input, size_t index, const std::string &what);
std::optional<std::string> NamedString(duckdb::TableFunctionBindInput &input, const std::string &name);
std::optional<int64_t> NamedInteger(duckdb::TableFunctionBindInput &input, const std::string &name);

duckdb::Value OptionalText(bool present, const std::string &text);
duckdb::Value OptionalText(const std::optional<std::string> &text);
//! A snapshot id of a merge record, or NULL for the -1 it uses for "not known".
duckdb::Value OptionalId(int64_t id);
duckdb::Value OptionalId(const std::optional<int64_t> &id);
duckdb::Value TimestampFromMicros(int64_t micros);

} // namespace differential
