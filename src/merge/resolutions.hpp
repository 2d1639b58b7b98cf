// Resolution tables: user tables of decisions (the target table's columns plus _merge_action and
// _merge_columns) that settle conflicts; read once, frozen with the request, applied to the decisions.
#pragma once

#include "duckdb/common/types/value.hpp"
#include "merge/table_merge.hpp"

#include <map>
#include <string>
#include <vector>

namespace duckdb {
class ClientContext;
class Connection;
} // namespace duckdb

namespace differential {

//! One entry of resolution_tables => MAP {'main.orders': 'memory.main.price_decisions'}.
struct ResolutionSource {
	//! The target table (of the main schema).
	std::string table;
	//! The source as the caller wrote it: part of the request's identity.
	std::string written;
	//! The source resolved at bind as quoted catalog.schema.table, or empty with `problem` saying why
	//! not. A problem only matters when the decisions are read (a replay or a frozen retry never does).
	std::string resolved;
	std::string problem;
};
using ResolutionMapping = std::vector<ResolutionSource>;

//! Validates the argument's shape (bind time): text keys naming tables of the main schema, text values.
ResolutionMapping ParseResolutionMapping(const duckdb::Value &map);
//! Resolves each source table name as the caller's session does (search path, USE, quoting) into its
//! quoted catalog.schema.table; notes names that do not exist, views and temporary tables as problems
//! (merge_resolution_invalid when read). Runs at bind, in the caller's transaction.
void ResolveResolutionSources(duckdb::ClientContext &context, ResolutionMapping &mapping);
//! The mapping as canonical text, part of a request's arguments.
std::string CanonicalMapping(const ResolutionMapping &mapping);

//! One target table's decisions: its key columns and the rows, a LIST of STRUCT with the resolution
//! table's columns.
struct FrozenResolution {
	std::string table;
	std::vector<std::string> key;
	duckdb::Value rows;
};

//! Reads every mapped source table; refuses (merge_resolution_invalid) one that is missing, a view, a
//! temporary table, or a mapping to a table the merge does not have. `key_of` gives a table's key.
std::vector<FrozenResolution> ReadResolutionTables(duckdb::Connection &connection, const ResolutionMapping &mapping,
                                                   const std::map<std::string, TableShape> &tables);

std::string SerializeResolution(const FrozenResolution &resolution);
FrozenResolution DeserializeResolution(const std::string &table, const std::string &blob);

//! Checks the decisions against the table's shape and its conflicts, then settles every conflict a
//! decision covers completely (its action, merged values and `resolved`). Refuses invalid decisions.
//! With `defer_unmatched` (a table with foreign keys), decisions matching no row conflict are kept in
//! the temp table `scratch` for the foreign key check, and the result tells whether any were.
bool ApplyResolution(duckdb::Connection &connection, const TableShape &table, const std::string &decisions,
                     const FrozenResolution &resolution, const std::string &scratch, bool defer_unmatched = false);
//! Settles the deferred decisions (in `scratch`) whose keys `targets` holds: a relation of
//! __differential_k<i> (the table's key) and `role`, 'child' for a row violating a foreign key,
//! 'parent' for a missing parent row. Every targeted key must already have a row in `decisions`.
//! Returns how many decisions it settled; refuses one that does not suit its role.
int64_t SettleDeferredDecisions(duckdb::Connection &connection, const TableShape &table, const std::string &decisions,
                                const std::string &scratch, const std::string &targets);
//! Refuses the first deferred decision that matched nothing (merge_resolution_invalid) and drops `scratch`.
void RefuseDeferredDecisions(duckdb::Connection &connection, const TableShape &table, const std::string &scratch);

} // namespace differential
