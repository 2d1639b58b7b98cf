// Remote reads over a local object store: an export resolves to the file it was made from, chunks are
// fetched verified and coalesced, damage is refused with its code, and the caches answer warm reads.
#include "remote/export_reader.hpp"
#include "remote/local_object_store.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/remote_cache.hpp"
#include "storage/remote_file.hpp"
#include "test_support.hpp"

#include <atomic>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sys/file.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace differential {
namespace test {

//! Counts the GETs that reach the store beneath.
class CountingStore : public ObjectStore {
public:
	explicit CountingStore(std::shared_ptr<ObjectStore> inner) : inner(std::move(inner)) {
	}
	PutResult Put(const PutRequest &request) override {
		return inner->Put(request);
	}
	GetResult Get(const std::string &key, const std::optional<ByteRange> &range) override {
		gets++;
		auto result = inner->Get(key, range);
		bytes += result.data.size();
		return result;
	}
	HeadResult Head(const std::string &key) override {
		return inner->Head(key);
	}
	ListPage List(const std::string &prefix, const std::string &token, uint32_t max_keys) override {
		return inner->List(prefix, token, max_keys);
	}
	ObjectOutcome Delete(const std::string &key) override {
		return inner->Delete(key);
	}
	std::string Describe() const override {
		return inner->Describe();
	}
	std::shared_ptr<ObjectStore> inner;
	std::atomic<int> gets {0};
	std::atomic<uint64_t> bytes {0};
};

static Hash256 PutObject(ObjectStore &store, const std::string &prefix, const std::string &bytes) {
	auto hash = Sha256(bytes.data(), bytes.size());
	PutRequest request;
	request.key = prefix + HashToHex(hash);
	request.data = bytes.data();
	request.size = bytes.size();
	EXPECT_TRUE(store.Put(request).outcome.Ok());
	return hash;
}

//! Exports `file` the way the writer lays it out: chunks packed 32 at a time, all-zero chunks as holes,
//! one index page per 4096 chunks, a descriptor and a head. Returns the descriptor's hash.
static Hash256 Export(ObjectStore &store, const std::string &file, const std::string &database = "orders",
                      const std::string &branch = "main") {
	std::vector<PackedChunk> slots(ChunkCount(file.size()));
	std::string pack;
	std::vector<uint64_t> in_pack;
	auto flush = [&]() {
		auto hash = PutObject(store, PACKS_PREFIX, pack);
		for (auto index : in_pack) {
			slots[index].pack = hash;
		}
		pack.clear();
		in_pack.clear();
	};
	for (uint64_t i = 0; i < slots.size(); i++) {
		auto bytes = file.substr(ChunkStart(i), ChunkCapacity(i));
		if (bytes.find_first_not_of('\0') == std::string::npos) {
			continue;
		}
		slots[i] = {Sha256(bytes.data(), bytes.size()), {}, pack.size(), static_cast<uint32_t>(bytes.size())};
		pack += bytes;
		in_pack.push_back(i);
		if (in_pack.size() == MAX_CHUNKS_PER_PACK) {
			flush();
		}
	}
	if (!in_pack.empty()) {
		flush();
	}
	ExportDescriptor descriptor;
	descriptor.database = database;
	descriptor.snapshot_id = 1;
	descriptor.length = file.size();
	for (size_t first = 0; first < slots.size(); first += EXPORT_INDEX_SLOTS) {
		std::vector<PackedChunk> page(slots.begin() + first,
		                              slots.begin() + std::min(slots.size(), first + EXPORT_INDEX_SLOTS));
		auto blob = EncodeExportIndexPage(page);
		descriptor.index_pages.push_back(PutObject(store, INDEXES_PREFIX, std::string(blob.begin(), blob.end())));
	}
	auto hash = PutObject(store, DESCRIPTORS_PREFIX, EncodeDescriptor(descriptor));
	BranchHead head;
	head.database = database;
	head.branch = branch;
	head.snapshot_id = 1;
	head.descriptor = hash;
	auto text = EncodeHead(head);
	PutRequest request;
	request.key = HeadKey(database, branch);
	request.data = text.data();
	request.size = text.size();
	EXPECT_TRUE(store.Put(request).outcome.Ok());
	return hash;
}

//! 12 KiB + 40 chunks of random bytes with a hole in the middle and a short last chunk.
static std::string SampleFile() {
	std::mt19937_64 random(7);
	std::string file(FIRST_CHUNK_SIZE + 40 * CHUNK_SIZE + 1000, '\0');
	for (auto &c : file) {
		c = static_cast<char>(random());
	}
	std::fill(file.begin() + ChunkStart(5), file.begin() + ChunkStart(6), '\0');
	return file;
}

static RemoteLocator Locator(const std::string &text) {
	RemoteLocator locator;
	std::string why;
	EXPECT_TRUE(ParseRemoteLocator(text, locator, why)) << why;
	return locator;
}

struct Fixture {
	TempDir dir;
	std::shared_ptr<LocalObjectStore> local = std::make_shared<LocalObjectStore>(dir.Sub("bucket"));
	std::shared_ptr<CountingStore> store = std::make_shared<CountingStore>(local);
	std::string file = SampleFile();
	Hash256 descriptor = Export(*local, file);

