// An ObjectStore over a local directory with S3's semantics: one file per key, atomic create-only and
// If-Match writes that hold across processes, etags that are the content's SHA-256.
#pragma once

#include "storage/object_store.hpp"

#include <mutex>
#include <sys/types.h>
#include <unordered_map>

namespace differential {

//! Objects live at `<root>/<key>`, so the directory reads (and syncs with any S3 tool) as the bucket
//! would. `<root>/.differential-store/` holds temp files and the lock files. A write goes to a temp file
//! first, is fsynced, then published by link(2) (create-only: fails if the key exists) or rename(2);
//! conditional publishes and deletes hold an flock on one of 64 lock files picked by the key, so they
//! are atomic against every process that uses the same root.
class LocalObjectStore : public ObjectStore {
public:
	//! Creates `root` (and its parents) if needed. Throws a DifferentialError when it cannot.
	explicit LocalObjectStore(std::string root);

	PutResult Put(const PutRequest &request) override;
	GetResult Get(const std::string &key, const std::optional<ByteRange> &range = std::nullopt) override;
	HeadResult Head(const std::string &key) override;
	ListPage List(const std::string &prefix, const std::string &token = "", uint32_t max_keys = 1000) override;
	ObjectOutcome Delete(const std::string &key) override;
	std::string Describe() const override;

private:
	struct FileIdentity {
		dev_t dev;
		ino_t ino;
		int64_t ctime_ns;
		uint64_t size;
		bool operator==(const FileIdentity &other) const {
			return dev == other.dev && ino == other.ino && ctime_ns == other.ctime_ns && size == other.size;
		}
	};
	struct CachedEtag {
		FileIdentity identity;
		std::string etag;
	};

	std::string PathOf(const std::string &key) const;
	//! The etag of the file at `path` (its SHA-256, quoted like S3's), from the cache while the file is
	//! the same file. Returns NOT_FOUND when there is none.
	ObjectOutcome EtagOf(const std::string &key, std::string &etag, uint64_t &size);
	ObjectOutcome WriteTemp(const PutRequest &request, std::string &temp_path);
	ObjectOutcome Publish(const PutRequest &request, const std::string &temp_path);
	ObjectOutcome CheckCondition(const PutRequest &request);
	int LockKey(const std::string &key) const;
	static void SweepTempFiles(const std::string &dir);

	std::string root;
	std::string internal_dir;
	std::mutex cache_lock;
	std::unordered_map<std::string, CachedEtag> etag_cache;
};

} // namespace differential
