// One snapshot's export: its chunks the store has not seen go up in packs, several at once (each recorded
// as soon as it is in the store, so a failed export resumes where it stopped), then, once every pack is
// in, the export index pages, the descriptor and the commit record, in that order: nothing written later
// can point at a missing object.
#include "export/snapshot_export.hpp"

#include "common/errors.hpp"
#include "common/log_handoff.hpp"
#include "remote/export_format.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/diff_path.hpp"
#include "storage/index_page.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <exception>
#include <future>
#include <unordered_map>
#include <unordered_set>

namespace differential {

using KnownChunks = std::unordered_map<Hash256, PackedChunk, Hash256Hasher>;

//! Keeps the snapshot's root pinned while its chunks are read, so cleanup leaves them alone.
class RootPin {
public:
	RootPin(FileCatalog &catalog, const FileAddress &address) : catalog(catalog) {
		if (!catalog.LoadFile(address, file, PinKind::READER)) {
			Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
			     "Snapshot " + std::to_string(address.snapshot_id) + " of database " + address.database +
			         " has no stored file (it was expired meanwhile). Nothing to export.");
		}
	}
	~RootPin() {
		if (file.pin.Held()) {
			try {
				catalog.Unpin(file.pin);
			} catch (...) {
				// A pin left behind is released with this process (pins of dead processes are swept).
			}
		}
	}
	FileCatalog &catalog;
	StoredFile file;
};

//! The chunk hash of every chunk of the file, in chunk order (zero for holes).
static std::vector<Hash256> ChunkHashes(FileCatalog &catalog, const StoredFile &file) {
	std::vector<Hash256> out(ChunkCount(file.length));
	for (size_t page = 0; page < file.pages.size(); page++) {
		auto slots = DecodeIndexPage(catalog.LoadIndexPage(file.pages[page]));
		for (size_t slot = 0; slot < slots.size() && page * SLOTS_PER_INDEX_PAGE + slot < out.size(); slot++) {
			out[page * SLOTS_PER_INDEX_PAGE + slot] = slots[slot];
		}
	}
	return out;
}

//! Reads the next chunks into one pack (at most 32 chunks and 8 MiB), verifying each against its hash.
static std::vector<uint8_t> FillPack(RepositoryStorage &storage, const std::vector<Hash256> &missing, size_t &next,
                                     std::vector<PackedChunk> &entries) {
	std::vector<Hash256> batch(missing.begin() + next,
	                           missing.begin() + std::min(missing.size(), next + MAX_CHUNKS_PER_PACK));
	std::vector<ChunkLocation> locations;
	storage.catalog->LookupChunks(batch, locations);
	std::vector<uint8_t> pack;
	for (size_t i = 0; i < batch.size(); i++) {
		if (!entries.empty() && pack.size() + locations[i].length > MAX_PACK_BYTES) {
			break;
		}
		PackedChunk entry;
		entry.chunk = batch[i];
		entry.offset = pack.size();
		entry.length = locations[i].length;
		pack.resize(pack.size() + entry.length);
		storage.segments.Read(locations[i], pack.data() + entry.offset);
		if (Sha256(pack.data() + entry.offset, entry.length) != entry.chunk) {
			Fail(ErrorCode::CORRUPT_CHUNK, "Chunk " + HashToHex(entry.chunk) +
			                                   " does not match its SHA-256 in the local segments, so it was "
			                                   "not exported. Run differential_verify() to find what else is damaged.");
		}
		entries.push_back(entry);
		next++;
	}
	return pack;
}

//! One pack on its way up: its bytes and chunks, and the PUT running on a thread of its own.
struct PackUpload {
	std::vector<uint8_t> bytes;
	std::vector<PackedChunk> entries;
	ExportStats stats;
	std::future<void> done; //! declared last: destroyed (waited for) before the bytes it sends
};

