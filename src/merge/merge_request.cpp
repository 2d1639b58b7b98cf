// A merge request is durable: it records its inputs before the target is checked, every failed
// attempt leaves it pending with its error, and a retry recomputes from the frozen inputs, decisions
// and settings. Its identity is its arguments as canonical text.
#include "common/duckdb_errors.hpp"
#include "common/names.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "merge/merge_steps.hpp"

namespace differential {

std::string MergeOptions::Canonical() const {
	std::string out;
	if (schema_mode != SchemaMode::STRICT) {
		out += std::string("|schema_mode=") + ToString(schema_mode);
	}
	if (nested_mode != NestedMode::WHOLE) {
		out += std::string("|nested=") + ToString(nested_mode);
	}
	if (base_mode != BaseMode::SELECTED) {
		out += std::string("|base=") + ToString(base_mode);
	}
	if (!resolution_tables.empty()) {
		out += "|resolution_tables=" + CanonicalMapping(resolution_tables);
	}
	return out;
}

// Names in these are validated (letters, digits, '_', '-', '.'), so they cannot hold a separator.
std::string MergeBranchRequest::Canonical() const {
	auto opt = [](const std::optional<int64_t> &v) {
		return v ? std::to_string(*v) : std::string("-");
	};
	return std::string(MERGE_BRANCH_OPERATION) + "|" + database + "|" + target + "|" + source + "|" + destination +
	       "|" + opt(expected_base) + "|" + opt(expected_ours) + "|" + opt(expected_theirs);
}

std::string MergeSnapshotsRequest::Canonical() const {
	return std::string(MERGE_SNAPSHOTS_OPERATION) + "|" + database + "|" + std::to_string(base) + "|" +
	       std::to_string(ours) + "|" + std::to_string(theirs) + "|" + destination;
}

static MergeBranchResult FromRecord(const MergeRecord &record) {
	MergeBranchResult result;
	result.branch_name = record.branch_name;
	result.snapshot_id = record.snapshot_id;
	result.merge_action = ParseMergeAction(record.merge_action);
	result.base = record.base_snapshot_id;
	result.ours = record.ours_snapshot_id;
	result.theirs = record.theirs_snapshot_id;
	result.operation_id = record.operation_id;
	result.replayed = true;
	return result;
}

PriorRequest LookupRequest(MetadataStore &metadata, const std::string &database,
                           const std::optional<std::string> &request_id, const std::string &arguments) {
	PriorRequest prior;
	if (!request_id || !metadata.history.FindDatabase(database)) {
		return prior;
	}
	auto done = metadata.merges.FindMergeRequest(database, *request_id);
	if (!done) {
		return prior;
	}
	if (done->arguments != arguments) {
		Fail(ErrorCode::MERGE_REQUEST_MISMATCH,
		     "Request " + QuoteName(*request_id) +
		         " was already used with other arguments; nothing was merged. Use a new request_id for a different "
		         "merge.");
	}
	switch (done->state) {
	case RequestState::ABORTED:
		Fail(ErrorCode::MERGE_ABORTED,
		     "Request " + QuoteName(*request_id) +
		         " was aborted, which is final; nothing was merged. Start the merge again under a new request_id.");
	case RequestState::COMPLETE:
		prior.completed = FromRecord(*done);
		break;
	case RequestState::PENDING:
	case RequestState::PREPARED:
	case RequestState::UPLOADED:
	case RequestState::PUBLICATION_UNCERTAIN:
		prior.pending = *done;
		break;
	}
	return prior;
}

MergeRecord NewRecord(const std::optional<std::string> &request_id, const std::string &arguments,
                      const MergeBranchResult &inputs, const std::string &destination, MergeAction action) {
	MergeRecord record;
	record.request_id = request_id.value_or("");
	record.arguments = arguments;
	record.base_snapshot_id = inputs.base;
	record.ours_snapshot_id = inputs.ours;
	record.theirs_snapshot_id = inputs.theirs;
	record.branch_name = destination;
	record.merge_action = ToString(action);
	return record;
}

void TakeFrozenSettings(MergeRecord &record, const PriorRequest &prior, const MergeOptions &options) {
	record.time_zone = prior.pending ? prior.pending->time_zone : options.time_zone;
	record.calendar = prior.pending ? prior.pending->calendar : options.calendar;
}

//! The code and message a failed attempt leaves on its request. A DuckDB exception may carry one of
//! our refusals raised inside SQL we ran (see RaisedInside); anything else is DuckDB's own failure.
static std::pair<std::string, std::string> FailureOf(const std::exception &error) {
	if (auto *known = dynamic_cast<const DifferentialError *>(&error)) {
		return {ToString(known->code), known->what()};
	}
	if (!dynamic_cast<const duckdb::Exception *>(&error)) {
		return {ToString(ErrorCode::INTERNAL), error.what()};
	}
	duckdb::ErrorData data(error);
	auto raised = RaisedInside(data);
	return {ToString(raised ? raised->code : ErrorCode::INTERNAL), data.RawMessage()};
}

void Attempt(MetadataStore &metadata, const std::string &database, MergeRecord &record, MergeBranchResult &result,
             MergeOperation &operation, const std::function<void()> &attempt) {
	if (!record.request_id.empty()) {
		result.operation_id = metadata.merges.BeginMergeAttempt(database, record);
		operation.SetOperationId(result.operation_id);
	}
	try {
		attempt();
	} catch (std::exception &error) {
		if (!record.request_id.empty()) {
			auto failure = FailureOf(error);
			try {
				metadata.merges.RecordPendingMerge(database, record, failure.first, failure.second);
			} catch (...) {
				// The failure itself is what the caller must see.
			}
		}
		throw;
	}
}

std::vector<FrozenResolution> Resolutions(MetadataStore &metadata, MergeSession &session, const std::string &database,
                                          const std::string &request_id, const ResolutionMapping &mapping,
                                          bool &fresh) {
	std::vector<FrozenResolution> resolutions;
	fresh = false;
	if (!request_id.empty()) {
		for (auto &frozen : metadata.merges.FrozenResolutions(database, request_id)) {
			resolutions.push_back(DeserializeResolution(frozen.first, frozen.second));
		}
		if (!resolutions.empty()) {
			return resolutions;
		}
	}
	if (mapping.empty()) {
		return resolutions;
	}
	fresh = true;
	return ReadResolutionTables(session.Connection(), mapping, session.ComparedTables());
}

void Freeze(MetadataStore &metadata, const std::string &database, const std::string &request_id,
            const std::vector<FrozenResolution> &resolutions) {
	if (request_id.empty() || resolutions.empty()) {
		return;
	}
	std::vector<std::pair<std::string, std::string>> blobs;
	for (auto &resolution : resolutions) {
		blobs.emplace_back(resolution.table, SerializeResolution(resolution));
	}
	metadata.merges.FreezeResolutions(database, request_id, blobs);
}

} // namespace differential
