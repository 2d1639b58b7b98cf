// LocalObjectStore: S3 object semantics over a directory (create-only via link(2), If-Match under flock).
#include "remote/local_object_store.hpp"

#include "common/errors.hpp"
#include "remote/object_key.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

namespace differential {

// The content's SHA-256 rides along with the file as an extended attribute, so Head and List need not
// read the object; where the file system has no user xattrs the etag is computed from the bytes.
static const char *const ETAG_XATTR = "user.differential.sha256";
static constexpr int LOCK_STRIPES = 64;

static ObjectOutcome Outcome(ObjectStatus status, std::string detail) {
	return {status, std::move(detail)};
}

static ObjectOutcome OsFailure(const std::string &what, const std::string &key) {
	int err = errno;
	// A full disk or a vanished directory may pass; permissions will not.
	auto status = (err == EACCES || err == EPERM || err == EROFS) ? ObjectStatus::DENIED : ObjectStatus::TRANSIENT;
	return Outcome(status, what + " '" + key + "': " + std::strerror(err));
}

static std::string QuotedEtag(const Hash256 &sha256) {
	return "\"" + HashToHex(sha256) + "\"";
}

static bool MakeDirectories(const std::string &path) {
	for (size_t slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
		if (mkdir(path.substr(0, slash).c_str(), 0755) != 0 && errno != EEXIST) {
			return false;
		}
	}
	return mkdir(path.c_str(), 0755) == 0 || errno == EEXIST;
}

static void SyncDirectory(const std::string &path) {
	int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

static std::string ParentOf(const std::string &path) {
	return path.substr(0, path.rfind('/'));
}

static bool ReadAt(int fd, char *out, size_t size, uint64_t offset) {
	while (size > 0) {
		auto n = pread(fd, out, size, static_cast<off_t>(offset));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return false;
		}
		out += n;
		size -= static_cast<size_t>(n);
		offset += static_cast<uint64_t>(n);
	}
	return true;
}

//! The etag of an open object file: the stored attribute, or the SHA-256 of its bytes.
static bool EtagOfFile(int fd, uint64_t size, std::string &etag) {
	char hex[65];
	auto n = fgetxattr(fd, ETAG_XATTR, hex, 64);
	Hash256 hash;
	if (n == 64 && HashFromHex(std::string(hex, 64), hash)) {
		etag = QuotedEtag(hash);
		return true;
	}
	std::string bytes(size, '\0');
	if (!ReadAt(fd, &bytes[0], size, 0)) {
		return false;
	}
	etag = QuotedEtag(Sha256(bytes.data(), bytes.size()));
	return true;
}

//! Holds one lock stripe (an flock on its own open file description) for the scope.
class StripeLock {
public:
	explicit StripeLock(int fd_p) : fd(fd_p) {
	}
	~StripeLock() {
		if (fd >= 0) {
			close(fd); // closing the last descriptor releases the flock
		}
	}
	StripeLock(const StripeLock &) = delete;
	StripeLock &operator=(const StripeLock &) = delete;
	bool Held() const {
		return fd >= 0;
	}

private:
	int fd;
};

LocalObjectStore::LocalObjectStore(std::string root_p) : root(std::move(root_p)) {
	while (root.size() > 1 && root.back() == '/') {
		root.pop_back();
	}
	internal_dir = root + "/" + RESERVED_KEY_SEGMENT;
	if (!MakeDirectories(internal_dir + "/tmp") || !MakeDirectories(internal_dir + "/locks")) {
		Fail(ErrorCode::IO_ERROR, "Cannot create the object store directory " + root + ": " + std::strerror(errno) +
		                              ". Check the path and its permissions.");
	}
	SweepTempFiles(internal_dir + "/tmp");
}

//! Removes temp files that a crashed writer left: named `<pid>-<n>`, their process gone, and untouched
//! for an hour (the age guards against a writer in another pid namespace that shares the directory).
void LocalObjectStore::SweepTempFiles(const std::string &dir) {
	DIR *d = opendir(dir.c_str());
	if (!d) {
		return;
	}
	auto now = time(nullptr);
	while (auto entry = readdir(d)) {
		std::string name = entry->d_name;
		pid_t pid = static_cast<pid_t>(std::atol(name.c_str()));
		struct stat st;
		std::string path = dir + "/" + name;
		if (pid <= 0 || name.find('-') == std::string::npos || stat(path.c_str(), &st) != 0) {
			continue;
		}
		bool gone = kill(pid, 0) != 0 && errno == ESRCH;
		if (gone && now - st.st_mtime > 3600) {
			unlink(path.c_str());
		}
	}
	closedir(d);
}

std::string LocalObjectStore::Describe() const {
	return "file://" + root + "/";
}

std::string LocalObjectStore::PathOf(const std::string &key) const {
	return root + "/" + key;
}

int LocalObjectStore::LockKey(const std::string &key) const {
	auto hash = Sha256(key.data(), key.size());
	std::string path = internal_dir + "/locks/" + std::to_string(hash[0] % LOCK_STRIPES);
	int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		return -1;
	}
	while (flock(fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

ObjectOutcome LocalObjectStore::EtagOf(const std::string &key, std::string &etag, uint64_t &size) {
	int fd = open(PathOf(key).c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR) {
			return Outcome(ObjectStatus::NOT_FOUND, "no object '" + key + "'");
		}
		return OsFailure("Opening", key);
	}
	struct stat st;
	bool ok = fstat(fd, &st) == 0;
	if (ok && S_ISDIR(st.st_mode)) {
		close(fd);
		return Outcome(ObjectStatus::NOT_FOUND, "no object '" + key + "' (only keys below it)");
	}
	size = ok ? static_cast<uint64_t>(st.st_size) : 0;
	ok = ok && EtagOfFile(fd, size, etag);
	auto outcome = ok ? ObjectOutcome {} : OsFailure("Reading", key);
	close(fd);
	return outcome;
}

ObjectOutcome LocalObjectStore::WriteTemp(const PutRequest &request, std::string &temp_path) {
	static std::atomic<uint64_t> counter {0};
	temp_path = internal_dir + "/tmp/" + std::to_string(getpid()) + "-" + std::to_string(counter++);
	int fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		return OsFailure("Creating a temp file for", request.key);
	}
	auto p = static_cast<const char *>(request.data);
	size_t left = request.size;
	bool ok = true;
	while (ok && left > 0) {
		auto n = write(fd, p, left);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		ok = n > 0;
		p += ok ? n : 0;
		left -= ok ? static_cast<size_t>(n) : 0;
	}
	auto hex = HashToHex(Sha256(request.data, request.size));
	// An fs without user xattrs only costs Head a read of the object, so that failure is ignored.
	fsetxattr(fd, ETAG_XATTR, hex.data(), hex.size(), 0);
	ok = ok && fsync(fd) == 0;
	auto outcome = ok ? ObjectOutcome {} : OsFailure("Writing", request.key);
	close(fd);
	if (!ok) {
		unlink(temp_path.c_str());
	}
	return outcome;
}

//! Decides an If-Match precondition; the caller holds the key's lock stripe.
ObjectOutcome LocalObjectStore::CheckCondition(const PutRequest &request) {
	if (request.condition.kind != PutCondition::Kind::IF_MATCH) {
		return {};
	}
	std::string etag;
	uint64_t size;
	auto outcome = EtagOf(request.key, etag, size);
	if (outcome.Ok() && etag != request.condition.etag) {
		return Outcome(ObjectStatus::PRECONDITION_FAILED, "'" + request.key + "' has another etag than If-Match");
	}
	return outcome;
}

//! Checks that no parent of the key is an object and the key is not a directory of other keys: this
//! store maps keys to paths, as versitygw's posix backend does.
static ObjectOutcome CheckPathShape(const std::string &root, const std::string &key) {
	struct stat st;
	for (size_t slash = key.find('/'); slash != std::string::npos; slash = key.find('/', slash + 1)) {
		if (stat((root + "/" + key.substr(0, slash)).c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
			return Outcome(ObjectStatus::INVALID, "the key '" + key.substr(0, slash) + "' exists, so '" + key +
			                                          "' cannot (keys are paths in this store)");
		}
	}
	if (stat((root + "/" + key).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
		return Outcome(ObjectStatus::INVALID,
		               "keys below '" + key + "/' exist, so '" + key + "' cannot (keys are paths in this store)");
	}
	return {};
}

ObjectOutcome LocalObjectStore::Publish(const PutRequest &request, const std::string &temp_path) {
	std::string path = PathOf(request.key);
	StripeLock lock(LockKey(request.key));
	if (!lock.Held()) {
		return OsFailure("Locking", request.key);
	}
	auto outcome = CheckPathShape(root, request.key);
	outcome = outcome.Ok() ? CheckCondition(request) : outcome;
	if (!outcome.Ok()) {
		return outcome;
	}
	// A concurrent Delete may prune the parent directory between mkdir and publish: try again then.
	for (int attempt = 0; attempt < 3; attempt++) {
		if (!MakeDirectories(ParentOf(path))) {
			return OsFailure("Creating the directory of", request.key);
		}
		bool create_only = request.condition.kind == PutCondition::Kind::IF_NONE_MATCH_ANY;
		int rc = create_only ? link(temp_path.c_str(), path.c_str()) : rename(temp_path.c_str(), path.c_str());
		if (rc == 0) {
			SyncDirectory(ParentOf(path));
			return {};
		}
		if (create_only && errno == EEXIST) {
			return Outcome(ObjectStatus::PRECONDITION_FAILED, "'" + request.key + "' exists (If-None-Match: *)");
		}
		if (errno != ENOENT) {
			return OsFailure("Publishing", request.key);
		}
	}
	return OsFailure("Publishing", request.key);
}

PutResult LocalObjectStore::Put(const PutRequest &request) {
	PutResult result;
	std::string why;
	if (!ValidObjectKey(request.key, why)) {
		result.outcome = Outcome(ObjectStatus::INVALID, "invalid key '" + request.key + "': " + why);
		return result;
	}
	auto sha256 = Sha256(request.data, request.size);
	if (request.sha256 && *request.sha256 != sha256) {
		result.outcome = Outcome(ObjectStatus::INVALID,
		                         "the x-amz-checksum-sha256 of '" + request.key + "' does not match its bytes");
		return result;
	}
	std::string temp_path;
	result.outcome = WriteTemp(request, temp_path);
	if (result.outcome.Ok()) {
		result.outcome = Publish(request, temp_path);
		// After link(2) the temp name is a second name of the object; after rename(2) it is gone.
		unlink(temp_path.c_str());
	}
	if (result.outcome.Ok()) {
		result.etag = QuotedEtag(sha256);
	}
	return result;
}

static ObjectOutcome CheckRange(const std::optional<ByteRange> &range, uint64_t size, uint64_t &offset,
                                uint64_t &length) {
	offset = 0;
	length = size;
	if (!range) {
		return {};
	}
	// As S3: an empty range cannot be asked for, one starting at or past the end is refused (416),
	// one running past the end is cut short.
	if (range->length == 0 || range->offset >= size) {
		return Outcome(ObjectStatus::INVALID, "range starts past the end of the object or is empty");
	}
	offset = range->offset;
	length = std::min(range->length, size - range->offset);
	return {};
}

GetResult LocalObjectStore::Get(const std::string &key, const std::optional<ByteRange> &range) {
	GetResult result;
	std::string why;
	if (!ValidObjectKey(key, why)) {
		result.outcome = Outcome(ObjectStatus::INVALID, "invalid key '" + key + "': " + why);
		return result;
	}
	int fd = open(PathOf(key).c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		bool missing = errno == ENOENT || errno == ENOTDIR;
		result.outcome =
		    missing ? Outcome(ObjectStatus::NOT_FOUND, "no object '" + key + "'") : OsFailure("Opening", key);
		return result;
	}
	struct stat st;
	bool stat_ok = fstat(fd, &st) == 0;
	if (!stat_ok || S_ISDIR(st.st_mode)) {
		result.outcome =
		    stat_ok ? Outcome(ObjectStatus::NOT_FOUND, "no object '" + key + "'") : OsFailure("Reading", key);
		close(fd);
		return result;
	}
	result.object_size = static_cast<uint64_t>(st.st_size);
	uint64_t offset, length;
	result.outcome = CheckRange(range, result.object_size, offset, length);
	if (result.outcome.Ok()) {
		result.data.resize(length);
		bool ok = ReadAt(fd, &result.data[0], length, offset) && EtagOfFile(fd, result.object_size, result.etag);
		result.outcome = ok ? ObjectOutcome {} : OsFailure("Reading", key);
	}
	close(fd);
	if (!result.outcome.Ok()) {
		result.data.clear();
	}
	return result;
}

HeadResult LocalObjectStore::Head(const std::string &key) {
	HeadResult result;
	std::string why;
	if (!ValidObjectKey(key, why)) {
		result.outcome = Outcome(ObjectStatus::INVALID, "invalid key '" + key + "': " + why);
		return result;
	}
	result.info.key = key;
	result.outcome = EtagOf(key, result.info.etag, result.info.size);
	return result;
}

//! Collects every object key under `dir` (a directory for key prefix `dir_key`) that starts with `prefix`.
static void CollectKeys(const std::string &dir, const std::string &dir_key, const std::string &prefix,
                        std::vector<std::string> &keys) {
	DIR *d = opendir(dir.c_str());
	if (!d) {
		return;
	}
	while (auto entry = readdir(d)) {
		std::string name = entry->d_name;
		if (name == "." || name == ".." || (dir_key.empty() && name == RESERVED_KEY_SEGMENT)) {
			continue;
		}
		std::string key = dir_key + name;
		// Only descend where the prefix can still match: the key is a prefix of it or the other way round.
		bool related =
		    key.compare(0, std::min(key.size(), prefix.size()), prefix, 0, std::min(key.size(), prefix.size())) == 0;
		if (!related) {
			continue;
		}
		struct stat st;
		if (stat((dir + "/" + name).c_str(), &st) != 0) {
			continue; // deleted while listing
		}
		if (S_ISDIR(st.st_mode)) {
			CollectKeys(dir + "/" + name, key + "/", prefix, keys);
		} else if (S_ISREG(st.st_mode) && key.size() >= prefix.size()) {
			keys.push_back(key);
		}
	}
	closedir(d);
}

ListPage LocalObjectStore::List(const std::string &prefix, const std::string &token, uint32_t max_keys) {
	ListPage page;
	std::vector<std::string> keys;
	CollectKeys(root, "", prefix, keys);
	std::sort(keys.begin(), keys.end());
	// The token is the last key of the previous page (S3's start-after), so deletes between pages are safe.
	auto it = token.empty() ? keys.begin() : std::upper_bound(keys.begin(), keys.end(), token);
	for (; it != keys.end() && page.objects.size() < std::max<uint32_t>(max_keys, 1); ++it) {
		ObjectInfo info;
		info.key = *it;
		auto outcome = EtagOf(*it, info.etag, info.size);
		if (outcome.status == ObjectStatus::NOT_FOUND) {
			continue; // deleted while listing
		}
		if (!outcome.Ok()) {
			page.outcome = outcome;
			page.objects.clear();
			return page;
		}
		page.objects.push_back(std::move(info));
	}
	if (it != keys.end() && !page.objects.empty()) {
		page.next_token = page.objects.back().key;
	}
	return page;
}

ObjectOutcome LocalObjectStore::Delete(const std::string &key) {
	std::string why;
	if (!ValidObjectKey(key, why)) {
		return Outcome(ObjectStatus::INVALID, "invalid key '" + key + "': " + why);
	}
	StripeLock lock(LockKey(key));
	if (!lock.Held()) {
		return OsFailure("Locking", key);
	}
	std::string path = PathOf(key);
	if (unlink(path.c_str()) != 0) {
		// As S3: deleting what is not there (or is only a prefix of other keys) succeeds.
		bool absent = errno == ENOENT || errno == ENOTDIR || errno == EISDIR;
		return absent ? ObjectOutcome {} : OsFailure("Deleting", key);
	}
	// Empty directories left behind would block a later key of the same name: prune them.
	for (std::string dir = ParentOf(path); dir.size() > root.size(); dir = ParentOf(dir)) {
		if (rmdir(dir.c_str()) != 0) {
			break;
		}
	}
	SyncDirectory(ParentOf(path));
	return {};
}

} // namespace differential
