// The diff:// file system DuckDB's native storage runs on. It maps each path to a VersionedFile,
// enforces one writer per branch (a lock file per branch) and counts open handles per branch.
#pragma once

#include "common/duckdb_logging.hpp"
#include "duckdb/common/file_system.hpp"
#include "storage/repository_storage.hpp"
#include "storage/versioned_file.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

namespace differential {

using StorageResolver = std::function<std::shared_ptr<RepositoryStorage>(const std::string &repository)>;

//! Routes the calling thread's log events to an instance's DuckDB log while it lives (or nowhere,
//! without an instance: unit tests and tools).
class InstanceLogScope {
public:
	explicit InstanceLogScope(duckdb::DatabaseInstance *instance) {
		if (instance) {
			scope.emplace(*instance);
		}
	}

private:
	std::optional<DuckDBLogScope> scope;
};

class DiffFileSystem : public duckdb::FileSystem {
public:
	//! `instance`, when given, receives the log events of this file system's calls.
	explicit DiffFileSystem(StorageResolver resolver, duckdb::DatabaseInstance *instance = nullptr);

	std::string GetName() const override {
		return "DifferentialFileSystem";
	}
	bool CanHandleFile(const std::string &path) override;

	duckdb::unique_ptr<duckdb::FileHandle> OpenFile(const std::string &path, duckdb::FileOpenFlags flags,
	                                                duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void Read(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location) override;
	void Write(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes, duckdb::idx_t location) override;
	int64_t Read(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes) override;
	int64_t Write(duckdb::FileHandle &handle, void *buffer, int64_t nr_bytes) override;
	int64_t GetFileSize(duckdb::FileHandle &handle) override;
	duckdb::timestamp_t GetLastModifiedTime(duckdb::FileHandle &handle) override;
	void Truncate(duckdb::FileHandle &handle, int64_t new_size) override;
	void FileSync(duckdb::FileHandle &handle) override;
	bool Trim(duckdb::FileHandle &handle, duckdb::idx_t offset_bytes, duckdb::idx_t length_bytes) override;
	void Seek(duckdb::FileHandle &handle, duckdb::idx_t location) override;
	void Reset(duckdb::FileHandle &handle) override;
	duckdb::idx_t SeekPosition(duckdb::FileHandle &handle) override;
	bool CanSeek() override {
		return true;
	}
	bool OnDiskFile(duckdb::FileHandle &handle) override {
		return true;
	}

	bool FileExists(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void RemoveFile(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool TryRemoveFile(const std::string &filename, duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	void MoveFile(const std::string &source, const std::string &target,
	              duckdb::optional_ptr<duckdb::FileOpener> opener) override;
	bool DirectoryExists(const std::string &directory, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
		return true;
	}
	void CreateDirectory(const std::string &directory, duckdb::optional_ptr<duckdb::FileOpener> opener) override {
	}

	//! Open handles on the files of a branch or snapshot (FileAddress::OwnerKey()) in this process,
	//! across every DuckDB instance: the real "is it closed" signal, since DETACH may leave files open.
	static int64_t OpenHandleCount(const std::string &owner_key);
	//! Whether this process has the file at `path` open for writing (a branch's database file: attached).
	static bool HasWriter(const std::string &path);
	//! Segments of the repository holding records that files open for writing in this process have
	//! not published yet: cleanup must not touch them.
	static std::set<uint64_t> UnpublishedSegments(const std::string &repository);
	//! Called by handles as they close.
	static void ReleaseHandle(const std::shared_ptr<VersionedFile> &file, bool writable);
	//! Routes this thread's log events to the instance's DuckDB log until the result goes.
	InstanceLogScope RouteLogs() {
		return InstanceLogScope(instance);
	}

private:
	std::shared_ptr<VersionedFile> Lookup(const std::string &path, FileAddress &address);

	StorageResolver resolver;
	duckdb::DatabaseInstance *instance;
};

} // namespace differential
