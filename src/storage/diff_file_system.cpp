// diff:// file system: DuckDB's reads and writes land in VersionedFiles; FileSync publishes.
#include "storage/diff_file_system.hpp"

#include "common/counters.hpp"
#include "common/crash_points.hpp"
#include "common/duckdb_errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "storage/branch_lock.hpp"
#include "storage/remote_file.hpp"
#include "storage/sync_observer.hpp"

#include <atomic>
#include <condition_variable>

namespace differential {

using duckdb::FileHandle;
using duckdb::idx_t;

class DiffFileHandle : public FileHandle {
public:
	DiffFileHandle(DiffFileSystem &fs, const std::string &path, duckdb::FileOpenFlags flags,
	               std::shared_ptr<VersionedFile> file, bool writable)
	    : FileHandle(fs, path, flags), file(std::move(file)), writable(writable) {
	}
	//! A remote image's database file: read-only, and outside the registry of local files.
	DiffFileHandle(DiffFileSystem &fs, const std::string &path, duckdb::FileOpenFlags flags,
	               std::shared_ptr<RemoteImageFile> remote, bool remote_wal = false)
	    : FileHandle(fs, path, flags), writable(false), remote(std::move(remote)), remote_wal(remote_wal) {
	}
	~DiffFileHandle() override {
		DiffFileHandle::Close();
	}
	void Close() override {
		if (file) {
			auto owned = std::move(file);
			file.reset();
			auto log = static_cast<DiffFileSystem &>(file_system).RouteLogs();
			DiffFileSystem::ReleaseHandle(owned, writable);
		}
	}

	uint64_t Length() {
		if (remote) {
			return remote_wal ? remote->WalLength() : remote->Length();
		}
		return file->Length();
	}
	uint64_t ReadAt(void *buffer, uint64_t size, uint64_t offset) {
		if (remote) {
			return remote_wal ? remote->ReadWal(buffer, size, offset) : remote->Read(buffer, size, offset);
		}
		return file->Read(buffer, size, offset);
	}

