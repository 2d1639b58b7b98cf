// The caches of remote reads (see remote_cache.hpp). The disk cache is a cache, not a store: nothing is
// fsynced, and a file torn by a crash fails its checksum on the next read and is deleted.
#include "storage/remote_cache.hpp"

#include "common/errors.hpp"
#include "common/logging.hpp"
#include "storage/system_calls.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <sys/file.h>
#include <unistd.h>
#include <vector>

namespace differential {

MemoryContentCache::MemoryContentCache(uint64_t bound_bytes) : bound(bound_bytes) {
}

std::shared_ptr<MemoryContentCache> MemoryContentCache::Process() {
	static auto *cache =
	    new std::shared_ptr<MemoryContentCache>(std::make_shared<MemoryContentCache>(PROCESS_MEMORY_CACHE_BYTES));
	return *cache;
}

bool MemoryContentCache::Lookup(const Hash256 &hash, std::string &out) {
	std::lock_guard<std::mutex> guard(lock);
	auto it = entries.find(hash);
	if (it == entries.end()) {
		return false;
	}
	order.splice(order.begin(), order, it->second);
	out = it->second->second;
	return true;
}

bool MemoryContentCache::ReadRange(const Hash256 &hash, uint64_t skip, uint64_t take, uint8_t *out) {
	std::lock_guard<std::mutex> guard(lock);
	auto it = entries.find(hash);
	if (it == entries.end()) {
		return false;
	}
	order.splice(order.begin(), order, it->second);
	auto &bytes = it->second->second;
	CopyRange(bytes.data(), bytes.size(), skip, take, out);
	return true;
}

bool MemoryContentCache::Contains(const Hash256 &hash) {
	std::lock_guard<std::mutex> guard(lock);
	return entries.count(hash) > 0;
}

void MemoryContentCache::Insert(const Hash256 &hash, const std::string &bytes) {
	if (bytes.size() > bound) {
		return;
	}
	std::lock_guard<std::mutex> guard(lock);
	if (entries.count(hash)) {
		return;
	}
	while (size + bytes.size() > bound && !order.empty()) {
		size -= order.back().second.size();
		entries.erase(order.back().first);
		order.pop_back();
	}
	order.emplace_front(hash, bytes);
	entries[hash] = order.begin();
	size += bytes.size();
}

uint64_t MemoryContentCache::Size() {
	std::lock_guard<std::mutex> guard(lock);
	return size;
}

static void MakeDirectory(const std::string &path) {
	for (size_t at = 1; at <= path.size(); at++) {
		if (at == path.size() || path[at] == '/') {
			auto prefix = path.substr(0, at);
			if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
				Fail(ErrorKind::IO, ErrorCode::REMOTE_CACHE_UNAVAILABLE,
				     "Cannot create the remote read cache directory " + prefix + ": " + std::strerror(errno) +
				         ". Set differential_remote_cache_size = 0, or make the directory writable.");
			}
		}
	}
}

DiskContentCache::DiskContentCache(std::string directory_p, uint64_t bound_bytes)
    : directory(std::move(directory_p)), bound(bound_bytes) {
	MakeDirectory(directory + "/objects");
	MakeDirectory(directory + "/tmp");
	auto lock_path = directory + "/cache.lock";
	lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock_fd < 0) {
		Fail(ErrorKind::IO, ErrorCode::REMOTE_CACHE_UNAVAILABLE,
		     "Cannot open " + lock_path + ": " + std::strerror(errno) +
		         ". Set differential_remote_cache_size = 0, or make the directory writable.");
	}
}

DiskContentCache::~DiskContentCache() {
	if (lock_fd >= 0) {
		close(lock_fd);
	}
}

std::shared_ptr<DiskContentCache> DiskContentCache::Open(const std::string &directory, uint64_t bound_bytes) {
	static std::mutex registry_lock;
	static auto *registry = new std::map<std::string, std::shared_ptr<DiskContentCache>>();
	std::lock_guard<std::mutex> guard(registry_lock);
	auto &cache = (*registry)[directory];
	if (!cache) {
		cache = std::make_shared<DiskContentCache>(directory, bound_bytes);
	}
	cache->SetBound(bound_bytes);
	return cache;
}

