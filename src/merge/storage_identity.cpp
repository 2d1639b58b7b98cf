// Why equal signatures mean equal rows: a row group's data lives in the blocks its segments name, and
// a block's bytes are known by chunk hash; what the blocks do not hold is the row group's delete
// markers. A side descends from the base, and DuckDB never revives a deleted row of a row group it did
// not rewrite, so its deleted set can only have grown: equal live counts then mean equal deleted sets.
// That needs the side's file to have been built from the base's by ordinary snapshots only: a merge
// or restore snapshot takes its file from one of its two parents, so deleted sets need not nest
// across it. Hence the caller must check IsStorageAncestor before trusting a layout match.
#include "merge/storage_identity.hpp"

#include "common/sql_quote.hpp"
#include "merge/merge_sql.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/diff_path.hpp"
#include "storage/index_page.hpp"

#include <algorithm>
#include <set>

namespace differential {

//! A snapshot's database file as the metadata stores it; false when the snapshot has none.
static bool LoadSnapshotFile(MetadataStore &metadata, const std::string &repository, const std::string &database,
                             int64_t snapshot_id, StoredFile &stored) {
	FileAddress file;
	file.repository = repository;
	file.database = database;
	file.snapshot_id = snapshot_id;
	file.file_name = MAIN_FILE_NAME;
	return metadata.files.LoadFile(file, stored);
}

std::vector<Hash256> SnapshotChunkHashes(MetadataStore &metadata, const std::string &repository,
                                         const std::string &database, int64_t snapshot_id) {
	StoredFile stored;
	std::vector<Hash256> chunks;
	if (!LoadSnapshotFile(metadata, repository, database, snapshot_id, stored)) {
		return chunks;
	}
	for (auto &page : stored.pages) {
		auto slots = DecodeIndexPage(metadata.files.LoadIndexPage(page));
		slots.resize(SLOTS_PER_INDEX_PAGE);
		chunks.insert(chunks.end(), slots.begin(), slots.end());
	}
	return chunks;
}

std::string SnapshotContentRoot(MetadataStore &metadata, const std::string &repository, const std::string &database,
                                int64_t snapshot_id) {
	StoredFile stored;
	if (!LoadSnapshotFile(metadata, repository, database, snapshot_id, stored)) {
		return "";
	}
	std::string bytes(reinterpret_cast<const char *>(&stored.length), sizeof(stored.length));
	for (auto &page : stored.pages) {
		bytes.append(reinterpret_cast<const char *>(page.data()), page.size());
	}
	return HashToHex(Sha256(bytes.data(), bytes.size()));
}

TableLayout ReadTableLayout(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                            const std::vector<Hash256> &chunks) {
	TableLayout layout;
	auto qualified = SqlIdentifier(alias) + ".main." + SqlIdentifier(table);

	// A block the file does not hold cannot be vouched for: the layout is then unknown.
	bool vouched = true;
	auto block_hash = [&](int64_t block) {
		auto chunk = uint64_t(block) + 1;
		if (chunk >= chunks.size()) {
			vouched = false;
			return std::string();
		}
		return HashToHex(chunks[chunk]);
	};
	std::vector<int64_t> sizes, validity_sizes;
	for (auto &row :
	     QueryRows(connection, "SELECT row_group_id, column_id, column_path, segment_type, start, count, compression, "
	                           "stats::VARCHAR, has_updates, persistent, block_id, block_offset, additional_block_ids "
	                           "FROM pragma_storage_info(" +
	                               SqlLiteral(qualified) + ") ORDER BY row_group_id, column_id, column_path, start")) {
		if (row.GetBaseValue(8).GetValue<bool>() || !row.GetBaseValue(9).GetValue<bool>()) {
			return layout;
		}
		auto group = size_t(row.GetBaseValue(0).GetValue<int64_t>());
		if (group >= layout.groups.size()) {
			layout.groups.resize(group + 1);
			sizes.resize(group + 1, 0);
			validity_sizes.resize(group + 1, 0);
		}
		auto &signature = layout.groups[group];
		for (size_t i = 1; i < 12; i++) {
			signature += row.GetBaseValue(i).ToString() + "|";
		}
		auto block = row.GetBaseValue(10).GetValue<int64_t>();
		if (block >= 0) {
			signature += block_hash(block) + "|";
		}
		auto additional = row.GetBaseValue(12);
		if (!additional.IsNull()) {
			for (auto &id : duckdb::ListValue::GetChildren(additional)) {
				signature += block_hash(id.GetValue<int64_t>()) + "|";
			}
		}
		signature += "\n";
		// A row group's rows: the first column's top-level segments cover them once; a nested first
		// column (STRUCT, ARRAY, UNION) has none, but its validity child covers every row.
		auto path = row.GetBaseValue(2).ToString();
		if (path == "[0]") {
			sizes[group] += row.GetBaseValue(5).GetValue<int64_t>();
		} else if (path == "[0, 0]") {
			validity_sizes[group] += row.GetBaseValue(5).GetValue<int64_t>();
		}
	}
	if (!vouched) {
		return layout;
	}
	for (size_t g = 0; g < sizes.size(); g++) {
		if (sizes[g] == 0) {
			sizes[g] = validity_sizes[g];
		}
		if (sizes[g] <= 0) {
			return layout;
		}
	}
	// Rowids are positional: a row group starts where the previous one (deleted rows included) ended.
	layout.starts.push_back(0);
	for (auto size : sizes) {
		layout.starts.push_back(layout.starts.back() + size);
	}
	std::vector<int64_t> live(layout.groups.size(), 0);
	if (!layout.groups.empty()) {
		// One count per row group; the rowid ranges let DuckDB skip every other group's rows.
		std::vector<std::string> counts;
		for (size_t i = 0; i < layout.groups.size(); i++) {
			counts.push_back("SELECT " + std::to_string(i) + ", count(*) FROM " + qualified + " WHERE rowid BETWEEN " +
			                 std::to_string(layout.starts[i]) + " AND " + std::to_string(layout.starts[i + 1] - 1));
		}
		std::string all;
		for (auto &count : counts) {
			all += (all.empty() ? "" : " UNION ALL ") + count;
		}
		for (auto &row : QueryRows(connection, all)) {
			live[size_t(row.GetBaseValue(0).GetValue<int64_t>())] = row.GetBaseValue(1).GetValue<int64_t>();
		}
	}
	for (size_t i = 0; i < layout.groups.size(); i++) {
		layout.groups[i] =
		    "start " + std::to_string(layout.starts[i]) + "\n" + layout.groups[i] + "live " + std::to_string(live[i]);
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

} // namespace differential