	std::shared_ptr<RemoteImageFile> Open(const std::string &locator = "file:///x/heads/orders/main",
	                                      std::shared_ptr<ContentCache> cache = nullptr) {
		if (!cache) {
			cache = std::make_shared<MemoryContentCache>(64ULL << 20);
		}
		auto resolved = ReadExport(*store, Locator(locator), *cache);
		return std::make_shared<RemoteImageFile>(store, PACKS_PREFIX, resolved.image, locator, cache);
	}
	std::string PathOf(const std::string &key) {
		return dir.path + "/bucket/" + key;
	}
};

TEST(RemoteRead, HeadAndDescriptorReadTheExportedBytes) {
	Fixture f;
	for (auto locator :
	     {std::string("file:///x/heads/orders/main"), "file:///x/descriptors/" + HashToHex(f.descriptor)}) {
		auto remote = f.Open(locator);
		ASSERT_EQ(remote->Length(), f.file.size());
		std::mt19937_64 random(11);
		for (int i = 0; i < 50; i++) {
			uint64_t offset = random() % f.file.size();
			uint64_t size = 1 + random() % (3 * CHUNK_SIZE);
			std::string out(size, 'x');
			auto n = remote->Read(&out[0], size, offset);
			ASSERT_EQ(n, std::min<uint64_t>(size, f.file.size() - offset));
			ASSERT_EQ(out.substr(0, n), f.file.substr(offset, n)) << offset << "+" << size;
		}
		std::string all(f.file.size(), 'x');
		ASSERT_EQ(remote->Read(&all[0], all.size(), 0), f.file.size());
		EXPECT_EQ(all, f.file);
	}
}

TEST(RemoteRead, AdjacentChunksOfAPackComeInOneRangedGet) {
	Fixture f;
	auto remote = f.Open();
	auto before = f.store->gets.load();
	// Chunks 1..4 lie back to back in the first pack: one GET for all four.
	std::string out(4 * CHUNK_SIZE, 'x');
	remote->Read(&out[0], out.size(), ChunkStart(1));
	EXPECT_EQ(f.store->gets.load() - before, 1);
	// The whole file: 40 data chunks in two packs (the hole needs nothing); the first GET took 0..16 along (the
	// pack's first 4 MiB), and the hole splits nothing since it is not in any pack.
	before = f.store->gets.load();
	std::string all(f.file.size(), 'x');
	remote->Read(&all[0], all.size(), 0);
	EXPECT_EQ(f.store->gets.load() - before, 2); // chunks 17..32 of pack 1, pack 2
	// Warm: nothing more is fetched.
	before = f.store->gets.load();
	remote->Read(&all[0], all.size(), 0);
	EXPECT_EQ(f.store->gets.load() - before, 0);
}

//! Where the sample file's chunks lie in the first pack: chunk 0 (12 KiB), then 1..4 and 6..32 (5 is a hole).
static uint64_t PackOffset(uint64_t index) {
	return index == 0 ? 0 : FIRST_CHUNK_SIZE + (index - (index > 5 ? 2 : 1)) * CHUNK_SIZE;
}

TEST(RemoteRead, AMissTakesAlongTheChunksAroundItInItsAlignedWindow) {
	static_assert(RemoteImageFile::TAKE_ALONG_BYTES == 16 * CHUNK_SIZE, "the windows below are 16 chunks wide");
	Fixture f;
	auto remote = f.Open();
	std::string out(CHUNK_SIZE, 'x');
	auto gets = [&]() {
		return f.store->gets.load();
	};
	auto bytes = [&]() {
		return f.store->bytes.load();
	};
	// Chunk 10 lies in the first 4 MiB of the pack: the chunks of that window before and after it come along
	// (0..4 and 6..16; 17 starts inside it but ends past it).
	auto before = gets();
	auto fetched = bytes();
	remote->Read(&out[0], out.size(), ChunkStart(10));
	EXPECT_EQ(gets() - before, 1);
	EXPECT_EQ(bytes() - fetched, PackOffset(17));
	for (uint64_t index = 0; index <= 16; index++) {
		remote->Read(&out[0], out.size(), ChunkStart(index));
		EXPECT_EQ(out.substr(0, ChunkCapacity(index)), f.file.substr(ChunkStart(index), ChunkCapacity(index)));
	}
	EXPECT_EQ(gets() - before, 1);
	// Chunk 20 lies in the second window: it takes 18..32 along, backwards as well as forwards (17 is not in it).
	fetched = bytes();
	remote->Read(&out[0], out.size(), ChunkStart(20));
	EXPECT_EQ(gets() - before, 2);
	EXPECT_EQ(bytes() - fetched, 15 * CHUNK_SIZE);
	// Chunk 17, between cached neighbours, comes alone; then the whole pack is read without another request.
	remote->Read(&out[0], out.size(), ChunkStart(17));
	EXPECT_EQ(gets() - before, 3);
	for (uint64_t index = 0; index <= 32; index++) {
		remote->Read(&out[0], out.size(), ChunkStart(index));
		EXPECT_EQ(out.substr(0, ChunkCapacity(index)), f.file.substr(ChunkStart(index), ChunkCapacity(index)));
	}
	EXPECT_EQ(gets() - before, 3);
	EXPECT_EQ(bytes() - fetched, 16 * CHUNK_SIZE);
	// The second pack (33..40 and the 1,000 bytes of 41) fits one window: a read of its middle takes all of it.
	remote->Read(&out[0], out.size(), ChunkStart(36));
	EXPECT_EQ(gets() - before, 4);
	EXPECT_EQ(bytes() - fetched, 16 * CHUNK_SIZE + 8 * CHUNK_SIZE + 1000);
}

TEST(RemoteRead, ThreadsReadingTheSameChunksFetchEachOnce) {
	Fixture f;
	auto remote = f.Open();
	auto before = f.store->bytes.load(); // the descriptor and the index page
	std::vector<std::thread> threads;
	std::atomic<int> wrong {0};
	for (int t = 0; t < 8; t++) {
		threads.emplace_back([&, t]() {
			// Each thread reads every chunk (the short last one too: whether read-ahead brings it along
			// depends on the interleaving), starting at a different one, one block at a time as DuckDB does.
			std::string out(CHUNK_SIZE, 'x');
			const uint64_t count = ChunkCount(f.file.size());
			for (uint64_t i = 0; i < count; i++) {
				auto index = (i + t * 5) % count;
				auto n = remote->Read(&out[0], out.size(), ChunkStart(index));
				wrong += out.substr(0, n) != f.file.substr(ChunkStart(index), n);
			}
		});
	}
	for (auto &thread : threads) {
		thread.join();
	}
	EXPECT_EQ(wrong.load(), 0);
	// Single flight: every stored chunk crossed the wire exactly once, whatever the interleaving.
	uint64_t stored = 0;
	for (uint64_t i = 0; i < ChunkCount(f.file.size()); i++) {
		auto bytes = f.file.substr(ChunkStart(i), ChunkCapacity(i));
		stored += bytes.find_first_not_of('\0') == std::string::npos ? 0 : bytes.size();
	}
	EXPECT_EQ(f.store->bytes.load() - before, stored);
}

static void Corrupt(const std::string &path, uint64_t offset) {
	std::fstream stream(path, std::ios::in | std::ios::out | std::ios::binary);
	stream.seekg(static_cast<std::streamoff>(offset));
	char c;
	stream.get(c);
	stream.seekp(static_cast<std::streamoff>(offset));
	stream.put(static_cast<char>(c ^ 1));
}

static std::string CachedFile(const std::string &cache, const Hash256 &hash) {
	auto hex = HashToHex(hash);
	return cache + "/objects/" + hex.substr(0, 2) + "/" + hex;
}

TEST(RemoteRead, DamagedOrMissingPacksAreRefused) {
	Fixture f;
	auto remote = f.Open();
	ExportDescriptor descriptor;
	auto first_pack =
	    ReadExport(*f.store, Locator("file:///x/heads/orders/main"), *std::make_shared<MemoryContentCache>(0))
	        .image.chunks[2];
	Corrupt(f.PathOf(PackKey(first_pack.pack)), first_pack.offset + 100);
	std::string out(CHUNK_SIZE, 'x');
	EXPECT_EQ(RaisedCode([&] { remote->Read(&out[0], 10, ChunkStart(2)); }), "corrupt_chunk");
	// Never cached: a second read is refused again.
	EXPECT_EQ(RaisedCode([&] { remote->Read(&out[0], 10, ChunkStart(2) + 50); }), "corrupt_chunk");
	ASSERT_EQ(unlink(f.PathOf(PackKey(first_pack.pack)).c_str()), 0);
	// (Chunk 20: the read of chunk 2 took its pack neighbours along, which stay readable from the cache.)
	EXPECT_EQ(RaisedCode([&] { remote->Read(&out[0], 10, ChunkStart(20)); }), "missing_object");
}

TEST(RemoteRead, BadLocatorsAndDamagedMetadataGetTheirOwnCodes) {
	Fixture f;
	EXPECT_EQ(RaisedCode([&] { f.Open("file:///x/heads/orders/dev"); }), "head_not_found");
	EXPECT_EQ(RaisedCode([&] { f.Open("file:///x/heads/nothing/main"); }), "head_not_found");
	EXPECT_EQ(RaisedCode([&] { f.Open("file:///x/descriptors/" + std::string(64, 'a')); }), "descriptor_not_found");
	auto descriptor = f.PathOf(DescriptorKey(f.descriptor));
	Corrupt(descriptor, 3);
	EXPECT_EQ(RaisedCode([&] { f.Open(); }), "corrupt_descriptor");
	Corrupt(descriptor, 3);
	ExportDescriptor decoded;
	auto got = f.local->Get(DescriptorKey(f.descriptor));
	std::string why;
	ASSERT_TRUE(DecodeDescriptor(got.data, decoded, why)) << why;
	Corrupt(f.PathOf(ExportIndexKey(decoded.index_pages[0])), 40);
	EXPECT_EQ(RaisedCode([&] { f.Open(); }), "corrupt_index_page");
	// A head that names another branch is not this branch's head.
	std::string head_text = f.local->Get(HeadKey("orders", "main")).data;
	PutRequest request;
	request.key = HeadKey("orders", "other");
	request.data = head_text.data();
	request.size = head_text.size();
	ASSERT_TRUE(f.local->Put(request).outcome.Ok());
	EXPECT_EQ(RaisedCode([&] { f.Open("file:///x/heads/orders/other"); }), "corrupt_head");
}

static std::string Bytes(int seed, size_t size) {
	std::string bytes(size, '\0');
	std::mt19937 random(seed);
	for (auto &c : bytes) {
		c = static_cast<char>(random());
	}
	return bytes;
}

TEST(RemoteDiskCache, VerifiesWhatItReadsBack) {
	TempDir dir;
	DiskContentCache cache(dir.path + "/cache", 1 << 20);
	auto bytes = Bytes(1, 1000);
	auto hash = Sha256(bytes.data(), bytes.size());
	cache.Insert(hash, bytes);
	std::string out;
	ASSERT_TRUE(cache.Lookup(hash, out));
	EXPECT_EQ(out, bytes);
	Corrupt(CachedFile(dir.path + "/cache", hash), 10);
	EXPECT_FALSE(cache.Lookup(hash, out));
	// The damaged file is gone; the next insertion writes it again.
	EXPECT_EQ(cache.MeasureSize(), 0u);
	cache.Insert(hash, bytes);
	EXPECT_TRUE(cache.Lookup(hash, out));
}

TEST(RemoteDiskCache, ARangeReadCopiesTheRangeAndChecksTheFile) {
	TempDir dir;
	DiskContentCache cache(dir.path + "/cache", 1 << 20);
	auto bytes = Bytes(2, 5000);
	auto hash = Sha256(bytes.data(), bytes.size());
	cache.Insert(hash, bytes);
	std::string out(300, 'x');
	ASSERT_TRUE(cache.ReadRange(hash, 100, 200, reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_EQ(out.substr(0, 200), bytes.substr(100, 200));
	EXPECT_EQ(out.substr(200), std::string(100, 'x'));
	// Past the object's end the range reads as zeros, as a chunk stored shorter than its place does.
	ASSERT_TRUE(cache.ReadRange(hash, 4900, 300, reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_EQ(out.substr(0, 100), bytes.substr(4900));
	EXPECT_EQ(out.substr(100), std::string(200, '\0'));
	// The file is the object, its CRC32C and the format tag: one flipped bit anywhere fails the read.
	EXPECT_EQ(cache.MeasureSize(), bytes.size() + 8);
	Corrupt(CachedFile(dir.path + "/cache", hash), 4999);
	EXPECT_FALSE(cache.ReadRange(hash, 0, 10, reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_EQ(cache.MeasureSize(), 0u);
	// The memory cache answers ranges the same way.
	MemoryContentCache memory(1 << 20);
	memory.Insert(hash, bytes);
	ASSERT_TRUE(memory.ReadRange(hash, 4990, 20, reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_EQ(out.substr(0, 20), bytes.substr(4990) + std::string(10, '\0'));
}

TEST(RemoteDiskCache, AWholeObjectReadGoesStraightToTheCallerAndIsChecked) {
	// DuckDB reads a chunk as one block: the range is the whole object, read into the caller's memory.
	TempDir dir;
	DiskContentCache cache(dir.path + "/cache", 1 << 20);
	auto bytes = Bytes(3, 262144);
	auto hash = Sha256(bytes.data(), bytes.size());
	cache.Insert(hash, bytes);
	std::string out(bytes.size(), 'x');
	ASSERT_TRUE(cache.ReadRange(hash, 0, bytes.size(), reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_EQ(out, bytes);
	// A flipped bit in the object fails the read and deletes the file, as on the copying path.
	Corrupt(CachedFile(dir.path + "/cache", hash), 131072);
	EXPECT_FALSE(cache.ReadRange(hash, 0, bytes.size(), reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_EQ(cache.MeasureSize(), 0u);
	// So does a damaged trailer.
	cache.Insert(hash, bytes);
	Corrupt(CachedFile(dir.path + "/cache", hash), bytes.size() + 5);
	EXPECT_FALSE(cache.ReadRange(hash, 0, bytes.size(), reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_EQ(cache.MeasureSize(), 0u);
	// A file one byte short of the asked length is read through the copying path: zeros where the object ends.
	auto shorter = bytes.substr(0, bytes.size() - 1);
	auto short_hash = Sha256(shorter.data(), shorter.size());
	cache.Insert(short_hash, shorter);
	ASSERT_TRUE(cache.ReadRange(short_hash, 0, bytes.size(), reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_EQ(out, shorter + std::string(1, '\0'));
}

TEST(RemoteDiskCache, AFileOfTheOlderFormatIsFetchedAgain) {
	TempDir dir;
	DiskContentCache cache(dir.path + "/cache", 1 << 20);
	auto bytes = Bytes(3, 1000);
	auto hash = Sha256(bytes.data(), bytes.size());
	// What an older build wrote: the object alone, which still hashes to its name.
	auto path = CachedFile(dir.path + "/cache", hash);
	mkdir(path.substr(0, path.rfind('/')).c_str(), 0755);
	std::ofstream(path, std::ios::binary) << bytes;
	std::string out;
	EXPECT_FALSE(cache.Lookup(hash, out));
	EXPECT_NE(access(path.c_str(), F_OK), 0);
	cache.Insert(hash, bytes);
	ASSERT_TRUE(cache.Lookup(hash, out));
	EXPECT_EQ(out, bytes);
}

static time_t ModifiedAt(const std::string &path) {
	struct stat st;
	EXPECT_EQ(stat(path.c_str(), &st), 0);
	return st.st_mtime;
}

static void SetModifiedAt(const std::string &path, time_t when) {
	struct timespec times[2] = {{when, 0}, {when, 0}};
	ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

// The eviction order is the files' modification times: a hit refreshes a file a minute old or more (so what a
// new process reads again is kept), and leaves a fresher one alone (a scan reads a chunk's file once per block).
TEST(RemoteDiskCache, AHitRefreshesAStaleFileAndLeavesAFreshOne) {
	TempDir dir;
	DiskContentCache cache(dir.path + "/cache", 1 << 20);
	auto stale_bytes = Bytes(4, 1000), fresh_bytes = Bytes(5, 1000);
	auto stale = Sha256(stale_bytes.data(), stale_bytes.size()), fresh = Sha256(fresh_bytes.data(), fresh_bytes.size());
	cache.Insert(stale, stale_bytes);
	cache.Insert(fresh, fresh_bytes);
	auto now = time(nullptr);
	SetModifiedAt(CachedFile(dir.path + "/cache", stale), now - 3600);
	SetModifiedAt(CachedFile(dir.path + "/cache", fresh), now - 30);
	std::string out(10, 'x');
	ASSERT_TRUE(cache.ReadRange(stale, 0, 10, reinterpret_cast<uint8_t *>(&out[0])));
	ASSERT_TRUE(cache.ReadRange(fresh, 0, 10, reinterpret_cast<uint8_t *>(&out[0])));
	EXPECT_GE(ModifiedAt(CachedFile(dir.path + "/cache", stale)), now);
	EXPECT_EQ(ModifiedAt(CachedFile(dir.path + "/cache", fresh)), now - 30);
	// Whole-object lookups refresh the same way.
	SetModifiedAt(CachedFile(dir.path + "/cache", fresh), now - 120);
	ASSERT_TRUE(cache.Lookup(fresh, out));
	EXPECT_GE(ModifiedAt(CachedFile(dir.path + "/cache", fresh)), now);
}

TEST(RemoteDiskCache, TheBoundHoldsAcrossProcesses) {
	TempDir dir;
	const uint64_t bound = 200 * 1000;
	std::vector<pid_t> children;
	for (int child = 0; child < 2; child++) {
		auto pid = fork();
		if (pid == 0) {
			DiskContentCache cache(dir.path + "/cache", bound);
			for (int i = 0; i < 300; i++) {
				auto bytes = Bytes(child * 1000 + i, 1000 + i % 7);
				cache.Insert(Sha256(bytes.data(), bytes.size()), bytes);
				// Counted under the cache's own lock: a listing taken while the other process evicts and
				// inserts could count a file already gone and one just added.
				int fd = open((dir.path + "/cache/cache.lock").c_str(), O_RDWR);
				flock(fd, LOCK_EX);
				bool over = cache.MeasureSize() > bound;
				close(fd);
				if (over) {
					_exit(2);
				}
			}
			_exit(0);
		}
		children.push_back(pid);
	}
	for (auto pid : children) {
		int status = 0;
		waitpid(pid, &status, 0);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
	}
	DiskContentCache cache(dir.path + "/cache", bound);
	auto size = cache.MeasureSize();
	EXPECT_LE(size, bound);
	EXPECT_GT(size, bound / 2);
	// The most recent insertions survived.
	auto last = Bytes(1299, 1000 + 299 % 7);
	std::string out;
	EXPECT_TRUE(cache.Lookup(Sha256(last.data(), last.size()), out));
}

//! Eight threads insert `per_thread` distinct objects each (of about 1 KB) through one cache, as DuckDB's scan
//! threads do; `salt` keeps each call's objects apart from another call's.
static void InsertFromThreads(DiskContentCache &cache, int per_thread, int salt) {
	std::vector<std::thread> threads;
	for (int thread = 0; thread < 8; thread++) {
		threads.emplace_back([&cache, per_thread, salt, thread]() {
			for (int i = 0; i < per_thread; i++) {
				auto bytes = Bytes(salt + thread * 1000 + i, 1000 + i % 7);
				cache.Insert(Sha256(bytes.data(), bytes.size()), bytes);
			}
		});
	}
	for (auto &thread : threads) {
		thread.join();
	}
}

static uint64_t AccountedBytes(const std::string &cache_directory) {
	uint64_t accounted = 0;
	int fd = open((cache_directory + "/cache.lock").c_str(), O_RDONLY);
	EXPECT_EQ(pread(fd, &accounted, sizeof(accounted), 0), static_cast<ssize_t>(sizeof(accounted)));
	close(fd);
	return accounted;
}

TEST(RemoteDiskCache, TheBoundHoldsWithThreadsOfOneProcessInserting) {
	// flock does not exclude threads that share the lock file's descriptor, so the count must be guarded within
	// the process too. Without evictions (which recount the files) every lost update would stay in the count.
	TempDir dir;
	DiskContentCache roomy(dir.path + "/roomy", 64ULL << 20);
	InsertFromThreads(roomy, 300, 0);
	EXPECT_EQ(AccountedBytes(dir.path + "/roomy"), roomy.MeasureSize());
	// With evictions all the way.
	const uint64_t bound = 100 * 1000;
	DiskContentCache tight(dir.path + "/tight", bound);
	InsertFromThreads(tight, 200, 0);
	auto size = tight.MeasureSize();
	EXPECT_LE(size, bound);
	EXPECT_GT(size, bound / 2);
	EXPECT_EQ(AccountedBytes(dir.path + "/tight"), size);
}

TEST(RemoteDiskCache, AWarmDiskCacheAnswersANewProcessWithoutPackRequests) {
	Fixture f;
	auto disk = std::make_shared<DiskContentCache>(f.dir.path + "/cache", 64ULL << 20);
	auto cold = f.Open("file:///x/heads/orders/main",
	                   std::make_shared<RemoteCache>(std::make_shared<MemoryContentCache>(0), disk));
	std::string all(f.file.size(), 'x');
	cold->Read(&all[0], all.size(), 0);
	// A new process: empty memory, the same directory. Only the (mutable) head is fetched.
	auto before = f.store->gets.load();
	auto warm = f.Open("file:///x/heads/orders/main",
	                   std::make_shared<RemoteCache>(std::make_shared<MemoryContentCache>(1 << 20), disk));
	std::string again(f.file.size(), 'y');
	warm->Read(&again[0], again.size(), 0);
	EXPECT_EQ(again, f.file);
	EXPECT_EQ(f.store->gets.load() - before, 1);
}

TEST(RemoteImagePaths, RegistryResolvesWhileTheImageLives) {
	Fixture f;
	auto remote = f.Open();
	auto path = RegisterRemoteImage(remote);
	EXPECT_TRUE(IsRemoteImagePath(path));
	bool is_database_file = false;
	EXPECT_EQ(FindRemoteImage(path, is_database_file), remote);
	EXPECT_TRUE(is_database_file);
	EXPECT_EQ(FindRemoteImage(path + ".wal", is_database_file), remote);
	EXPECT_FALSE(is_database_file);
	EXPECT_EQ(RaisedCode([&] { FindRemoteImage("diff://remote/01/database.duckdb", is_database_file); }),
	          "invalid_path");
	EXPECT_EQ(RaisedCode([&] { FindRemoteImage("diff://remote/1/other", is_database_file); }), "invalid_path");
	remote.reset();
	EXPECT_EQ(FindRemoteImage(path, is_database_file), nullptr);
}

} // namespace test
} // namespace differential