static void StartUpload(ExportContext &context, PackUpload &upload) {
	auto sink = CurrentLogSink(); // its request is logged like the others
	upload.done = std::async(std::launch::async, [&context, &upload, sink] {
		LogScope scope(sink);
		ExportUploader uploader(context.store, upload.stats);
		uploader.PutContent(PackKey(upload.entries.front().pack), upload.bytes.data(), upload.bytes.size());
	});
}

//! Waits for the oldest upload and records its pack, so an export that fails later resumes after it.
static void FinishUpload(ExportContext &context, PackUpload &upload, KnownChunks &known, ExportStats &stats) {
	upload.done.get(); // rethrows the upload's ExportFailure
	stats.Add(upload.stats);
	stats.packs++;
	stats.chunks += upload.entries.size();
	context.repository.metadata->remote.RecordPack(context.store_url, upload.entries);
	for (auto &entry : upload.entries) {
		known[entry.chunk] = entry;
	}
}

//! After a failure: lets the uploads still running end, records those that succeeded, rethrows the first.
[[noreturn]] static void Drain(ExportContext &context, std::deque<PackUpload> &uploads, KnownChunks &known,
                               ExportStats &stats, std::exception_ptr failure) {
	for (auto &upload : uploads) {
		try {
			FinishUpload(context, upload, known, stats);
		} catch (...) {
			// The first failure is the one reported; this one has the same retry.
		}
	}
	uploads.clear();
	std::rethrow_exception(failure);
}

static void UploadMissingChunks(ExportContext &context, const std::vector<Hash256> &chunks, KnownChunks &known,
                                ExportStats &stats) {
	std::vector<Hash256> missing;
	std::unordered_set<Hash256, Hash256Hasher> seen;
	for (auto &chunk : chunks) {
		if (!IsZeroHash(chunk) && !known.count(chunk) && seen.insert(chunk).second) {
			missing.push_back(chunk);
		}
	}
	auto report = [&](size_t done) {
		if (context.pack_progress) {
			context.pack_progress(done, missing.size());
		}
	};
	report(0);
	// Up to `upload_concurrency` PUTs in flight (each pack at most 8 MiB in memory): with a first-byte
	// latency per request, one at a time leaves the link idle most of the time.
	std::deque<PackUpload> uploads;
	size_t chunks_done = 0;
	for (size_t next = 0; next < missing.size() || !uploads.empty();) {
		try {
			if (next < missing.size() && uploads.size() < std::max<size_t>(1, context.upload_concurrency)) {
				uploads.emplace_back();
				auto &upload = uploads.back();
				upload.bytes = FillPack(*context.repository.storage, missing, next, upload.entries);
				auto pack_hash = Sha256(upload.bytes.data(), upload.bytes.size());
				for (auto &entry : upload.entries) {
					entry.pack = pack_hash;
				}
				StartUpload(context, upload);
				continue;
			}
			FinishUpload(context, uploads.front(), known, stats);
		} catch (...) {
			if (!uploads.empty() && !uploads.back().done.valid()) {
				uploads.pop_back(); // FillPack failed: that pack never started
			}
			Drain(context, uploads, known, stats, std::current_exception());
		}
		chunks_done += uploads.front().entries.size();
		uploads.pop_front();
		report(chunks_done);
	}
}

//! Uploads the export index pages the store does not hold; returns their hashes in chunk order.
static std::vector<Hash256> UploadIndexPages(ExportContext &context, ExportUploader &uploader,
                                             const std::vector<Hash256> &chunks, const KnownChunks &known,
                                             ExportStats &stats) {
	std::vector<Hash256> pages;
	auto &remote = context.repository.metadata->remote;
	for (size_t first = 0; first < chunks.size(); first += EXPORT_INDEX_SLOTS) {
		std::vector<PackedChunk> slots(std::min<size_t>(EXPORT_INDEX_SLOTS, chunks.size() - first));
		for (size_t i = 0; i < slots.size(); i++) {
			auto &chunk = chunks[first + i];
			if (!IsZeroHash(chunk)) {
				slots[i] = known.at(chunk);
			}
		}
		auto page = EncodeExportIndexPage(slots);
		auto hash = Sha256(page.data(), page.size());
		auto key = ExportIndexKey(hash);
		if (!remote.HasObject(context.store_url, key)) {
			uploader.PutContent(key, page.data(), page.size());
			stats.index_pages++;
			remote.RecordObject(context.store_url, key);
		}
		pages.push_back(hash);
	}
	return pages;
}