	std::shared_ptr<VersionedFile> file;
	bool writable;
	std::shared_ptr<RemoteImageFile> remote;
	//! The WAL of a shipped state (remote image), read from memory.
	bool remote_wal = false;
	uint64_t position = 0;
};

struct LiveFile {
	std::shared_ptr<VersionedFile> file;
	int64_t handles = 0;
	int64_t writers = 0;
	//! The branch lock, for a branch's database file; released when the entry goes.
	std::shared_ptr<BranchLock> lock;
	//! The last handle closed and its publication runs, outside the registry lock: opens of this path wait for
	//! it (FileRegistry::published), everything else in the process goes on.
	bool publishing = false;
};

//! Shared by every DiffFileSystem in the process (one per DuckDB instance).
//! What a read-only open of a branch's database file saw of its WAL companions, so that the
//! companions opened next are the ones published with it, not a newer WAL of another writer.
struct FrozenView {
	int64_t readers = 0;
	std::map<std::string, StoredFile> files;
};

struct FileRegistry {
	std::mutex lock;
	//! Signalled when a publication on close ends (LiveFile::publishing).
	std::condition_variable published;
	std::map<std::string, FrozenView> frozen;
	//! Files with a writable handle open, by path; every open of them shares the one VersionedFile.
	std::map<std::string, LiveFile> live;
	std::map<std::string, int64_t> handles_by_owner;
};

static FileRegistry &Registry() {
	static auto *registry = new FileRegistry();
	return *registry;
}

//! The frozen companion for `address`, when a read-only open of its database file made one and
//! no writer of that branch is open here (the writer's own WAL reads must see its live files).
static const FrozenView *FrozenFor(FileRegistry &registry, const FileAddress &address) {
	if (address.IsMainFile() || address.IsSnapshot()) {
		return nullptr;
	}
	FileAddress main = address;
	main.file_name = MAIN_FILE_NAME;
	auto live = registry.live.find(main.ToPath());
	if (live != registry.live.end() && live->second.writers > 0) {
		return nullptr;
	}
	auto view = registry.frozen.find(address.OwnerKey());
	return view == registry.frozen.end() ? nullptr : &view->second;
}

static DiffFileHandle &AsDiff(FileHandle &handle) {
	return handle.Cast<DiffFileHandle>();
}

DiffFileSystem::DiffFileSystem(StorageResolver resolver_p, duckdb::DatabaseInstance *instance_p)
    : resolver(std::move(resolver_p)), instance(instance_p) {
}

bool DiffFileSystem::CanHandleFile(const std::string &path) {
	return IsDiffPath(path);
}

static bool CreatesFile(duckdb::FileOpenFlags flags) {
	return flags.CreateFileIfNotExists() || flags.OverwriteExistingFile();
}

//! Makes `file` what the open flags ask for: emptied, created, or refused when missing (null when
//! the flags allow a missing file).
static bool PrepareForOpen(VersionedFile &file, bool exists, duckdb::FileOpenFlags flags, const std::string &path) {
	if (flags.OverwriteExistingFile() || (!exists && CreatesFile(flags))) {
		file.CreateEmpty();
	} else if (!exists) {
		if (flags.ReturnNullIfNotExists()) {
			return false;
		}
		Fail(ErrorCode::FILE_NOT_FOUND, "No file " + path + " in the repository.");
	}
	return true;
}

//! Another writable open of a file this process already writes: they share one VersionedFile.
static std::shared_ptr<VersionedFile> OpenLiveFile(LiveFile &entry, const FileAddress &address,
                                                   duckdb::FileOpenFlags flags, const std::string &path) {
	if (address.IsMainFile() && entry.writers > 0) {
		Fail(ErrorCode::BRANCH_IN_USE,
		     "Branch " + QuoteName(address.branch) + " of database " + QuoteName(address.database) +
		         " is already attached for writing in this process. Use that attachment, or attach this one with "
		         "(READ_ONLY).");
	}
	if (!PrepareForOpen(*entry.file, entry.file->Exists(), flags, path)) {
		return nullptr;
	}
	entry.handles++;
	entry.writers++;
	return entry.file;
}

//! Loads the published version, or for a read-only companion the one frozen with its database file.
static bool LoadVersion(FileRegistry &registry, VersionedFile &file, const FileAddress &address, bool write) {
	auto view = write ? nullptr : FrozenFor(registry, address);
	if (!view) {
		return file.Load();
	}
	auto it = view->files.find(address.file_name);
	return file.LoadFrom(it == view->files.end() ? StoredFile() : it->second, it != view->files.end());
}

//! Remembers the companions a read-only open of a branch's database file read with it.
static void FreezeCompanions(FileRegistry &registry, const FileAddress &address, VersionedFile &file) {
	auto &view = registry.frozen[address.OwnerKey()];
	view.readers++;
	view.files.clear();
	for (auto &companion : file.TakeCompanions()) {
		StoredFile stored;
		stored.length = companion.length;
		stored.extents = companion.extents;
		view.files[companion.file_name] = stored;
	}
}

//! The first open of a file in this process (or any read-only open): load it from the metadata,
//! taking the branch lock first when it is a branch's database file opened for writing.
static std::shared_ptr<VersionedFile> OpenStoredFile(FileRegistry &registry, const StorageResolver &resolver,
                                                     const FileAddress &address, duckdb::FileOpenFlags flags,
                                                     const std::string &path, bool write) {
	std::shared_ptr<VersionedFile> file = VersionedFile::Open(address, resolver(address.repository), write);
	std::shared_ptr<BranchLock> lock;
	if (write && address.IsMainFile()) {
		lock = AdoptOrTakeBranchLock(address);
	}
	if (!PrepareForOpen(*file, LoadVersion(registry, *file, address, write), flags, path)) {
		return nullptr;
	}
	if (!write && address.IsMainFile() && !address.IsSnapshot()) {
		FreezeCompanions(registry, address, *file);
	}
	if (write) {
		LiveFile entry;
		entry.file = file;
		entry.handles = 1;
		entry.writers = 1;
		entry.lock = std::move(lock);
		registry.live[path] = std::move(entry);
	}
	return file;
}

//! A remote image has its database file and, for a shipped state, its WAL; no other companion; writes refused.
static duckdb::unique_ptr<FileHandle> OpenRemoteImage(DiffFileSystem &fs, const std::string &path,
                                                      duckdb::FileOpenFlags flags) {
	bool is_database_file = false;
	auto image = FindRemoteImage(path, is_database_file);
	if (image && flags.OpenForWriting()) {
		Fail(ErrorCode::READ_ONLY, "Cannot write " + path + ": it is a read-only remote attachment of " +
		                               image->Locator() + ". Write to the database where it is exported from.");
	}
	if (image && !is_database_file && image->HasWal() && IsRemoteWalPath(path)) {
		return duckdb::make_uniq<DiffFileHandle>(fs, path, flags, image, true);
	}
	if (!image || !is_database_file) {
		if (flags.ReturnNullIfNotExists()) {
			return nullptr;
		}
		Fail(ErrorCode::FILE_NOT_FOUND,
		     "No file " + path + (image ? ": a remote attachment has only its database file." : ": it was detached."));
	}
	return duckdb::make_uniq<DiffFileHandle>(fs, path, flags, image);
}

duckdb::unique_ptr<FileHandle> DiffFileSystem::OpenFile(const std::string &path, duckdb::FileOpenFlags flags,
                                                        duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto log = RouteLogs();
	Count(Counter::FS_OPEN);
	return Translated([&]() -> duckdb::unique_ptr<FileHandle> {
		if (IsRemoteImagePath(path)) {
			return OpenRemoteImage(*this, path, flags);
		}
		auto address = ParseDiffPath(path);
		bool write = flags.OpenForWriting();
		if (write && address.IsSnapshot()) {
			Fail(ErrorCode::READ_ONLY,
			     "Snapshot " + std::to_string(address.snapshot_id) + " of database " + QuoteName(address.database) +
			         " is read-only. Create a branch from it with differential_create_branch() to write.");
		}
		auto &registry = Registry();
		std::unique_lock<std::mutex> guard(registry.lock);
		// An open of a file whose last close is publishing it waits for that publication: it then sees it.
		registry.published.wait(guard, [&]() {
			auto closing = registry.live.find(path);
			return closing == registry.live.end() || !closing->second.publishing;
		});
		// Read-only opens see the published state, never another attachment's unpublished writes.
		auto live = write ? registry.live.find(path) : registry.live.end();
		auto file = live != registry.live.end() ? OpenLiveFile(live->second, address, flags, path)
		                                        : OpenStoredFile(registry, resolver, address, flags, path, write);
		if (!file) {
			return nullptr;
		}
		registry.handles_by_owner[address.OwnerKey()]++;
		auto handle = duckdb::make_uniq<DiffFileHandle>(*this, path, flags, file, write);
		if (flags.OpenForAppending()) {
			handle->position = file->Length();
		}
		return std::move(handle);
	});
}

//! Closing publishes what was written, as closing a native file leaves it in the file. A close
//! cannot report to DuckDB (it runs in destructors), and nothing it could lose was acknowledged:
//! DuckDB syncs what it commits or checkpoints before that returns. So a failure is logged.
static void PublishOnClose(VersionedFile &file) {
	auto address = file.Address();
	PausePoint("publish.on_close", address.database + "." + address.branch);
	try {
		file.Sync();
	} catch (std::exception &error) {
		LogWarning("publish_on_close_failed",
		           std::string(error.what()) + " (while closing " + file.Address().ToPath() +
		               ": its unsynced writes were dropped; it keeps its last published version)");
	}
}

static void ReleaseOwnerHandle(FileRegistry &registry, const FileAddress &address) {
	auto owner = registry.handles_by_owner.find(address.OwnerKey());
	if (owner != registry.handles_by_owner.end() && --owner->second <= 0) {
		registry.handles_by_owner.erase(owner);
	}
}

void DiffFileSystem::ReleaseHandle(const std::shared_ptr<VersionedFile> &file, bool writable) {
	auto &registry = Registry();
	std::unique_lock<std::mutex> guard(registry.lock);
	auto address = file->Address();
	if (!writable && address.IsMainFile() && !address.IsSnapshot()) {
		auto view = registry.frozen.find(address.OwnerKey());
		if (view != registry.frozen.end() && --view->second.readers <= 0) {
			registry.frozen.erase(view);
		}
	}
	auto it = registry.live.find(address.ToPath());
	if (it == registry.live.end() || it->second.file != file || --it->second.handles > 0) {
		if (it != registry.live.end() && it->second.file == file) {
			it->second.writers -= writable ? 1 : 0;
		}
		ReleaseOwnerHandle(registry, address);
		return;
	}
	it->second.writers -= writable ? 1 : 0;
	it->second.publishing = true;
	// The fsync and the metadata commit run without the registry lock, which every open, FileExists and shipping
	// notification of every branch in the process takes. The branch's handle count stays up until the entry
	// goes, so "is the branch closed" checks see it open until its publication is done.
	guard.unlock();
	PublishOnClose(*file);
	guard.lock();
	it = registry.live.find(address.ToPath());
	if (it != registry.live.end() && it->second.file == file) {
		// Releases the branch lock with the entry, after the last publication.
		registry.live.erase(it);
	}
	ReleaseOwnerHandle(registry, address);
	registry.published.notify_all();
}

std::set<uint64_t> DiffFileSystem::UnpublishedSegments(const std::string &repository) {
	auto &registry = Registry();
	std::lock_guard<std::mutex> guard(registry.lock);
	std::set<uint64_t> out;
	for (auto &entry : registry.live) {
		if (entry.second.file->Address().repository == repository) {
			entry.second.file->CollectUnpublishedSegments(out);
		}
	}
	return out;
}

int64_t DiffFileSystem::OpenHandleCount(const std::string &owner_key) {
	auto &registry = Registry();
	std::lock_guard<std::mutex> guard(registry.lock);
	auto it = registry.handles_by_owner.find(owner_key);
	return it == registry.handles_by_owner.end() ? 0 : it->second;
}

bool DiffFileSystem::HasWriter(const std::string &path) {
	auto &registry = Registry();
	std::lock_guard<std::mutex> guard(registry.lock);
	auto it = registry.live.find(path);
	return it != registry.live.end() && it->second.writers > 0;
}

void DiffFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	// Remote reads, and local reads of chunks evicted after an export, fetch and log their requests.
	auto log = RouteLogs();
	Count(Counter::FS_READ);
	Count(Counter::FS_READ_BYTES, static_cast<uint64_t>(nr_bytes));
	Translated([&]() {
		auto &h = AsDiff(handle);
		auto n = h.ReadAt(buffer, static_cast<uint64_t>(nr_bytes), location);
		if (n != static_cast<uint64_t>(nr_bytes)) {
			Fail(ErrorCode::SHORT_READ, "Read of " + std::to_string(nr_bytes) + " bytes at " +
			                                std::to_string(location) + " from " + h.path + " goes past its end (" +
			                                std::to_string(h.Length()) + " bytes).");
		}
	});
}

