// differential_shipping(): the branches this process ships, with their chain position and the requests
// shipping made (an idle branch's count stays still).
#include "functions/function_access.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "replication/wal_shipper.hpp"

namespace differential {

using namespace duckdb;

static Rows ListShipping(ClientContext &context) {
	Rows rows;
	for (auto &status : ShipperStatuses()) {
		if (!MayListDatabase(context, status.database)) {
			continue;
		}
		rows.push_back({Value(status.database), Value(status.branch), Value(status.mode),
		                Value::BIGINT(status.interval_s), Value::BIGINT(int64_t(status.state.chain)),
		                Value::BIGINT(int64_t(status.state.seq)), Value::BIGINT(int64_t(status.counters.epochs)),
		                Value::BIGINT(int64_t(status.counters.chains)),
		                Value::BIGINT(int64_t(status.counters.requests)), Value::BIGINT(int64_t(status.pending)),
		                Value::BOOLEAN(status.state.fenced), Value(status.lease)});
	}
	return rows;
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	return BindRows(
	    {{"database_name", LogicalType::VARCHAR},
	     {"branch_name", LogicalType::VARCHAR},
	     {"mode", LogicalType::VARCHAR},
	     {"interval_s", LogicalType::BIGINT},
	     {"chain", LogicalType::BIGINT},
	     {"epoch", LogicalType::BIGINT},
	     {"epochs_shipped", LogicalType::BIGINT},
	     {"chains_started", LogicalType::BIGINT},
	     {"requests", LogicalType::BIGINT},
	     {"pending", LogicalType::BIGINT},
	     {"fenced", LogicalType::BOOLEAN},
	     {"lease", LogicalType::VARCHAR}},
	    [](ClientContext &context) { return ListShipping(context); }, types, names);
}

TableFunction ShippingFunction() {
	return MakeRowsFunction("differential_shipping", {}, TranslatedBind<Bind>);
}

} // namespace differential
