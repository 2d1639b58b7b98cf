// History queries and creation: each write is one transaction whose checks run inside it, before
// anything is written.
#include "metadata/history_store.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "metadata/lookups.hpp"
#include "metadata/merge_request_rows.hpp"
#include "metadata/sqlite.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <set>

namespace differential {

static const char *DATABASE_COLUMNS =
    "SELECT d.database_id, d.database_name, d.database_uuid, d.created_at_us, "
    "(SELECT count(*) FROM branches b WHERE b.database_id = d.database_id), "
    "(SELECT count(*) FROM snapshots s WHERE s.database_id = d.database_id) FROM databases d ";

static DatabaseRecord ReadDatabaseRow(SqliteStatement &stmt) {
	DatabaseRecord r;
	r.database_id = stmt.Int(0);
	r.name = stmt.Text(1);
	r.uuid = stmt.Text(2);
	r.created_at_us = stmt.Int(3);
	r.branch_count = stmt.Int(4);
	r.snapshot_count = stmt.Int(5);
	return r;
}

static const char *BRANCH_COLUMNS =
    "SELECT b.branch_id, b.database_id, b.branch_name, b.created_at_us, b.base_snapshot_id, b.head_snapshot_id "
    "FROM branches b JOIN databases d USING (database_id) ";

static BranchRecord ReadBranchRow(SqliteStatement &stmt) {
	BranchRecord r;
	r.branch_id = stmt.Int(0);
	r.database_id = stmt.Int(1);
	r.name = stmt.Text(2);
	r.created_at_us = stmt.Int(3);
	r.base_snapshot_id = stmt.OptionalInt(4);
	r.head_snapshot_id = stmt.OptionalInt(5);
	return r;
}

static const char *SNAPSHOT_COLUMNS =
    "SELECT s.snapshot_id, s.snapshot_name, s.author, s.commit_message, s.created_at_us, s.branch_name, s.root_id, "
    "(SELECT group_concat(parent_snapshot_id) FROM (SELECT parent_snapshot_id FROM snapshot_parents p WHERE "
    "p.database_id = s.database_id AND p.snapshot_id = s.snapshot_id ORDER BY p.ordinal)), s.commit_extra_info "
    "FROM snapshots s JOIN databases d USING (database_id) ";

static SnapshotRecord ReadSnapshotRow(SqliteStatement &stmt) {
	SnapshotRecord r;
	r.snapshot_id = stmt.Int(0);
	r.name = stmt.OptionalText(1);
	r.author = stmt.OptionalText(2);
	r.message = stmt.OptionalText(3);
	r.created_at_us = stmt.Int(4);
	r.branch_name = stmt.Text(5);
	r.root_id = stmt.Int(6);
	auto parents = stmt.Text(7);
	size_t pos = 0;
	while (pos < parents.size()) {
		auto comma = parents.find(',', pos);
		r.parents.push_back(std::stoll(parents.substr(pos, comma - pos)));
		pos = comma == std::string::npos ? parents.size() : comma + 1;
	}
	r.extra_info = stmt.OptionalText(8);
	return r;
}

std::optional<DatabaseRecord> HistoryStore::FindDatabase(const std::string &name, bool with_counts) {
	auto session = core.Read();
	// Without the counts a seek on the name alone: counting the snapshots reads the database's whole history.
	auto stmt =
	    session.db.Prepare(with_counts ? std::string(DATABASE_COLUMNS) + "WHERE d.database_name = ?"
	                                   : "SELECT database_id, database_name, database_uuid, created_at_us, -1, -1 "
	                                     "FROM databases WHERE database_name = ?");
	stmt.Bind(1, name);
	if (stmt.Step()) {
		return ReadDatabaseRow(stmt);
	}
	return std::nullopt;
}

std::vector<DatabaseRecord> HistoryStore::ListDatabases() {
	auto session = core.Read();
	auto stmt = session.db.Prepare(std::string(DATABASE_COLUMNS) + "ORDER BY d.database_name");
	std::vector<DatabaseRecord> out;
	while (stmt.Step()) {
		out.push_back(ReadDatabaseRow(stmt));
	}
	return out;
}

bool HistoryStore::EnsureDatabase(const std::string &name) {
	auto txn = core.Write();
	auto &db = txn.db;
	auto find = db.Prepare("SELECT 1 FROM databases WHERE database_name = ?");
	find.Bind(1, name);
	if (find.Step()) {
		return false;
	}
	auto now = NowMicros();
	db.Prepare("INSERT INTO databases(database_name, database_uuid, created_at_us) VALUES (?, ?, ?)")
	    .Bind(1, name)
	    .Bind(2, NewUuid())
	    .Bind(3, now)
	    .Run();
	auto database_id = db.LastInsertRowId();
	db.Prepare("INSERT INTO branches(database_id, branch_name, created_at_us) VALUES (?, 'main', ?)")
	    .Bind(1, database_id)
	    .Bind(2, now)
	    .Run();
	txn.Commit();
	return true;
}

std::optional<BranchRecord> HistoryStore::FindBranch(const std::string &database, const std::string &branch) {
	auto session = core.Read();
	auto stmt = session.db.Prepare(std::string(BRANCH_COLUMNS) + "WHERE d.database_name = ? AND b.branch_name = ?");
	stmt.Bind(1, database).Bind(2, branch);
	if (stmt.Step()) {
		return ReadBranchRow(stmt);
	}
	return std::nullopt;
}

std::vector<BranchRecord> HistoryStore::ListBranches(const std::string &database) {
	auto session = core.Read();
	RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare(std::string(BRANCH_COLUMNS) + "WHERE d.database_name = ? ORDER BY b.branch_id");
	stmt.Bind(1, database);
	std::vector<BranchRecord> out;
	while (stmt.Step()) {
		out.push_back(ReadBranchRow(stmt));
	}
	return out;
}

BranchRecord HistoryStore::CreateBranch(const std::string &database, const std::string &branch, int64_t snapshot_id) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	if (FindBranchId(txn, database, branch)) {
		Fail(ErrorCode::BRANCH_EXISTS, "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		                                   " already exists. Choose another name, or attach it with (BRANCH '" +
		                                   branch + "').");
	}
	RequireNameNotReserved(txn, database_id, database, branch);
	StoredFile root;
	auto root_id = RequireSnapshotRoot(txn, database_id, database, snapshot_id, root);
	BranchRecord r;
	r.database_id = database_id;
	r.name = branch;
	r.created_at_us = NowMicros();
	r.base_snapshot_id = snapshot_id;
	r.head_snapshot_id = snapshot_id;
	txn.db
	    .Prepare("INSERT INTO branches(database_id, branch_name, created_at_us, base_snapshot_id, head_snapshot_id) "
	             "VALUES (?, ?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, branch)
	    .Bind(3, r.created_at_us)
	    .Bind(4, snapshot_id)
	    .Bind(5, snapshot_id)
	    .Run();
	r.branch_id = txn.db.LastInsertRowId();
	SetBranchRoot(txn, r.branch_id, root_id, root.length);
	txn.Commit();
	return r;
}

static void RequireUniqueSnapshotName(MetadataSession &session, int64_t database_id, const std::string &database,
                                      const std::optional<std::string> &name) {
	if (!name) {
		return;
	}
	auto dup = session.db.Prepare("SELECT snapshot_id FROM snapshots WHERE database_id = ? AND snapshot_name = ?");
	dup.Bind(1, database_id).Bind(2, *name);
	if (dup.Step()) {
		Fail(ErrorCode::SNAPSHOT_NAME_EXISTS, "Database " + QuoteName(database) + " already has a snapshot named " +
		                                          QuoteName(*name) + " (snapshot " + std::to_string(dup.Int(0)) +
		                                          "). Choose another name.");
	}
}

//! The root of the branch's database file, which must be checkpointed: no WAL bytes beside it.
static int64_t RequireCheckpointedRoot(MetadataSession &session, int64_t branch_id, const std::string &database,
                                       const std::string &branch) {
	auto wal = session.db.Prepare("SELECT file_name, sum(length) FROM file_extents WHERE branch_id = ? GROUP BY "
	                              "file_name HAVING sum(length) > 0 ORDER BY file_name LIMIT 1");
	wal.Bind(1, branch_id);
	if (wal.Step()) {
		Fail(ErrorCode::SNAPSHOT_NOT_CHECKPOINTED,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) + " still has " +
		         std::to_string(wal.Int(1)) + " bytes of WAL (" + wal.Text(0) +
		         "). Run CHECKPOINT on the attached database, then take the snapshot again.");
	}
	auto file = session.db.Prepare("SELECT root_id FROM branch_files WHERE branch_id = ? AND file_name = ?");
	file.Bind(1, branch_id).Bind(2, MAIN_FILE_NAME);
	if (!file.Step() || file.IsNull(0)) {
		Fail(ErrorCode::SNAPSHOT_NOT_CHECKPOINTED,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " has no stored database file yet. Attach it once so that it is created, then take the snapshot.");
	}
	return file.Int(0);
}

SnapshotRecord HistoryStore::CreateSnapshot(const std::string &database, const std::string &branch,
                                            const SnapshotRequest &req) {
	auto txn = core.Write();
	NewSnapshot snapshot;
	snapshot.database_id = RequireDatabaseId(txn, database);
	auto branch_id = RequireBranchId(txn, database, branch);
	RequireUniqueSnapshotName(txn, snapshot.database_id, database, req.name);
	snapshot.root_id = RequireCheckpointedRoot(txn, branch_id, database, branch);
	snapshot.name = req.name;
	snapshot.author = req.author;
	snapshot.message = req.message;
	snapshot.branch_name = branch;
	if (auto parent = BranchHead(txn, branch_id)) {
		snapshot.parents.push_back(*parent);
	}
	auto record = AppendSnapshot(txn, snapshot);
	SetBranchHead(txn, branch_id, record.snapshot_id);
	CrashPoint("snapshot.before_commit");
	txn.Commit();
	return record;
}

std::vector<SnapshotRecord> HistoryStore::ListSnapshots(const std::string &database, std::optional<int64_t> before,
                                                        std::optional<int64_t> page_size) {
	auto session = core.Read();
	RequireDatabaseId(session, database);
	// Newest first under a LIMIT, so SQLite walks the (database_id, snapshot_id) key backwards and stops.
	auto sql = std::string(SNAPSHOT_COLUMNS) + "WHERE d.database_name = ?" + (before ? " AND s.snapshot_id < ?" : "") +
	           " ORDER BY s.snapshot_id DESC" + (page_size ? " LIMIT ?" : "");
	auto stmt = session.db.Prepare(sql);
	int next = 1;
	stmt.Bind(next++, database);
	if (before) {
		stmt.Bind(next++, *before);
	}
	if (page_size) {
		stmt.Bind(next++, *page_size);
	}
	std::vector<SnapshotRecord> out;
	while (stmt.Step()) {
		out.push_back(ReadSnapshotRow(stmt));
	}
	std::reverse(out.begin(), out.end());
	return out;
}

std::optional<SnapshotRecord> HistoryStore::FirstSnapshot(const std::string &where, const std::string &database,
                                                          std::optional<int64_t> value) {
	auto session = core.Read();
	auto stmt = session.db.Prepare(std::string(SNAPSHOT_COLUMNS) + where);
	stmt.Bind(1, database);
	if (value) {
		stmt.Bind(2, *value);
	}
	if (stmt.Step()) {
		return ReadSnapshotRow(stmt);
	}
	return std::nullopt;
}

std::optional<SnapshotRecord> HistoryStore::FindSnapshot(const std::string &database, int64_t snapshot_id) {
	return FirstSnapshot("WHERE d.database_name = ? AND s.snapshot_id = ?", database, snapshot_id);
}

std::optional<SnapshotRecord> HistoryStore::FindSnapshotAsOf(const std::string &database, int64_t timestamp_us) {
	// A seek on snapshots_by_time (database_id, created_at_us, snapshot_id), read backwards from the time.
	return FirstSnapshot("WHERE d.database_name = ? AND s.created_at_us <= ? ORDER BY s.created_at_us DESC, "
	                     "s.snapshot_id DESC LIMIT 1",
	                     database, timestamp_us);
}

std::optional<SnapshotRecord> HistoryStore::LatestSnapshot(const std::string &database) {
	// A seek on snapshots_by_branch (database_id, branch_name, snapshot_id), read backwards.
	return FirstSnapshot("WHERE d.database_name = ? AND s.branch_name = 'main' ORDER BY s.snapshot_id DESC LIMIT 1",
	                     database, std::nullopt);
}

bool HistoryStore::HasUnsnapshottedChanges(const std::string &database, const std::string &branch, bool &has_wal) {
	auto session = core.Read();
	auto branch_id = RequireBranchId(session, database, branch);
	auto wal = session.db.Prepare("SELECT count(*) FROM file_extents WHERE branch_id = ? AND length > 0");
	wal.Bind(1, branch_id);
	wal.Step();
	has_wal = wal.Int(0) > 0;
	auto state = session.db.Prepare(
	    "SELECT f.root_id, s.root_id FROM branches b "
	    "LEFT JOIN branch_files f ON f.branch_id = b.branch_id AND f.file_name = ? "
	    "LEFT JOIN snapshots s ON s.database_id = b.database_id AND s.snapshot_id = b.head_snapshot_id "
	    "WHERE b.branch_id = ?");
	state.Bind(1, MAIN_FILE_NAME).Bind(2, branch_id);
	state.Step();
	if (state.IsNull(0)) {
		return has_wal;
	}
	if (state.IsNull(1)) {
		return true;
	}
	// Roots are not content-addressed, so compare their page lists, not their ids.
	StoredFile current, head;
	LoadRoot(session, state.Int(0), current);
	LoadRoot(session, state.Int(1), head);
	return has_wal || current.length != head.length || current.pages != head.pages;
}

using ParentGraph = std::map<int64_t, std::vector<int64_t>>;

//! The walk by one descending range read from the highest start: a snapshot's edges are read when the scan
//! passes its id, by which time every child (a larger id) has been read. It reads the id span of the
//! answer, not the history below it, and each edge costs a step rather than a seek. Returns false if a
//! parent's id is not below its child's (ids out of creation order), which this walk cannot follow.
//! `stop`, when given, ends the walk early: it is asked with each snapshot the walk completes (all of whose
//! children above it have been read), in descending id order, and returns true to stop there.
static bool WalkDescending(MetadataSession &session, int64_t database_id, const std::vector<int64_t> &starts,
                           ParentGraph &graph, const std::function<bool(int64_t)> &stop = nullptr) {
	std::set<int64_t> pending;
	for (auto start : starts) {
		graph[start];
		pending.insert(start);
	}
	// Ordinals descend with the ids, so SQLite reads the primary key backwards without sorting.
	auto edges = session.db.Prepare("SELECT snapshot_id, parent_snapshot_id FROM snapshot_parents WHERE database_id "
	                                "= ? AND snapshot_id <= ? ORDER BY snapshot_id DESC, ordinal DESC");
	edges.Bind(1, database_id).Bind(2, *pending.rbegin());
	bool stopped = false;
	while (!stopped && !pending.empty() && edges.Step()) {
		auto child = edges.Int(0), parent = edges.Int(1);
		// Pending snapshots above this row are complete: read ones (their edges are in the graph), and those
		// without edges, roots, which complete here.
		while (!stopped && !pending.empty() && *pending.rbegin() > child) {
			auto done = *pending.rbegin();
			stopped = stop && graph[done].empty() && stop(done);
			pending.erase(std::prev(pending.end()));
		}
		if (stopped || !pending.count(child)) {
			continue;
		}
		if (parent >= child) {
			return false;
		}
		if (stop && graph[child].empty() && stop(child)) {
			break;
		}
		graph[child].push_back(parent);
		if (graph.emplace(parent, std::vector<int64_t>()).second) {
			pending.insert(parent);
		}
	}
	for (auto &entry : graph) {
		std::reverse(entry.second.begin(), entry.second.end());
	}
	return true;
}

//! The walk for any id order: a recursive query, a primary-key seek per snapshot reached.
static void WalkRecursive(MetadataSession &session, int64_t database_id, const std::vector<int64_t> &starts,
                          ParentGraph &graph) {
	std::string seeds = "SELECT ?2";
	for (size_t i = 1; i < starts.size(); i++) {
		seeds += " UNION SELECT ?" + std::to_string(i + 2);
	}
	auto walk = session.db.Prepare(
	    "WITH RECURSIVE reach(id) AS (" + seeds +
	    " UNION SELECT p.parent_snapshot_id FROM reach r JOIN snapshot_parents p ON p.database_id = ?1 AND "
	    "p.snapshot_id = r.id) SELECT r.id, p.parent_snapshot_id FROM reach r LEFT JOIN snapshot_parents p ON "
	    "p.database_id = ?1 AND p.snapshot_id = r.id ORDER BY r.id, p.ordinal");
	walk.Bind(1, database_id);
	for (size_t i = 0; i < starts.size(); i++) {
		walk.Bind(static_cast<int>(i) + 2, starts[i]);
	}
	while (walk.Step()) {
		auto &parents = graph[walk.Int(0)];
		if (!walk.IsNull(1)) {
			parents.push_back(walk.Int(1));
		}
	}
}

//! The heads that are snapshots of the database, kept or expired.
static std::vector<int64_t> KnownHeads(MetadataSession &session, int64_t database_id,
                                       const std::vector<int64_t> &heads) {
	auto known =
	    session.db.Prepare("SELECT EXISTS(SELECT 1 FROM snapshots WHERE database_id = ?1 AND snapshot_id = ?2) "
	                       "OR EXISTS(SELECT 1 FROM expired_snapshots WHERE database_id = ?1 AND "
	                       "snapshot_id = ?2)");
	std::vector<int64_t> starts;
	for (auto head : heads) {
		known.Reset();
		known.Bind(1, database_id).Bind(2, head);
		if (known.Step() && known.Int(0) != 0) {
			starts.push_back(head);
		}
	}
	return starts;
}

ParentGraph HistoryStore::ReachableParents(const std::string &database, const std::vector<int64_t> &heads) {
	auto session = core.Read();
	// One read transaction for all statements: SQLite otherwise takes and drops its file lock per statement.
	SqliteReadTransaction snapshot(session.db);
	auto database_id = RequireDatabaseId(session, database);
	auto starts = KnownHeads(session, database_id, heads);
	ParentGraph graph;
	if (!starts.empty() && !WalkDescending(session, database_id, starts, graph)) {
		graph.clear();
		WalkRecursive(session, database_id, starts, graph);
	}
	return graph;
}

std::optional<ParentGraph> HistoryStore::ReachableParentsPage(const std::string &database,
                                                              const std::vector<int64_t> &heads,
                                                              std::optional<int64_t> before, int64_t limit,
                                                              int64_t &floor) {
	auto session = core.Read();
	SqliteReadTransaction snapshot(session.db);
	auto database_id = RequireDatabaseId(session, database);
	auto starts = KnownHeads(session, database_id, heads);
	ParentGraph graph;
	int64_t taken = 0;
	floor = INT64_MIN;
	if (starts.empty()) {
		return graph;
	}
	// The walk completes snapshots in descending id order (each once every child above it was read); the page
	// is the first `limit` of them below `before`, and the walk stops at the next one.
	auto stop = [&](int64_t child) {
		if (taken >= limit) {
			return true;
		}
		floor = child;
		if (!before || child < *before) {
			taken++;
		}
		return false;
	};
	if (!WalkDescending(session, database_id, starts, graph, stop)) {
		return std::nullopt;
	}
	if (taken < limit) {
		floor = INT64_MIN; // the walk ended: every snapshot it reached is complete
	}
	return graph;
}

std::function<std::vector<int64_t>(int64_t)> HistoryStore::ParentReader(const std::string &database) {
	int64_t database_id = 0;
	{
		auto session = core.Read();
		database_id = RequireDatabaseId(session, database);
	}
	//! The edges read so far and the id ranges they cover: an id inside a range and absent from `parents` has none.
	struct Window {
		std::map<int64_t, std::vector<int64_t>> parents;
		std::vector<std::pair<int64_t, int64_t>> covered;
		int64_t next_span = 32;
	};
	auto window = std::make_shared<Window>();
	return [this, database_id, window](int64_t snapshot_id) {
		for (auto &range : window->covered) {
			if (snapshot_id >= range.first && snapshot_id <= range.second) {
				auto found = window->parents.find(snapshot_id);
				return found == window->parents.end() ? std::vector<int64_t>() : found->second;
			}
		}
		// A walk reads ids in descending order, mostly close together: one range read of the ids below this one
		// serves the next reads, where a seek per id was a statement (and a lock of SQLite's) per snapshot walked.
		// The span doubles with each read, so a long walk costs few statements and reads at most twice its span.
		auto low = snapshot_id - window->next_span + 1;
		window->next_span *= 2;
		auto session = core.Read();
		auto stmt = session.db.Prepare("SELECT snapshot_id, parent_snapshot_id FROM snapshot_parents "
		                               "WHERE database_id = ? AND snapshot_id BETWEEN ? AND ? ORDER BY snapshot_id, "
		                               "ordinal");
		stmt.Bind(1, database_id).Bind(2, low).Bind(3, snapshot_id);
		while (stmt.Step()) {
			window->parents[stmt.Int(0)].push_back(stmt.Int(1));
		}
		window->covered.emplace_back(low, snapshot_id);
		auto found = window->parents.find(snapshot_id);
		return found == window->parents.end() ? std::vector<int64_t>() : found->second;
	};
}

std::set<int64_t> HistoryStore::KeptAmong(const std::string &database, const std::vector<int64_t> &snapshot_ids) {
	std::set<int64_t> kept;
	if (snapshot_ids.empty()) {
		return kept;
	}
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	// One range read over the ids' span: a seek per id cost more, as the ids are most of that span.
	auto span = std::minmax_element(snapshot_ids.begin(), snapshot_ids.end());
	auto stmt = session.db.Prepare(
	    "SELECT snapshot_id FROM snapshots WHERE database_id = ? AND snapshot_id BETWEEN ? AND ? ORDER BY snapshot_id");
	stmt.Bind(1, database_id).Bind(2, *span.first).Bind(3, *span.second);
	std::vector<int64_t> present;
	while (stmt.Step()) {
		present.push_back(stmt.Int(0));
	}
	for (auto id : snapshot_ids) {
		if (std::binary_search(present.begin(), present.end(), id)) {
			kept.insert(id);
		}
	}
	return kept;
}

std::optional<int64_t> HistoryStore::SnapshotExpiredAt(const std::string &database, int64_t snapshot_id) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT e.expired_at_us FROM expired_snapshots e JOIN databases d USING "
	                               "(database_id) WHERE d.database_name = ? AND e.snapshot_id = ?");
	stmt.Bind(1, database).Bind(2, snapshot_id);
	if (stmt.Step()) {
		return stmt.Int(0);
	}
	return std::nullopt;
}

