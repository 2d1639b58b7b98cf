// Field-level merging of STRUCT values (nested => 'fields'): a STRUCT column's cell is decided
// field by field, recursively, so two sides changing different fields of one value both land.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace duckdb {
struct LogicalType;
class Value;
} // namespace duckdb

namespace differential {

//! How a merge decides a cell holding a nested value: as one whole value (the 1.1 specification's
//! rule), or, for a STRUCT, field by field.
enum class NestedMode { WHOLE, FIELDS };

//! Parses the nested_mode argument (NULL means whole); refuses other words with invalid_argument.
NestedMode ParseNestedMode(const std::optional<std::string> &mode);
const char *ToString(NestedMode mode);

//! A STRUCT's shape as a tree of its fields: a leaf is any field that is not a STRUCT (a LIST, MAP,
//! ARRAY or UNION field is a leaf too: it merges as a whole value). `type` is the SQL type.
struct FieldTree {
	std::string name;
	std::string type;
	std::vector<FieldTree> fields;
	bool IsStruct() const {
		return !fields.empty();
	}
};

//! The tree of `type`: fields only when it is a STRUCT.
FieldTree FieldTreeOf(const std::string &name, const duckdb::LogicalType &type);

//! One part of a cell that can conflict on its own: the column, or a field of it (`settings.theme`).
struct CellPart {
	//! The column's name, then field names, joined by dots (a name holding a dot or a quote is quoted).
	std::string path;
	//! True where this part (and not only a field inside it) is in conflict.
	std::string conflict;
};

//! The SQL deciding one cell from its base, ours and theirs expressions.
struct CellDecision {
	//! The merged value (meaningful only where `conflict` is false).
	std::string merged;
	//! True where both sides changed the same part differently.
	std::string conflict;
	//! The parts a conflict can be about, each with its own condition: what conflict details name.
	std::vector<CellPart> parts;
	//! The merged value can differ from both sides (fields taken from each), so it is not always one of them.
	bool combines = false;
};

//! The whole-value rule: ours == theirs -> it; ours == base -> theirs; theirs == base -> ours; else a conflict.
CellDecision WholeValueDecision(const std::string &path, const std::string &b, const std::string &o,
                                const std::string &t);
//! The field-level rule: where the three values are non-NULL STRUCTs, each field is decided on its own
//! (recursively) and the merged value is rebuilt from the fields' decisions; a NULL STRUCT on any side
//! (setting a value to NULL, or filling in a NULL one) is decided as a whole value.
CellDecision FieldDecision(const FieldTree &tree, const std::string &path, const std::string &b, const std::string &o,
                           const std::string &t);

//! The part at `path` (a path FieldDecision names, starting at `column`) of a cell's `value`: NULL of the field's
//! type where a STRUCT on the way is NULL. False when `path` is no part of the column.
bool ValueAtPath(const FieldTree &tree, const std::string &column, const std::string &path, const duckdb::Value &value,
                 duckdb::Value &out);

//! The expressions a 'cells' resolution works with: the three inputs, the resolution's own (custom) value,
//! and the side chosen for a part (`choice(path)`: 'ours', 'theirs', 'custom' or NULL when not named).
struct CellChoice {
	std::string b, o, t, custom;
	std::function<std::string(const std::string &path)> choice;
};

//! The value a 'cells' decision gives a conflicting cell decided by `tree` (a leaf: as a whole value). A part
//! it names takes the chosen side's value whole; a STRUCT part it does not name is rebuilt field by field, so
//! fields it leaves out keep their merged value.
std::string ResolvedCell(const FieldTree &tree, const std::string &path, const CellChoice &in);

} // namespace differential
