// A merge's three inputs come from recorded ancestry only: the heads of both branches and their
// unique best common ancestor, or three snapshots the caller names; all must still be kept.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "merge/ancestry.hpp"
#include "merge/merge_steps.hpp"

namespace differential {

void RequireDatabase(MetadataStore &metadata, const std::string &database) {
	if (!metadata.history.FindDatabase(database)) {
		Fail(ErrorCode::DATABASE_NOT_FOUND,
		     "Database " + QuoteName(database) + " does not exist. List databases with differential_databases().");
	}
}

//! The base selection of two snapshots (selection, base, candidates): a walk that stops at the base; the whole
//! reachable graph only if ids ever broke creation order.
static Ancestry SelectBase(MetadataStore &metadata, const std::string &database, int64_t ours, int64_t theirs) {
	auto walked = SelectBaseByWalk(metadata.history.ParentReader(database), ours, theirs);
	return walked ? *walked
	              : ComputeAncestry(metadata.history.ReachableParents(database, {ours, theirs}), ours, theirs);
}

MergeBranchResult SelectInputs(MetadataStore &metadata, const std::string &database, const std::string &target,
                               const std::string &source, BaseMode mode) {
	RequireDatabase(metadata, database);
	MergeBranchResult result;
	result.ours = metadata.history.RequireBranchHead(database, target, "merges read");
	result.theirs = metadata.history.RequireBranchHead(database, source, "merges read");
	auto ancestry = SelectBase(metadata, database, result.ours, result.theirs);
	if (ancestry.selection == BaseSelection::AMBIGUOUS && mode == BaseMode::VIRTUAL) {
		result.bases = ancestry.candidates;
		RequireKeptInputs(metadata, database, result.bases);
		return result;
	}
	if (ancestry.selection == BaseSelection::AMBIGUOUS) {
		Fail(ErrorCode::MERGE_BASE_AMBIGUOUS,
		     "Multiple best common ancestors; use differential_merge_snapshots with an explicit base (see "
		     "differential_merge_ancestry('" +
		         database + "', " + std::to_string(result.ours) + ", " + std::to_string(result.theirs) +
		         ")), or merge them into a virtual base with base => 'virtual'.");
	}
	if (ancestry.selection == BaseSelection::UNRELATED) {
		Fail(ErrorCode::MERGE_BASE_MISSING, "The heads of " + QuoteName(target) + " and " + QuoteName(source) +
		                                        " share no recorded ancestor, so there is no base to merge from.");
	}
	result.base = *ancestry.base;
	if (!metadata.history.FindSnapshot(database, result.base)) {
		Fail(ErrorCode::SNAPSHOT_EXPIRED,
		     "The merge base, snapshot " + std::to_string(result.base) + " of database " + QuoteName(database) +
		         ", was expired; a merge needs its base kept. Merge with differential_merge_snapshots and a kept "
		         "base instead.");
	}
	return result;
}

MergeBranchResult VirtualInputs(MetadataStore &metadata, const std::string &database, int64_t ours, int64_t theirs) {
	RequireKeptInputs(metadata, database, {ours, theirs});
	MergeBranchResult result;
	result.ours = ours;
	result.theirs = theirs;
	auto ancestry = SelectBase(metadata, database, ours, theirs);
	if (ancestry.selection == BaseSelection::UNRELATED) {
		Fail(ErrorCode::MERGE_BASE_MISSING, "Snapshots " + std::to_string(ours) + " and " + std::to_string(theirs) +
		                                        " share no recorded ancestor, so there is no base to merge from.");
	}
	if (ancestry.selection == BaseSelection::SELECTED) {
		result.base = *ancestry.base;
	} else {
		result.bases = ancestry.candidates;
	}
	RequireKeptInputs(metadata, database, ancestry.candidates);
	return result;
}

MergeBranchResult FrozenInputs(MetadataStore &metadata, const std::string &database, const MergeRecord &pending) {
	if (pending.base_snapshot_id < 0) {
		// A virtual base is frozen by its ours and theirs: recorded parent edges never change, so the same
		// best common ancestors, folded the same way, make the same virtual base.
		return VirtualInputs(metadata, database, pending.ours_snapshot_id, pending.theirs_snapshot_id);
	}
	MergeBranchResult result;
	result.base = pending.base_snapshot_id;
	result.ours = pending.ours_snapshot_id;
	result.theirs = pending.theirs_snapshot_id;
	for (auto id : {result.base, result.ours, result.theirs}) {
		if (!metadata.history.FindSnapshot(database, id)) {
			Fail(ErrorCode::SNAPSHOT_EXPIRED,
			     "Snapshot " + std::to_string(id) + ", an input frozen by the first attempt of request " +
			         QuoteName(pending.request_id) + ", is gone; the request cannot be retried. Start a new request.");
		}
	}
	return result;
}

void RequireKeptInputs(MetadataStore &metadata, const std::string &database, const std::vector<int64_t> &snapshots) {
	for (auto id : snapshots) {
		if (!metadata.history.FindSnapshot(database, id)) {
			// Only on refusal, one seek: no read of the history's graph.
			bool expired = metadata.history.SnapshotExpiredAt(database, id).has_value();
			Fail(expired ? ErrorCode::SNAPSHOT_EXPIRED : ErrorCode::SNAPSHOT_NOT_FOUND,
			     "Snapshot " + std::to_string(id) + " of database " + QuoteName(database) +
			         (expired ? " was expired" : " does not exist") +
			         "; a merge needs all three inputs kept. List them with differential_snapshots('" + database +
			         "').");
		}
	}
}

bool ExpectedInputs(const MergeBranchRequest &request, const MergeBranchResult &inputs) {
	return (!request.expected_base || *request.expected_base == inputs.base) &&
	       (!request.expected_ours || *request.expected_ours == inputs.ours) &&
	       (!request.expected_theirs || *request.expected_theirs == inputs.theirs);
}

MergeAction PredictedAction(const MergeBranchResult &inputs, bool create_destination) {
	return create_destination             ? MergeAction::CREATED_BRANCH
	       : inputs.base == inputs.theirs ? MergeAction::ALREADY_UP_TO_DATE
	       : inputs.base == inputs.ours   ? MergeAction::FAST_FORWARD
	                                      : MergeAction::MERGED;
}

bool Trivial(const MergeBranchResult &inputs) {
	return inputs.bases.empty() && (inputs.base == inputs.theirs || inputs.base == inputs.ours);
}

SessionSettings Settings(const MergeOptions &options, const std::string &time_zone, const std::string &calendar) {
	SessionSettings settings;
	settings.schema_mode = options.schema_mode;
	settings.nested_mode = options.nested_mode;
	settings.time_zone = time_zone;
	settings.calendar = calendar;
	settings.conflict_limit = options.conflict_limit;
	settings.conflict_offset = options.conflict_offset;
	settings.skip_unchanged = options.skip_unchanged;
	return settings;
}

MergeInputs Inputs(const MergeBranchResult &result) {
	return MergeInputs {result.base, result.ours, result.theirs, result.bases};
}

int64_t ConflictCount(const MergeBranchResult &result) {
	int64_t total = 0;
	for (auto &object : result.objects) {
		total += object.counts.conflicts;
	}
	return total;
}

std::string ConflictingRows(int64_t conflicts) {
	return std::to_string(conflicts) + " conflicting row" + (conflicts == 1 ? "" : "s");
}

} // namespace differential