void DiffFileSystem::Write(FileHandle &handle, void *buffer, int64_t nr_bytes, idx_t location) {
	auto log = RouteLogs();
	Count(Counter::FS_WRITE);
	Count(Counter::FS_WRITE_BYTES, static_cast<uint64_t>(nr_bytes));
	Translated([&]() {
		auto &h = AsDiff(handle);
		if (!h.writable) {
			Fail(ErrorCode::READ_ONLY, "Cannot write " + h.path + ": it is opened read-only.");
		}
		h.file->Write(buffer, static_cast<uint64_t>(nr_bytes), location);
	});
}

int64_t DiffFileSystem::Read(FileHandle &handle, void *buffer, int64_t nr_bytes) {
	auto log = RouteLogs();
	return Translated([&]() {
		auto &h = AsDiff(handle);
		auto n = h.ReadAt(buffer, static_cast<uint64_t>(nr_bytes), h.position);
		Count(Counter::FS_READ);
		Count(Counter::FS_READ_BYTES, n);
		h.position += n;
		return static_cast<int64_t>(n);
	});
}

int64_t DiffFileSystem::Write(FileHandle &handle, void *buffer, int64_t nr_bytes) {
	auto &h = AsDiff(handle);
	if (h.flags.OpenForAppending()) {
		h.position = h.Length();
	}
	Write(handle, buffer, nr_bytes, h.position);
	h.position += static_cast<uint64_t>(nr_bytes);
	return nr_bytes;
}

