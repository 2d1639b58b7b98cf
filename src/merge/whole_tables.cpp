// Tables without a primary key (dbt's model tables) merge whole: the side that changed one gives the
// result its version, decided by comparing contents with the base's; changed on both, the merge refuses.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "merge/merge_session.hpp"
#include "merge/merge_sql.hpp"
#include "merge/storage_identity.hpp"

namespace differential {

static std::string TableIn(const std::string &alias, const std::string &table) {
	return SqlIdentifier(alias) + ".main." + SqlIdentifier(table);
}

//! Rows of `from` that `to` lacks, as multisets of whole rows (duplicates count, NULLs match NULLs).
static int64_t RowsOnlyIn(duckdb::Connection &connection, const std::string &from, const std::string &to) {
	return ScalarInt(connection, "SELECT count(*) FROM (FROM " + from + " EXCEPT ALL FROM " + to + ")");
}

struct WholeChange {
	bool changed = false;
	int64_t inserts = 0;
	int64_t deletes = 0;
};

//! The side's table is stored byte for byte as the base's (the storage shortcut): unchanged, unread.
//! Only ever proves "unchanged"; anything it cannot vouch for is compared by contents.
static bool SameStorage(duckdb::Connection &connection, const std::string &table, const InputStorage &base,
                        const InputStorage &side) {
	if (!base.blocks || !side.blocks) {
		return false;
	}
	auto b = ReadTableLayout(connection, base.alias, table, *base.blocks);
	auto s = ReadTableLayout(connection, side.alias, table, *side.blocks);
	return b.known && s.known && b.groups == s.groups;
}

//! A side's change to a whole table since the base, as whole rows. A side with the base's snapshot,
//! or the base's storage for the table, changed nothing; one with another definition (or presence)
//! replaced every row.
static WholeChange SideChange(duckdb::Connection &connection, const std::string &table, bool redefined,
                              bool side_is_base, bool in_base, bool in_side, const InputStorage &base_storage,
                              const InputStorage &side_storage) {
	WholeChange change;
	if (side_is_base || (!in_base && !in_side)) {
		return change;
	}
	if (!redefined && in_base && in_side && SameStorage(connection, table, base_storage, side_storage)) {
		return change;
	}
	auto b = TableIn(base_storage.alias, table), s = TableIn(side_storage.alias, table);
	if (redefined) {
		change.changed = true;
		change.deletes = in_base ? ScalarInt(connection, "SELECT count(*) FROM " + b) : 0;
		change.inserts = in_side ? ScalarInt(connection, "SELECT count(*) FROM " + s) : 0;
		return change;
	}
	change.inserts = RowsOnlyIn(connection, s, b);
	change.deletes = RowsOnlyIn(connection, b, s);
	change.changed = change.inserts > 0 || change.deletes > 0;
	return change;
}

static TableAction ActionOf(bool in_base, bool in_result) {
	return !in_base ? TableAction::ADD : !in_result ? TableAction::DROP : TableAction::REPLACE;
}

//! Both sides made the same change: both removed the table, or both hold the same definition and rows.
static bool SameChange(duckdb::Connection &connection, const TablePlan &table, const std::string &ours,
                       const std::string &theirs) {
	auto &shape = table.shape;
	if (!shape.ours.table_present || !shape.theirs.table_present) {
		return !shape.ours.table_present && !shape.theirs.table_present;
	}
	if (!table.sides_defined_alike) {
		return false;
	}
	auto o = TableIn(ours, shape.name), t = TableIn(theirs, shape.name);
	return RowsOnlyIn(connection, o, t) == 0 && RowsOnlyIn(connection, t, o) == 0;
}

[[noreturn]] static void BothChanged(const std::string &table) {
	Fail(ErrorCode::MERGE_UNSUPPORTED,
	     "Table " + QuoteName(table) +
	         " has no primary key and both sides changed it (its rows or its definition), so its rows cannot be "
	         "matched across the branches; nothing was merged. Add a primary key to it on both branches (for a dbt "
	         "model: a model contract with a primary_key constraint), or make one side's version win: recreate the "
	         "table on the other branch as the first side has it (or as the base had it), snapshot, and merge again.");
}

void MergeSession::DecideWholeTables() {
	InputStorage b {base, {}}, o_storage {ours, {}}, t_storage {theirs, {}};
	bool any = false;
	for (auto &table : plan.tables) {
		any = any || table.whole;
	}
	if (any && settings.skip_unchanged) {
		LoadInputStorage(b, o_storage, t_storage);
	}
	for (auto &table : plan.tables) {
		if (!table.whole) {
			continue;
		}
		auto &shape = table.shape;
		auto o = SideChange(*connection, shape.name, table.ours_redefined, inputs.ours == inputs.base,
		                    shape.base.table_present, shape.ours.table_present, b, o_storage);
		auto t = SideChange(*connection, shape.name, table.theirs_redefined, inputs.theirs == inputs.base,
		                    shape.base.table_present, shape.theirs.table_present, b, t_storage);
		table.whole_counts.ours_inserts = o.inserts;
		table.whole_counts.ours_deletes = o.deletes;
		table.whole_counts.theirs_inserts = t.inserts;
		table.whole_counts.theirs_deletes = t.deletes;
		if (!o.changed) {
			table.unchanged_sides.push_back(MergeSide::OURS);
		}
		if (!t.changed) {
			table.unchanged_sides.push_back(MergeSide::THEIRS);
		}
		if (o.changed && t.changed && !SameChange(*connection, table, ours, theirs)) {
			BothChanged(shape.name);
		}
		if (o.changed) {
			// Staging starts from ours' copy: ours' version (or the same change on both) is already there.
			table.action_source = t.changed ? MergeSide::BOTH : MergeSide::OURS;
			table.table_action = ActionOf(shape.base.table_present, shape.ours.table_present);
		} else if (t.changed) {
			table.action_source = MergeSide::THEIRS;
			table.table_action = ActionOf(shape.base.table_present, shape.theirs.table_present);
			table.stage_drop = shape.ours.table_present;
			if (shape.theirs.table_present) {
				table.stage_create_sql = table.theirs_create_sql;
				table.stage_indexes = table.theirs_indexes;
				table.stage_copy_rows = true;
			}
		}
	}
}

} // namespace differential
