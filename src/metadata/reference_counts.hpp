// Reference counts that let cleanup follow the garbage: index pages count the roots listing them, chunks the
// pages listing them; cleanup counts new rows lazily and deletes only what reaches zero (docs/DURABILITY.md §12).
#pragma once

#include "metadata/records.hpp"

#include <string>
#include <unordered_set>
#include <vector>

namespace differential {

class SqliteDatabase;

//! Adds every root and index page written since the last cleanup (counted = 0) to the counts of the pages and
//! chunks it lists, and makes each such root a candidate. A new root that is live but lists a missing page is
//! corrupt_metadata (the caller's transaction then changes nothing). `reader_pins`: the roots readers pin.
void CountNewReferences(SqliteDatabase &db, const std::unordered_set<int64_t> &reader_pins);

//! Deletes every candidate root nothing references, then every index page and chunk whose count reached zero,
//! in that order, keeping the counts exact; fills the report's deletion counts. A root only `reader_pins` hold
//! is kept and stays a candidate.
void SweepUnreferenced(SqliteDatabase &db, const std::unordered_set<int64_t> &reader_pins, GarbageReport &report);

//! The full mark, as a verifier: recomputes every count from the rows and checks that each unreferenced counted
//! root is a candidate. Returns one line per disagreement (a leak or a row cleanup would delete while live).
std::vector<std::string> AuditReferenceCounts(SqliteDatabase &db, int64_t &rows_checked);

} // namespace differential
