// Foreign keys across a merge's result: which result tables reference which, the order staging
// applies them in (parents first), and the SQL that finds rows of the merged result whose parent is
// missing. Each input satisfies its foreign keys on its own; the combination of two need not.
#pragma once

#include "merge/schema_plan.hpp"

#include <string>
#include <vector>

namespace differential {

//! A foreign key between two result tables (indexes into SchemaPlan::tables).
struct ForeignKeyEdge {
	size_t child;
	size_t parent;
	//! The child's columns, spelled as the child's shape spells them.
	std::vector<std::string> columns;
	//! The parent's key columns the child's columns reference, in the same order.
	std::vector<std::string> parent_columns;
};

//! The foreign keys of the result's tables, as defined by ours (theirs for a table only theirs has).
//! Refuses (merge_unsupported) a foreign key of a table merged whole (no primary key in some input).
std::vector<ForeignKeyEdge> ResultForeignKeys(const SchemaPlan &plan, const CatalogSide &ours,
                                              const CatalogSide &theirs);

//! The plan's table indexes with every parent before its children (otherwise in plan order); refuses
//! a cycle (merge_unsupported).
std::vector<size_t> ParentsFirst(const SchemaPlan &plan, const std::vector<ForeignKeyEdge> &edges);

//! SQL: the table's rows in the merged result, ours' rows with the decisions applied (no decisions:
//! ours' rows), as the named columns.
std::string MergedRows(const TableShape &table, const std::string &ours, const std::string &decisions,
                       const std::vector<std::string> &columns);

//! SQL: the child rows of the merged result whose foreign key (every column non-NULL) matches no
//! parent row: __differential_k<i> (the child's key) and __differential_f<j> (the key's values).
std::string ViolationsQuery(const ForeignKeyEdge &edge, const TableShape &child, const TableShape &parent,
                            const std::string &ours, const std::string &child_decisions,
                            const std::string &parent_decisions);

//! SQL: the missing parent keys of the violations in `violations` (a table ViolationsQuery filled), as
//! the parent's key in its own order (__differential_k<i>).
std::string MissingParentKeys(const ForeignKeyEdge &edge, const TableShape &parent, const std::string &violations);

} // namespace differential