void DiskContentCache::SetBound(uint64_t bound_bytes) {
	std::lock_guard<std::mutex> guard(bound_lock);
	bound = bound_bytes;
}

std::string DiskContentCache::ObjectPath(const Hash256 &hash) const {
	auto hex = HashToHex(hash);
	return directory + "/objects/" + hex.substr(0, 2) + "/" + hex;
}

//! Every file ends with this trailer: the payload's CRC32C (little-endian), then a tag naming the format. A
//! read checks the CRC, which runs at memory speed, where hashing the SHA-256 again cost a warm scan more than
//! the read; files without the tag (an older format) fail the check and are fetched again.
static constexpr char TRAILER_TAG[4] = {'d', 'f', 'c', '1'};
static constexpr size_t TRAILER_SIZE = 8;
//! How stale a hit file's modification time may be before a read refreshes it (the eviction order's resolution).
static constexpr time_t MTIME_REFRESH_SECONDS = 60;

// Stored as the segment files store their CRCs: copied in host order, little-endian on every platform we build for.
static void EncodeTrailer(const std::string &bytes, char *trailer) {
	auto crc = Crc32c(bytes.data(), bytes.size());
	std::memcpy(trailer, &crc, 4);
	std::memcpy(trailer + 4, TRAILER_TAG, 4);
}

static bool TrailerMatches(const void *payload, size_t size, const char *trailer) {
	if (std::memcmp(trailer + 4, TRAILER_TAG, 4) != 0) {
		return false;
	}
	uint32_t stored;
	std::memcpy(&stored, trailer, 4);
	return Crc32c(payload, size) == stored;
}

static bool ReadExactly(int fd, void *out, size_t size, off_t offset) {
	return sys::PReadAll("remote_cache.read", fd, out, size, offset) == static_cast<ssize_t>(size);
}

bool DiskContentCache::ReadFile(const Hash256 &hash, std::vector<char> &buffer, size_t &payload, DirectRead *direct) {
	auto path = ObjectPath(hash);
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return false;
	}
	struct stat st;
	bool read = fstat(fd, &st) == 0;
	auto size = read ? static_cast<size_t>(st.st_size) : 0;
	bool valid;
	if (read && direct && size == direct->size + TRAILER_SIZE) {
		// DuckDB reads a chunk as one block: the object goes straight into its buffer, with no copy of ours.
		char trailer[TRAILER_SIZE];
		valid = ReadExactly(fd, direct->out, direct->size, 0) && ReadExactly(fd, trailer, TRAILER_SIZE, direct->size) &&
		        TrailerMatches(direct->out, direct->size, trailer);
		direct->used = true;
	} else {
		if (read && buffer.size() < size) {
			buffer.resize(size);
		}
		valid = read && size >= TRAILER_SIZE && ReadExactly(fd, buffer.data(), size, 0) &&
		        TrailerMatches(buffer.data(), size - TRAILER_SIZE, buffer.data() + size - TRAILER_SIZE);
	}
	if (valid) {
		// The modification time is the eviction order: a hit makes the file the most recently used. At most once a
		// minute per file: a scan reads a chunk's file once per block it holds, and each refresh is an inode write.
		if (time(nullptr) - st.st_mtime >= MTIME_REFRESH_SECONDS) {
			futimens(fd, nullptr);
		}
		payload = size - TRAILER_SIZE;
	}
	close(fd);
	if (!valid) {
		Discard(path);
	}
	return valid;
}

void DiskContentCache::Discard(const std::string &path) {
	// Torn by a crash, damaged, or of an older format: never handed out. Its bytes stay accounted until the
	// next eviction recounts, which only makes the cache evict early.
	LogWarning("remote_cache_bad_file", path + " does not match its checksum; deleted, fetching again");
	unlink(path.c_str());
}

bool DiskContentCache::Lookup(const Hash256 &hash, std::string &out) {
	std::vector<char> buffer;
	size_t payload = 0;
	if (!ReadFile(hash, buffer, payload)) {
		return false;
	}
	// Whole objects are what export metadata is parsed from: they get the SHA-256 check as well.
	if (Sha256(buffer.data(), payload) != hash) {
		Discard(ObjectPath(hash));
		return false;
	}
	out.assign(buffer.data(), payload);
	return true;
}

