// Merges that publish nothing: the previews compare (and with validate, build the result on a staging
// branch that is dropped), and the preflight reports every check a merge would make, now.
#include "common/duckdb_errors.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "merge/merge_steps.hpp"
#include "storage/branch_lock.hpp"

namespace differential {

static MergePreview Preview(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
                            const std::string &database, MergeBranchResult inputs, const MergeOptions &options) {
	MergeOperation operation(database, "", options.max_concurrent, options.limits, options.progress);
	MergePreview preview;
	preview.inputs = inputs;
	MergeSession session(instance, metadata, repository, database, Inputs(inputs),
	                     Settings(options, options.time_zone, options.calendar), operation);
	// With nothing to combine, the result is one of the inputs as it is: no row can conflict (so no
	// decision applies), its catalog is that input's own, and there is nothing to validate.
	bool trivial = Trivial(inputs);
	bool fresh = false;
	auto resolutions = trivial ? std::vector<FrozenResolution>()
	                           : Resolutions(metadata, session, database, "", options.resolution_tables, fresh);
	try {
		session.Run(options.validate && !trivial, true, resolutions, preview.inputs.objects);
		if (trivial) {
			for (auto &object : preview.inputs.objects) {
				object.schema_conflicts.clear();
			}
		}
		if (session.staged) {
			session.FinishStaging();
			preview.validation_state = ValidationState::VALID;
		} else if (options.validate && !trivial && ConflictCount(preview.inputs) == 0 &&
		           session.FirstSchemaConflict()) {
			preview.validation_state = ValidationState::INVALID;
			preview.validation_code = session.FirstSchemaConflict()->kind;
			preview.validation_error = session.FirstSchemaConflict()->message;
		}
	} catch (duckdb::Exception &e) {
		if (duckdb::ErrorData(e).Type() != duckdb::ExceptionType::CONSTRAINT) {
			throw;
		}
		preview.validation_state = ValidationState::INVALID;
		preview.validation_code = ErrorCode::MERGE_VALIDATION_FAILED;
		preview.validation_error = duckdb::ErrorData(e).RawMessage();
	}
	return preview;
}

MergePreview PreviewMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                const std::string &repository, const std::string &database, const std::string &target,
                                const std::string &source, const MergeOptions &options) {
	return Preview(instance, metadata, repository, database,
	               SelectInputs(metadata, database, target, source, options.base_mode), options);
}

MergePreview PreviewMergeSnapshots(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                   const std::string &repository, const std::string &database, int64_t base,
                                   int64_t ours, int64_t theirs, const MergeOptions &options) {
	RequireDatabase(metadata, database);
	if (options.base_mode == BaseMode::VIRTUAL) {
		return Preview(instance, metadata, repository, database, VirtualInputs(metadata, database, ours, theirs),
		               options);
	}
	RequireKeptInputs(metadata, database, {base, ours, theirs});
	MergeBranchResult inputs;
	inputs.base = base;
	inputs.ours = ours;
	inputs.theirs = theirs;
	return Preview(instance, metadata, repository, database, inputs, options);
}

//! The problems a preflight lists, each as "<code>: <message>".
struct Issues {
	std::vector<std::string> &lines;
	void Add(ErrorCode code, const std::string &message) {
		lines.push_back(std::string(ToString(code)) + ": " + message);
	}
	//! Refusals name their code once, in the line's head.
	void Add(const DifferentialError &error) {
		Add(error.code, error.detail);
	}
};

//! Where the destination stands: a new or existing branch name, or the target's own state.
static TargetState ReadTarget(MetadataStore &metadata, const std::string &repository, const MergeBranchRequest &request,
                              Issues &issues) {
	if (request.destination != request.target) {
		if (!metadata.history.FindBranch(request.database, request.destination)) {
			return TargetState::NEW;
		}
		issues.Add(ErrorCode::BRANCH_EXISTS, "the destination is an existing branch other than the target");
		return TargetState::EXISTS;
	}
	try {
		RequireBranchClosed(repository, request.database, request.target);
		BranchLock probe(FileAddress {repository, request.database, request.target, -1, MAIN_FILE_NAME});
		bool has_wal = false;
		if (!metadata.history.HasUnsnapshottedChanges(request.database, request.target, has_wal)) {
			return TargetState::CLEAN;
		}
		issues.Add(ErrorCode::MERGE_TARGET_DIRTY, "the target has writes after its latest snapshot");
		return TargetState::DIRTY;
	} catch (DifferentialError &error) {
		issues.Add(error);
		return error.code == ErrorCode::BRANCH_LOCKED                      ? TargetState::LOCKED
		       : error.code == ErrorCode::ACTIVE_ATTACHMENT_OR_TRANSACTION ? TargetState::ATTACHED
		                                                                   : TargetState::UNKNOWN;
	}
}

//! Validates the merge as the preview does, listing its conflicts and a violated constraint.
static ValidationState Validate(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                const std::string &repository, const std::string &database, const MergeOptions &options,
                                MergeBranchResult &inputs, Issues &issues) {
	try {
		auto validating = options;
		validating.validate = true;
		auto preview = Preview(instance, metadata, repository, database, inputs, validating);
		inputs.objects = preview.inputs.objects;
		for (auto &object : inputs.objects) {
			for (auto &conflict : object.schema_conflicts) {
				issues.Add(conflict.kind, conflict.message);
			}
		}
		auto conflicts = ConflictCount(inputs);
		if (conflicts > 0) {
			issues.Add(ErrorCode::MERGE_CONFLICT, ConflictingRows(conflicts));
		}
		// A schema conflict found while building the result is already listed with its object.
		if (preview.validation_state == ValidationState::INVALID &&
		    preview.validation_code == ErrorCode::MERGE_VALIDATION_FAILED) {
			issues.Add(*preview.validation_code, preview.validation_error);
		}
		return preview.validation_state;
	} catch (DifferentialError &error) {
		issues.Add(error);
	} catch (duckdb::Exception &error) {
		// A refusal of ours raised inside the preview's SQL keeps its code; anything else is DuckDB's.
		duckdb::ErrorData data(error);
		if (auto raised = RaisedInside(data)) {
			issues.Add(*raised);
		} else {
			issues.Add(ErrorCode::INTERNAL, data.RawMessage());
		}
	}
	return ValidationState::NOT_CHECKED;
}

MergePreflight PreflightMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                    const std::string &repository, const MergeBranchRequest &request,
                                    const MergeOptions &options) {
	MergePreflight preflight;
	Issues issues {preflight.issues};
	preflight.inputs = SelectInputs(metadata, request.database, request.target, request.source, options.base_mode);
	if (!ExpectedInputs(request, preflight.inputs)) {
		issues.Add(ErrorCode::MERGE_INPUTS_CHANGED, "the inputs are not the expected snapshot ids");
	}
	preflight.target_state = ReadTarget(metadata, repository, request, issues);
	preflight.merge_action = PredictedAction(preflight.inputs, request.destination != request.target);
	preflight.validation_state =
	    Validate(instance, metadata, repository, request.database, options, preflight.inputs, issues);
	preflight.ready = preflight.issues.empty();
	return preflight;
}

} // namespace differential
