// differential_followers(): the FOLLOW attachments of this database instance, with the state each reads,
// when it last checked, how stale it may be and how many requests its polling made.
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "remote/remote_journal.hpp"
#include "replication/follower.hpp"

namespace differential {

using namespace duckdb;

//! `descriptor <sha256>` for an export; `chain <n> epoch <k> base <sha256>` for a shipped state.
static std::string StateText(const FollowState &state) {
	if (state.chain == 0) {
		return "descriptor " + HashToHex(state.descriptor);
	}
	return "chain " + std::to_string(state.chain) + " epoch " + std::to_string(state.seq) + " base " +
	       HashToHex(state.descriptor);
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	return BindRows(
	    {{"alias", LogicalType::VARCHAR},
	     {"head_url", LogicalType::VARCHAR},
	     {"follows", LogicalType::VARCHAR},
	     {"state", LogicalType::VARCHAR},
	     {"snapshot_id", LogicalType::BIGINT},
	     {"follow_interval", LogicalType::DOUBLE},
	     {"last_check", LogicalType::TIMESTAMP_TZ},
	     {"lag_ms", LogicalType::BIGINT},
	     {"requests", LogicalType::BIGINT},
	     {"last_error", LogicalType::VARCHAR},
	     {"takeover_as", LogicalType::VARCHAR},
	     {"lease", LogicalType::VARCHAR}},
	    [](ClientContext &context) {
		    Rows rows;
		    auto now = NowUnixMs();
		    for (auto &follower : Follower::Registered()) {
			    if (!follower->In(*context.db)) {
				    continue;
			    }
			    auto status = follower->Status();
			    rows.push_back({Value(status.alias), Value(status.head_url), Value(status.follows),
			                    Value(StateText(status.state)), Value::BIGINT(status.state.snapshot_id),
			                    Value::DOUBLE(status.interval_seconds),
			                    TimestampFromMicros(status.last_check_ms * 1000),
			                    Value::BIGINT(std::max<int64_t>(0, now - status.last_ok_ms)),
			                    Value::BIGINT(static_cast<int64_t>(status.requests)), OptionalText(status.last_error),
			                    OptionalText(status.takeover_as), OptionalText(status.lease)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction FollowersFunction() {
	return MakeRowsFunction("differential_followers", {}, TranslatedBind<Bind>);
}

} // namespace differential