bool DiskContentCache::ReadRange(const Hash256 &hash, uint64_t skip, uint64_t take, uint8_t *out) {
	// One buffer per thread, kept: a scan reads thousands of chunks, and a fresh 256 KiB allocation each
	// time is an mmap, its page faults and an munmap.
	thread_local std::vector<char> buffer;
	size_t payload = 0;
	DirectRead direct {out, take};
	if (!ReadFile(hash, buffer, payload, skip == 0 ? &direct : nullptr)) {
		return false;
	}
	if (!direct.used) {
		CopyRange(buffer.data(), payload, skip, take, out);
	}
	return true;
}

bool DiskContentCache::Contains(const Hash256 &hash) {
	return access(ObjectPath(hash).c_str(), F_OK) == 0;
}

bool DiskContentCache::WriteTemp(const std::string &bytes, std::string &temp_path) {
	static std::atomic<uint64_t> counter {0};
	temp_path = directory + "/tmp/" + std::to_string(getpid()) + "-" + std::to_string(counter++);
	int fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		return false;
	}
	char trailer[TRAILER_SIZE];
	EncodeTrailer(bytes, trailer);
	std::vector<iovec> parts {{const_cast<char *>(bytes.data()), bytes.size()}, {trailer, TRAILER_SIZE}};
	bool ok = sys::PWriteAll("remote_cache.write", fd, std::move(parts), 0) ==
	          static_cast<ssize_t>(bytes.size() + TRAILER_SIZE);
	close(fd);
	if (!ok) {
		unlink(temp_path.c_str());
	}
	return ok;
}

uint64_t DiskContentCache::ReadAccountedLocked() {
	uint64_t bytes = 0;
	if (pread(lock_fd, &bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes))) {
		// A new cache (or one whose count was lost): count the files.
		return MeasureSize();
	}
	return bytes;
}

void DiskContentCache::WriteAccountedLocked(uint64_t bytes) {
	if (pwrite(lock_fd, &bytes, sizeof(bytes), 0) != static_cast<ssize_t>(sizeof(bytes))) {
		LogWarning("remote_cache_count_failed", directory + "/cache.lock: " + std::strerror(errno));
	}
}

//! Holds the cache's lock for a scope: insertions and evictions of all processes and threads take turns. flock
//! excludes other open descriptions of the lock file only, not threads sharing this process's one, so the
//! process's mutex comes first.
class FileLockGuard {
public:
	FileLockGuard(std::mutex &threads, int fd) : thread_guard(threads), fd(fd) {
		while (flock(fd, LOCK_EX) != 0 && errno == EINTR) {
		}
	}
	~FileLockGuard() {
		flock(fd, LOCK_UN);
	}

private:
	std::lock_guard<std::mutex> thread_guard;
	int fd;
};

void DiskContentCache::Insert(const Hash256 &hash, const std::string &bytes) {
	uint64_t limit;
	{
		std::lock_guard<std::mutex> guard(bound_lock);
		limit = bound;
	}
	auto path = ObjectPath(hash);
	auto file_size = bytes.size() + TRAILER_SIZE;
	std::string temp;
	if (file_size > limit || access(path.c_str(), F_OK) == 0 || !WriteTemp(bytes, temp)) {
		return;
	}
	FileLockGuard locked(insert_lock, lock_fd);
	if (access(path.c_str(), F_OK) == 0) {
		// Another process cached the same object meanwhile.
		unlink(temp.c_str());
		return;
	}
	auto accounted = ReadAccountedLocked();
	if (accounted + file_size > limit) {
		accounted = EvictLocked(file_size, limit);
	}
	// Counted before the file appears, so the count never falls below what is on disk.
	WriteAccountedLocked(accounted + file_size);
	auto hex = HashToHex(hash);
	mkdir((directory + "/objects/" + hex.substr(0, 2)).c_str(), 0755);
	if (rename(temp.c_str(), path.c_str()) != 0) {
		LogWarning("remote_cache_insert_failed", path + ": " + std::strerror(errno));
		unlink(temp.c_str());
	}
}

struct CachedFile {
	int64_t mtime_ns;
	uint64_t size;
	std::string path;
};

