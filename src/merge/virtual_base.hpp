// A virtual base (base => 'virtual'): the merge of a criss-cross history's best common ancestors, built
// step by step (virtual_base_plan.hpp) in in-memory databases that exist only for one merge. Each step is
// a merge session whose conflicts stay in its result as marks (marked_cells.hpp) instead of stopping it.
#pragma once

#include "merge/merge_session.hpp"
#include "merge/virtual_base_plan.hpp"

#include <memory>
#include <string>
#include <vector>

namespace differential {

class VirtualBase {
public:
	//! Builds the virtual base of `inputs.bases` for the merge of `inputs.ours` and `inputs.theirs`.
	VirtualBase(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
	            const std::string &database, const MergeInputs &inputs, const SessionSettings &settings,
	            MergeOperation &operation, const std::string &tag);
	~VirtualBase();
	//! The attached in-memory database holding the virtual base, and the one holding its marks.
	const std::string &Result() const {
		return result;
	}
	const std::string &ResultMarks() const {
		return result_marks;
	}

private:
	void DetachAll();
	void RunStep(size_t index, const VirtualBaseStep &step, const StepAliases &aliases);
	std::string InputAlias(const VirtualInput &input) const;
	std::string MarksAlias(const VirtualInput &input) const;

	duckdb::DatabaseInstance &instance;
	MetadataStore &metadata;
	std::string repository, database, tag;
	SessionSettings settings;
	MergeOperation &operation;
	std::unique_ptr<duckdb::Connection> connection;
	std::vector<std::string> attached;
	std::string result, result_marks;
};

//! The makeup of the virtual base a merge of `ours` and `theirs` would build: empty when they have a unique
//! best common ancestor (or none). Read from recorded parent edges only, which never change, so a retry of a
//! request builds the same virtual base from the same ours and theirs.
VirtualBasePlan VirtualBaseOf(MetadataStore &metadata, const std::string &database, int64_t ours, int64_t theirs);

} // namespace differential
