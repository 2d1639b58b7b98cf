// Why equal signatures mean equal rows: a row group's data lives in the blocks its segments name, and
// a block's bytes are known by their content hash (BlockIdentity); what the blocks do not hold is the row group's
// delete markers. A side descends from the base, and DuckDB never revives a deleted row of a row group it did not
// rewrite, so its deleted set can only have grown: equal live counts then mean equal deleted sets. That needs the
// side's file to have been built from the base's by ordinary snapshots only: a merge or restore snapshot takes its file
// from one of its two parents, so deleted sets need not nest across it. Hence the caller must check IsStorageAncestor
// before trusting a layout match.
#include "merge/storage_identity.hpp"

#include "common/sql_quote.hpp"
#include "duckdb/common/string_util.hpp"
#include "merge/merge_sql.hpp"
#include "merge/positional_match.hpp"
#include "merge/row_group_census.hpp"
#include "merge/segment_census.hpp"

#include <algorithm>
#include <set>

namespace differential {

FileAddress SnapshotDatabaseFile(const std::string &repository, const std::string &database, int64_t snapshot_id) {
	FileAddress file;
	file.repository = repository;
	file.database = database;
	file.snapshot_id = snapshot_id;
	file.file_name = MAIN_FILE_NAME;
	return file;
}

//! A table's segments, row group by row group: the signatures (without start and live count) and each
//! group's row count. False when the storage cannot vouch for the table.
static bool ReadSegments(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                         const BlockIdentity &blocks, TableLayout &layout, std::vector<int64_t> &sizes) {
	auto &groups = layout.groups;
	bool vouched = true;
	auto block_hash = [&](int64_t block) {
		auto hash = blocks.BlockHash(uint64_t(block));
		vouched = vouched && hash.has_value();
		return hash ? HashToHex(*hash) : std::string();
	};
	std::vector<int64_t> validity_sizes;
	std::vector<SegmentRecord> segments;
	if (!ListColumnSegments(connection, alias, table, segments)) {
		return false;
	}
	for (auto &segment : segments) {
		if (segment.has_updates || !segment.persistent) {
			return false;
		}
		auto group = size_t(segment.row_group);
		if (group >= groups.size()) {
			groups.resize(group + 1);
			layout.columns.resize(group + 1);
			sizes.resize(group + 1, 0);
			validity_sizes.resize(group + 1, 0);
		}
		std::string signature = std::to_string(segment.column_id) + "|" + segment.column_path + "|" +
		                        segment.segment_type + "|" + std::to_string(segment.start) + "|" +
		                        std::to_string(segment.count) + "|" + segment.compression + "|" + segment.stats + "|" +
		                        std::to_string(segment.block_id) + "|" + std::to_string(segment.block_offset) + "|";
		if (segment.block_id >= 0) {
			signature += block_hash(segment.block_id) + "|";
		}
		for (auto id : segment.additional_blocks) {
			signature += block_hash(id) + "|";
		}
		signature += "\n";
		groups[group] += signature;
		layout.columns[group][segment.column_name] += signature;
		// A row group's rows: the first column's top-level segments cover them once; a nested first
		// column (STRUCT, ARRAY, UNION) has none, but its validity child covers every row.
		if (segment.column_path == "[0]") {
			sizes[group] += segment.count;
		} else if (segment.column_path == "[0, 0]") {
			validity_sizes[group] += segment.count;
		}
	}
	for (size_t g = 0; g < sizes.size(); g++) {
		if (sizes[g] == 0) {
			sizes[g] = validity_sizes[g];
		}
		if (sizes[g] <= 0) {
			return false;
		}
	}
	return vouched;
}

//! Rowids are positional: the layout's ranges are the row groups' own only when the groups follow one
//! another from rowid 0 with the sizes their segments cover. A checkpoint that dropped a fully deleted
//! group leaves a gap (the groups after it keep their rowids), and the layout is then not vouched for.
static bool ReadRowGroups(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                          const std::vector<int64_t> &sizes, TableLayout &layout) {
	std::vector<RowGroupCount> census;
	if (!CountRowGroups(connection, alias, table, census) || census.size() != sizes.size()) {
		return false;
	}
	layout.starts.assign(1, 0);
	for (size_t g = 0; g < census.size(); g++) {
		if (census[g].start != layout.starts.back() || census[g].rows != sizes[g] || census[g].live <= 0) {
			return false;
		}
		layout.starts.push_back(census[g].start + census[g].rows);
		layout.live.push_back(census[g].live);
	}
	return true;
}

TableLayout ReadTableLayout(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                            const BlockIdentity &blocks) {
	TableLayout layout;
	std::vector<int64_t> sizes;
	if (!ReadSegments(connection, alias, table, blocks, layout, sizes) ||
	    !ReadRowGroups(connection, alias, table, sizes, layout)) {
		return TableLayout();
	}
	for (size_t i = 0; i < layout.groups.size(); i++) {
		layout.groups[i] = "start " + std::to_string(layout.starts[i]) + "\n" + layout.groups[i] + "live " +
		                   std::to_string(layout.live[i]);
	}
	layout.known = true;
	return layout;
}

std::vector<bool> SameRowGroups(const TableLayout &base, const TableLayout &side) {
	std::vector<bool> same(std::max(base.groups.size(), side.groups.size()), false);
	if (!base.known || !side.known) {
		return same;
	}
	for (size_t i = 0; i < base.groups.size() && i < side.groups.size(); i++) {
		same[i] = base.groups[i] == side.groups[i];
	}
	return same;
}

bool IsStorageAncestor(const std::map<int64_t, std::vector<int64_t>> &parents, int64_t ancestor, int64_t snapshot) {
	std::set<int64_t> seen;
	for (auto id = snapshot; seen.insert(id).second;) {
		if (id == ancestor) {
			return true;
		}
		auto it = parents.find(id);
		if (it == parents.end() || it->second.size() != 1) {
			return false;
		}
		id = it->second[0];
	}
	return false;
}

//! The rowids of the given row groups of a layout, one range per group.
static std::vector<RowidRange> GroupRowids(const std::vector<size_t> &groups, const TableLayout &layout) {
	std::vector<RowidRange> out;
	for (auto g : groups) {
		out.push_back({layout.starts[g], layout.starts[g + 1] - 1});
	}
	return out;
}

//! A rowid predicate selecting the given row groups of a layout.
static std::string RowGroupRanges(const std::vector<size_t> &groups, const TableLayout &layout) {
	return RowidPredicate(GroupRowids(groups, layout));
}

//! The indexes in [0, count) where `pick` holds.
template <class PICK>
static std::vector<size_t> GroupsWhere(size_t count, PICK pick) {
	std::vector<size_t> out;
	for (size_t g = 0; g < count; g++) {
		if (pick(g)) {
			out.push_back(g);
		}
	}
	return out;
}

//! Narrows a table both sides changed to the row groups either side changed: a key outside them has
//! the same row on all three inputs (keys are unique, so a key in a row group equal to the base's is
//! in no changed one). Of those, the groups whose rows match by position (positional_match.hpp) are
//! compared by rowid; the key join reads the others.
static void NarrowToChangedGroups(const TableShape &shape, const TableLayout &b, const TableLayout &o,
                                  const TableLayout &t, InputReads &r) {
	auto same_o = SameRowGroups(b, o), same_t = SameRowGroups(b, t);
	auto positional = PositionalGroups(b, o, t, shape.key);
	auto by_position = [&](size_t g) {
		return g < positional.size() && positional[g];
	};
	auto base_groups =
	    GroupsWhere(b.groups.size(), [&](size_t g) { return (!same_o[g] || !same_t[g]) && !by_position(g); });
	auto positional_groups = GroupsWhere(b.groups.size(), by_position);
	if (positional_groups.empty() && base_groups.size() == b.groups.size()) {
		return;
	}
	r.base_rows = RowGroupRanges(base_groups, b);
	if (!positional_groups.empty()) {
		r.positional_groups = GroupRowids(positional_groups, b);
		r.positional_rows = RowidPredicate(r.positional_groups);
		r.ours_positional_columns = ChangedColumns(shape, positional, b, o);
		r.theirs_positional_columns = ChangedColumns(shape, positional, b, t);
	}
	if (!r.ours_as_base) {
		r.ours_rows =
		    RowGroupRanges(GroupsWhere(o.groups.size(), [&](size_t g) { return !same_o[g] && !by_position(g); }), o);
		auto from_base =
		    GroupsWhere(b.groups.size(), [&](size_t g) { return same_o[g] && !same_t[g] && !by_position(g); });
		if (!from_base.empty()) {
			r.ours_from_base = RowGroupRanges(from_base, b);
		}
	}
	if (!r.theirs_as_base) {
		r.theirs_rows =
		    RowGroupRanges(GroupsWhere(t.groups.size(), [&](size_t g) { return !same_t[g] && !by_position(g); }), t);
		auto from_base =
		    GroupsWhere(b.groups.size(), [&](size_t g) { return same_t[g] && !same_o[g] && !by_position(g); });
		if (!from_base.empty()) {
			r.theirs_from_base = RowGroupRanges(from_base, b);
		}
	}
}

//! Only tables in all three inputs with no schema change have storage to compare.
static bool Comparable(const TablePlan &table) {
	auto &shape = table.shape;
	// A column named rowid hides the rowid the narrowed reads select by.
	for (auto &column : shape.columns) {
		if (duckdb::StringUtil::Lower(column) == "rowid") {
			return false;
		}
	}
	return table.merge_rows && table.schema_changes.empty() && table.table_action == TableAction::NONE &&
	       shape.base.table_present && shape.ours.table_present && shape.theirs.table_present;
}

std::vector<InputReads> UnchangedStorageReads(duckdb::Connection &connection, const std::vector<TablePlan> &tables,
                                              const InputStorage &base, const InputStorage &ours,
                                              const InputStorage &theirs) {
	std::vector<InputReads> reads(tables.size());
	if (!base.blocks || (!ours.blocks && !theirs.blocks)) {
		return reads;
	}
	for (size_t i = 0; i < tables.size(); i++) {
		if (!Comparable(tables[i])) {
			continue;
		}
		auto &name = tables[i].shape.name;
		auto b = ReadTableLayout(connection, base.alias, name, *base.blocks);
		if (!b.known) {
			continue;
		}
		TableLayout o, t;
		if (ours.blocks) {
			o = ReadTableLayout(connection, ours.alias, name, *ours.blocks);
		}
		if (theirs.blocks) {
			t = ReadTableLayout(connection, theirs.alias, name, *theirs.blocks);
		}
		auto &r = reads[i];
		r.ours_as_base = o.known && o.groups == b.groups;
		r.theirs_as_base = t.known && t.groups == b.groups;
		if (o.known && t.known) {
			NarrowToChangedGroups(tables[i].shape, b, o, t, r);
		}
	}
	return reads;
}

} // namespace differential