//! Every file under `objects/` (and, while at it, deletes temp files that writers left over an hour ago).
static std::vector<CachedFile> ListCachedFiles(const std::string &directory) {
	std::vector<CachedFile> files;
	auto objects = directory + "/objects";
	if (auto top = opendir(objects.c_str())) {
		while (auto shard = readdir(top)) {
			if (shard->d_name[0] == '.') {
				continue;
			}
			auto shard_path = objects + "/" + shard->d_name;
			if (auto dir = opendir(shard_path.c_str())) {
				while (auto entry = readdir(dir)) {
					struct stat st;
					auto path = shard_path + "/" + entry->d_name;
					if (entry->d_name[0] != '.' && stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
						files.push_back({static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
						                 static_cast<uint64_t>(st.st_size), path});
					}
				}
				closedir(dir);
			}
		}
		closedir(top);
	}
	return files;
}

static void SweepTempFiles(const std::string &directory) {
	auto tmp = directory + "/tmp";
	auto dir = opendir(tmp.c_str());
	if (!dir) {
		return;
	}
	auto now = time(nullptr);
	while (auto entry = readdir(dir)) {
		struct stat st;
		auto path = tmp + "/" + entry->d_name;
		if (entry->d_name[0] != '.' && stat(path.c_str(), &st) == 0 && now - st.st_mtime > 3600) {
			unlink(path.c_str());
		}
	}
	closedir(dir);
}

uint64_t DiskContentCache::MeasureSize() {
	uint64_t total = 0;
	for (auto &file : ListCachedFiles(directory)) {
		total += file.size;
	}
	return total;
}

uint64_t DiskContentCache::EvictLocked(uint64_t needed, uint64_t limit) {
	SweepTempFiles(directory);
	auto files = ListCachedFiles(directory);
	uint64_t total = 0;
	for (auto &file : files) {
		total += file.size;
	}
	std::sort(files.begin(), files.end(),
	          [](const CachedFile &a, const CachedFile &b) { return a.mtime_ns < b.mtime_ns; });
	uint64_t evicted = 0;
	for (auto &file : files) {
		if (total + needed <= limit) {
			break;
		}
		if (unlink(file.path.c_str()) == 0 || errno == ENOENT) {
			total -= file.size;
			evicted++;
		}
	}
	LogEvent("remote_cache_evict", -1,
	         directory + ": " + std::to_string(evicted) + " file(s) evicted, " + std::to_string(total) + " bytes kept");
	return total;
}

RemoteCache::RemoteCache(std::shared_ptr<MemoryContentCache> memory_p, std::shared_ptr<DiskContentCache> disk_p)
    : memory(std::move(memory_p)), disk(std::move(disk_p)) {
}

bool RemoteCache::Lookup(const Hash256 &hash, std::string &out) {
	if (memory->Lookup(hash, out)) {
		// The memory cache is the process's, filled also by attachments without a disk cache: make sure the
		// disk cache (shared with other processes) gets what this attachment reads.
		if (disk) {
			disk->Insert(hash, out);
		}
		return true;
	}
	if (disk && disk->Lookup(hash, out)) {
		memory->Insert(hash, out);
		return true;
	}
	return false;
}

bool RemoteCache::ReadRange(const Hash256 &hash, uint64_t skip, uint64_t take, uint8_t *out) {
	if (memory->ReadRange(hash, skip, take, out)) {
		if (disk && !disk->Contains(hash)) {
			std::string bytes;
			if (memory->Lookup(hash, bytes)) {
				disk->Insert(hash, bytes);
			}
		}
		return true;
	}
	// A disk hit stays out of memory: the OS page cache keeps the file's pages already, and a 64 MiB LRU that
	// every chunk of a scan passes through would cost an allocation and two copies per chunk.
	return disk && disk->ReadRange(hash, skip, take, out);
}

bool RemoteCache::Contains(const Hash256 &hash) {
	return memory->Contains(hash) || (disk && disk->Contains(hash));
}

void RemoteCache::Insert(const Hash256 &hash, const std::string &bytes) {
	memory->Insert(hash, bytes);
	if (disk) {
		disk->Insert(hash, bytes);
	}
}

} // namespace differential