Hash256 ExportImage(ExportContext &context, const std::vector<Hash256> &chunks, ExportDescriptor &descriptor,
                    ExportStats &stats) {
	ExportUploader uploader(context.store, stats);
	auto known = context.repository.metadata->remote.KnownChunks(context.store_url, chunks);
	UploadMissingChunks(context, chunks, known, stats);
	descriptor.index_pages = UploadIndexPages(context, uploader, chunks, known, stats);
	auto text = EncodeDescriptor(descriptor);
	auto descriptor_hash = Sha256(text.data(), text.size());
	uploader.PutContent(DescriptorKey(descriptor_hash), text.data(), text.size());
	return descriptor_hash;
}

std::vector<Hash256> PublishedChunkHashes(FileCatalog &catalog, const StoredFile &file) {
	return ChunkHashes(catalog, file);
}

Hash256 ExportSnapshotObjects(ExportContext &context, int64_t snapshot_id, ExportStats &stats) {
	auto &metadata = *context.repository.metadata;
	auto snapshot = metadata.history.FindSnapshot(context.database, snapshot_id);
	if (!snapshot) {
		Fail(ErrorCode::SNAPSHOT_NOT_FOUND, "Database " + context.database + " has no snapshot " +
		                                        std::to_string(snapshot_id) +
		                                        " (expired meanwhile?). Nothing was exported for it.");
	}
	FileAddress address;
	address.repository = context.repository.root;
	address.database = context.database;
	address.snapshot_id = snapshot_id;
	address.file_name = MAIN_FILE_NAME;
	RootPin root(*context.repository.storage->catalog, address);
	auto chunks = ChunkHashes(root.catalog, root.file);
	ExportDescriptor descriptor;
	descriptor.database = context.database;
	descriptor.snapshot_id = snapshot_id;
	descriptor.snapshot_name = snapshot->name;
	descriptor.created_unix_ms = snapshot->created_at_us / 1000;
	descriptor.length = root.file.length;
	std::optional<int64_t> parent;
	if (metadata.shared.Settings(context.database).shared && !snapshot->parents.empty()) {
		parent = metadata.shared.StoreSnapshotId(context.database, snapshot->parents.front());
	}
	auto descriptor_hash = ExportAsSnapshot(context, chunks, descriptor, parent, stats);
	metadata.remote.RecordExport(context.database, snapshot_id, context.store_url, descriptor_hash);
	return descriptor_hash;
}

Hash256 ExportAsSnapshot(ExportContext &context, const std::vector<Hash256> &chunks, ExportDescriptor &descriptor,
                         const std::optional<int64_t> &parent, ExportStats &stats) {
	auto descriptor_hash = ExportImage(context, chunks, descriptor, stats);
	ExportUploader uploader(context.store, stats);
	RemoteSnapshotRecord record;
	record.database = context.database;
	record.snapshot_id = descriptor.snapshot_id;
	record.descriptor = descriptor_hash;
	if (parent) {
		record.parent = *parent;
	}
	auto key = CommitRecordKey(context.database, descriptor.snapshot_id);
	if (!uploader.PutRecord(key, EncodeSnapshotRecord(record, false))) {
		throw RemoteConflict("the commit record " + key + " of another writer holds snapshot " +
		                     std::to_string(descriptor.snapshot_id));
	}
	return descriptor_hash;
}

} // namespace differential
