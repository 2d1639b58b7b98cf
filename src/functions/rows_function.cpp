// Shared plumbing of the table functions: argument reading, deferred execution, row output.
#include "functions/rows_function.hpp"

#include "common/background_thread.hpp"
#include "common/duckdb_errors.hpp"
#include "duckdb/common/types/timestamp.hpp"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>

namespace differential {

using namespace duckdb;

struct RowsBindData : public TableFunctionData {
	RowProducer producer;
	std::shared_ptr<std::atomic<double>> progress;
};

struct RowsState : public GlobalTableFunctionState {
	bool produced = false;
	Rows rows;
	idx_t next = 0;
	//! A producer that reports progress runs here (see Produced); joined before the state goes.
	BackgroundThread worker;
	std::mutex lock;
	std::condition_variable finished_signal;
	bool finished = false;
	std::exception_ptr error;
	//! The scan's task, parked while the producer runs: woken when it finishes. Parked, the task leaves its
	//! DuckDB thread free for the tasks of the producer's own queries (a merge's scans and checkpoint).
	InterruptState parked;
	bool is_parked = false;
	idx_t MaxThreads() const override {
		return 1;
	}
	~RowsState() override {
		worker.Join();
	}
};

unique_ptr<FunctionData> BindRows(const std::vector<ResultColumn> &columns, RowProducer producer,
                                  vector<LogicalType> &types, vector<Identifier> &names,
                                  std::shared_ptr<std::atomic<double>> progress) {
	for (auto &column : columns) {
		names.push_back(Identifier(column.name));
		types.push_back(column.type);
	}
	auto data = make_uniq<RowsBindData>();
	data->producer = std::move(producer);
	data->progress = std::move(progress);
	return std::move(data);
}

static unique_ptr<GlobalTableFunctionState> InitRows(ClientContext &, TableFunctionInitInput &) {
	return make_uniq<RowsState>();
}

//! Runs a progress-reporting producer on a thread of its own, so that DuckDB updates the query's progress
//! (the bar, query_progress()) while it runs: a producer that held the executing thread for the whole call
//! would show 0 until done. The scan parks its task until the producer finishes; where it cannot park, it
//! hands control back every 5 ms with an empty chunk.
//! Returns whether the rows are there (or rethrows the producer's error).
static bool Produced(ClientContext &context, const RowsBindData &bind, RowsState &state, TableFunctionInput &input) {
	if (!state.worker.Running()) {
		state.worker.Start("diff-call", [&context, &bind, &state] {
			Rows rows;
			std::exception_ptr error;
			try {
				rows = Translated([&]() { return bind.producer(context); });
			} catch (...) {
				error = std::current_exception();
			}
			InterruptState parked;
			bool wake = false;
			{
				std::lock_guard<std::mutex> guard(state.lock);
				state.rows = std::move(rows);
				state.error = error;
				state.finished = true;
				state.finished_signal.notify_all();
				std::swap(wake, state.is_parked);
				parked = state.parked;
			}
			if (wake) {
				parked.Callback();
			}
		});
	}
	std::unique_lock<std::mutex> guard(state.lock);
	if (!state.finished && input.interrupt_state && input.interrupt_state->CanCallback()) {
		// Blocked: DuckDB's client thread still updates the progress while it waits (every 20 ms at most).
		state.parked = *input.interrupt_state;
		state.is_parked = true;
		input.async_result = AsyncResultType::BLOCKED;
		return false;
	}
	if (!state.finished_signal.wait_for(guard, std::chrono::milliseconds(5), [&] { return state.finished; })) {
		input.async_result = AsyncResultType::HAVE_MORE_OUTPUT; // an empty chunk that is not the end
		return false;
	}
	guard.unlock();
	state.worker.Join();
	if (state.error) {
		std::rethrow_exception(state.error);
	}
	return true;
}

static void ScanRows(ClientContext &context, TableFunctionInput &input, DataChunk &output) {
	auto &state = input.global_state->Cast<RowsState>();
	if (!state.produced) {
		auto &bind = input.bind_data->Cast<RowsBindData>();
		// DuckDB's synchronous scan mode (a debug setting) allows no empty chunk before the end: run in place.
		if (bind.progress && input.results_execution_mode != AsyncResultsExecutionMode::SYNCHRONOUS) {
			if (!Produced(context, bind, state, input)) {
				output.SetCardinalityUnsafe(0);
				return;
			}
		} else {
			state.rows = Translated([&]() { return bind.producer(context); });
		}
		state.produced = true;
	}
	idx_t count = 0;
	while (state.next < state.rows.size() && count < STANDARD_VECTOR_SIZE) {
		auto &row = state.rows[state.next++];
		if (row.size() != output.ColumnCount()) {
			throw InternalException("differential: a row of %llu values for %llu columns",
			                        static_cast<unsigned long long>(row.size()),
			                        static_cast<unsigned long long>(output.ColumnCount()));
		}
		for (idx_t col = 0; col < row.size(); col++) {
			output.data[col].Append(row[col]);
		}
		count++;
	}
	output.SetCardinalityUnsafe(count);
}

//! DuckDB's progress bar polls this while the producer runs; -1 means "unknown".
static double RowsProgress(ClientContext &, const FunctionData *bind_data, const GlobalTableFunctionState *) {
	auto &data = bind_data->Cast<RowsBindData>();
	return data.progress ? data.progress->load() : -1;
}

TableFunction MakeRowsFunction(const std::string &name, vector<LogicalType> arguments, table_function_bind_t bind) {
	TableFunction function(Identifier(name), arguments, ScanRows, bind, InitRows);
	function.table_scan_progress = RowsProgress;
	return function;
}

std::string StringArgument(TableFunctionBindInput &input, size_t index, const std::string &what) {
	auto &value = input.inputs[index];
	if (value.IsNull()) {
		Fail(ErrorCode::INVALID_ARGUMENT, "The " + what + " must not be NULL.");
	}
	return value.ToString();
}

int64_t SnapshotArgument(TableFunctionBindInput &input, size_t index, const std::string &what) {
	if (input.inputs[index].IsNull()) {
		Fail(ErrorCode::INVALID_ARGUMENT, "The " + what + " snapshot must not be NULL.");
	}
	return input.inputs[index].GetValue<int64_t>();
}

std::optional<std::string> NamedString(TableFunctionBindInput &input, const std::string &name) {
	for (auto &entry : input.named_parameters) {
		if (StringUtil::Lower(entry.first.GetIdentifierName()) == name && !entry.second.IsNull()) {
			return entry.second.ToString();
		}
	}
	return std::nullopt;
}

std::optional<int64_t> NamedInteger(TableFunctionBindInput &input, const std::string &name) {
	for (auto &entry : input.named_parameters) {
		if (StringUtil::Lower(entry.first.GetIdentifierName()) == name && !entry.second.IsNull()) {
			return entry.second.GetValue<int64_t>();
		}
	}
	return std::nullopt;
}

Value OptionalText(bool present, const std::string &text) {
	return present ? Value(text) : Value(LogicalType::VARCHAR);
}

Value OptionalText(const std::optional<std::string> &text) {
	return text ? Value(*text) : Value(LogicalType::VARCHAR);
}

Value OptionalId(const std::optional<int64_t> &id) {
	return id ? Value::BIGINT(*id) : Value(LogicalType::BIGINT);
}

Value OptionalId(int64_t id) {
	return id >= 0 ? Value::BIGINT(id) : Value(LogicalType::BIGINT);
}

Value TimestampFromMicros(int64_t micros) {
	return Value::TIMESTAMPTZ(timestamp_tz_t(Timestamp::FromEpochMicroSeconds(micros)));
}

} // namespace differential