int64_t DiffFileSystem::GetFileSize(FileHandle &handle) {
	Count(Counter::FS_SIZE);
	return static_cast<int64_t>(AsDiff(handle).Length());
}

duckdb::timestamp_t DiffFileSystem::GetLastModifiedTime(FileHandle &handle) {
	return duckdb::timestamp_t(0);
}

void DiffFileSystem::Truncate(FileHandle &handle, int64_t new_size) {
	auto log = RouteLogs();
	Count(Counter::FS_TRUNCATE);
	Translated([&]() {
		auto &h = AsDiff(handle);
		if (!h.writable) {
			Fail(ErrorCode::READ_ONLY, "Cannot truncate " + h.path + ": it is opened read-only.");
		}
		h.file->Truncate(static_cast<uint64_t>(new_size));
		h.position = std::min<uint64_t>(h.position, static_cast<uint64_t>(new_size));
	});
}

static std::mutex observer_lock;
static std::shared_ptr<SyncObserver> &ObserverSlot() {
	static auto *slot = new std::shared_ptr<SyncObserver>();
	return *slot;
}
//! The installed observer, for the lock-free check on every sync. Observers are installed once at load and
//! never destroyed while a DuckDB instance can sync (the slot keeps each one), so the pointer stays valid.
static std::atomic<SyncObserver *> installed_observer {nullptr};