void HistoryStore::RequireKeptSnapshot(const std::string &database, int64_t snapshot_id, const std::string &listing) {
	if (FindSnapshot(database, snapshot_id)) {
		return;
	}
	if (SnapshotExpiredAt(database, snapshot_id)) {
		Fail(ErrorCode::SNAPSHOT_EXPIRED, "Snapshot " + std::to_string(snapshot_id) + " of database " +
		                                      QuoteName(database) +
		                                      " was expired. List the snapshots still kept with " + listing + ".");
	}
	Fail(ErrorCode::SNAPSHOT_NOT_FOUND, "Database " + QuoteName(database) + " has no snapshot " +
	                                        std::to_string(snapshot_id) + ". List its snapshots with " + listing + ".");
}

int64_t HistoryStore::RequireBranchHead(const std::string &database, const std::string &branch_name,
                                        const std::string &reader) {
	auto branch = FindBranch(database, branch_name);
	if (!branch) {
		Fail(ErrorCode::BRANCH_NOT_FOUND, "Database " + QuoteName(database) + " has no branch " +
		                                      QuoteName(branch_name) + ". List branches with differential_branches('" +
		                                      database + "').");
	}
	if (!branch->head_snapshot_id) {
		Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
		     "Branch " + QuoteName(branch_name) + " has no snapshot yet; " + reader +
		         " published snapshots only. Take one with differential_create_snapshot() first.");
	}
	return *branch->head_snapshot_id;
}

} // namespace differential