void InstallSyncObserver(std::shared_ptr<SyncObserver> observer) {
	std::lock_guard<std::mutex> guard(observer_lock);
	installed_observer = observer.get();
	ObserverSlot() = std::move(observer);
}

std::shared_ptr<SyncObserver> CurrentSyncObserver() {
	std::lock_guard<std::mutex> guard(observer_lock);
	return ObserverSlot();
}

//! Tells the observer (if any) that a branch file open for writing was published, with the branch's
//! database file when it is live in this process.
static void NotifySynced(VersionedFile &file) {
	// The common case (no branch ships its WAL): one atomic load, no lock, no lookup.
	auto watcher = installed_observer.load();
	if (!watcher || !watcher->Watching()) {
		return;
	}
	auto observer = CurrentSyncObserver();
	if (!observer) {
		return;
	}
	auto address = file.Address();
	if (address.IsSnapshot()) {
		return;
	}
	std::shared_ptr<VersionedFile> main;
	{
		auto main_address = address;
		main_address.file_name = MAIN_FILE_NAME;
		auto &registry = Registry();
		std::lock_guard<std::mutex> guard(registry.lock);
		auto live = registry.live.find(main_address.ToPath());
		if (live != registry.live.end()) {
			main = live->second.file;
		}
	}
	observer->AfterSync(address, file, main.get());
}

void DiffFileSystem::FileSync(FileHandle &handle) {
	auto log = RouteLogs();
	Count(Counter::FS_SYNC);
	Translated([&]() {
		// A remote image is immutable: there is nothing to sync.
		auto &h = AsDiff(handle);
		if (h.file) {
			h.file->Sync();
			if (h.writable) {
				NotifySynced(*h.file);
			}
		}
	});
}

bool DiffFileSystem::Trim(FileHandle &handle, idx_t offset_bytes, idx_t length_bytes) {
	auto log = RouteLogs();
	Count(Counter::FS_TRIM);
	return Translated([&]() {
		auto &h = AsDiff(handle);
		if (!h.writable) {
			return false;
		}
		// DuckDB trims right after the header sync that freed the blocks: publishing now makes the
		// freed bytes unreachable at once, instead of at the next checkpoint.
		if (h.file->Trim(offset_bytes, length_bytes)) {
			h.file->Sync();
		}
		return true;
	});
}

void DiffFileSystem::Seek(FileHandle &handle, idx_t location) {
	Count(Counter::FS_SEEK);
	AsDiff(handle).position = location;
}

void DiffFileSystem::Reset(FileHandle &handle) {
	Count(Counter::FS_SEEK);
	AsDiff(handle).position = 0;
}

idx_t DiffFileSystem::SeekPosition(FileHandle &handle) {
	Count(Counter::FS_SEEK);
	return AsDiff(handle).position;
}

std::shared_ptr<VersionedFile> DiffFileSystem::Lookup(const std::string &path, FileAddress &address) {
	address = ParseDiffPath(path);
	auto &registry = Registry();
	std::lock_guard<std::mutex> guard(registry.lock);
	auto it = registry.live.find(path);
	return it == registry.live.end() ? nullptr : it->second.file;
}

bool DiffFileSystem::FileExists(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	Count(Counter::FS_EXISTS);
	return Translated([&]() {
		if (IsRemoteImagePath(filename)) {
			bool is_database_file = false;
			auto image = FindRemoteImage(filename, is_database_file);
			return image && (is_database_file || (image->HasWal() && IsRemoteWalPath(filename)));
		}
		FileAddress address;
		if (auto file = Lookup(filename, address)) {
			return file->Exists();
		}
		{
			auto &registry = Registry();
			std::lock_guard<std::mutex> guard(registry.lock);
			if (auto view = FrozenFor(registry, address)) {
				return view->files.count(address.file_name) > 0;
			}
		}
		StoredFile stored;
		return resolver(address.repository)->catalog->LoadFile(address, stored);
	});
}

bool DiffFileSystem::TryRemoveFile(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	Count(Counter::FS_REMOVE);
	return Translated([&]() {
		if (IsRemoteImagePath(filename)) {
			if (FileExists(filename, opener)) {
				Fail(ErrorCode::READ_ONLY, "Cannot remove " + filename + ": remote attachments are read-only.");
			}
			return false;
		}
		FileAddress address;
		auto file = Lookup(filename, address);
		if (address.IsSnapshot()) {
			Fail(ErrorCode::READ_ONLY, "Cannot remove " + filename + ": snapshots are read-only.");
		}
		bool existed = FileExists(filename, opener);
		if (file) {
			file->MarkRemoved();
		}
		if (existed) {
			resolver(address.repository)->catalog->RemoveFile(address);
		}
		return existed;
	});
}

void DiffFileSystem::RemoveFile(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) {
	if (!TryRemoveFile(filename, opener)) {
		throw duckdb::IOException("[differential:file_not_found] Cannot remove " + filename + ": it does not exist.");
	}
}

void DiffFileSystem::MoveFile(const std::string &source, const std::string &target,
                              duckdb::optional_ptr<duckdb::FileOpener> opener) {
	auto log = RouteLogs();
	Count(Counter::FS_MOVE);
	Translated([&]() {
		if (IsRemoteImagePath(source) || IsRemoteImagePath(target)) {
			Fail(ErrorCode::READ_ONLY,
			     "Cannot move " + source + " to " + target + ": remote attachments are read-only.");
		}
		FileAddress from, to;
		auto file = Lookup(source, from);
		to = ParseDiffPath(target);
		if (from.OwnerKey() != to.OwnerKey() || from.IsSnapshot()) {
			Fail(ErrorCode::INVALID_PATH,
			     "Cannot move " + source + " to " + target + ": files move only within one branch.");
		}
		if (from.IsMainFile() != to.IsMainFile()) {
			Fail(ErrorCode::INVALID_PATH,
			     "Cannot move " + source + " to " + target +
			         ": a database file and its WAL files are stored differently. Copy the data instead.");
		}
		if (file) {
			file->Sync();
		}
		resolver(from.repository)->catalog->MoveFile(from, to);
		auto &registry = Registry();
		std::lock_guard<std::mutex> guard(registry.lock);
		auto old_target = registry.live.find(target);
		if (old_target != registry.live.end()) {
			old_target->second.file->MarkRemoved();
			registry.live.erase(old_target);
		}
		auto it = registry.live.find(source);
		if (it != registry.live.end()) {
			it->second.file->Rename(to);
			registry.live[target] = it->second;
			registry.live.erase(it);
		}
	});
}

} // namespace differential
