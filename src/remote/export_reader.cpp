// Head → descriptor → index pages → RemoteImage, each object verified (see export_reader.hpp).
#include "remote/export_reader.hpp"

#include "common/errors.hpp"
#include "common/logging.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/remote_fetch.hpp"

namespace differential {

//! The branches that do have heads, for the message of a missing one; fails bucket_not_found when the
//! listing shows the bucket itself is missing.
static std::string ExistingHeads(ObjectStore &store, const std::string &database) {
	auto prefix = std::string(HEADS_PREFIX) + database + "/";
	LogTimer timer;
	auto page = store.List(prefix, "", 20);
	LogEvent("remote_list", timer.ElapsedMs(),
	         store.Describe() + prefix + ": " + ObjectStatusName(page.outcome.status) + ", " +
	             std::to_string(page.objects.size()) + " key(s), " + std::to_string(page.outcome.attempts) +
	             " attempt(s)");
	if (page.outcome.status == ObjectStatus::NOT_FOUND) {
		Fail(ErrorCode::BUCKET_NOT_FOUND,
		     "There is no bucket at " + store.Describe() + " (" + page.outcome.detail +
		         "). Check the bucket name in the locator and the ENDPOINT of the secret.");
	}
	if (!page.outcome.Ok() || page.objects.empty()) {
		return "no branch of database '" + database + "' has a head there";
	}
	std::string names;
	for (auto &object : page.objects) {
		names += (names.empty() ? "" : ", ") + object.key.substr(prefix.size());
	}
	return "branches with heads: " + names;
}

static BranchHead ReadHead(ObjectStore &store, const RemoteLocator &locator, std::string &etag) {
	auto key = locator.Key();
	auto result = LoggedGet(store, key);
	if (result.outcome.status == ObjectStatus::NOT_FOUND) {
		auto existing = ExistingHeads(store, locator.database);
		Fail(ErrorCode::HEAD_NOT_FOUND, "There is no branch head " + key + " at " + store.Describe() + " (" + existing +
		                                    "). Check the database and branch names, or export the branch first.");
	}
	if (!result.outcome.Ok()) {
		FailRemote(result.outcome, store, "reading the branch head " + key);
	}
	etag = result.etag;
	BranchHead head;
	std::string why;
	if (!DecodeHead(result.data, head, why) || head.database != locator.database || head.branch != locator.branch) {
		Fail(ErrorCode::CORRUPT_HEAD,
		     "The branch head " + key + " at " + store.Describe() +
		         " is not a head of that branch: " + (why.empty() ? "it names another database or branch" : why) +
		         ". Re-export the branch, or attach a descriptor instead.");
	}
	return head;
}

//! What a missing object is called: the descriptor a locator names is "not found", a missing part of an
//! export is as damaged as a missing pack.
//! A content-addressed object, from the cache or the store, checked against its hash. `kind` names it
//! ("descriptor", "index page") and `corrupt_code` is the refusal for bytes that do not match.
static std::string ReadVerified(ObjectStore &store, ContentCache &cache, const std::string &key, const Hash256 &hash,
                                const std::string &kind, ErrorCode missing, ErrorCode corrupt_code) {
	std::string bytes;
	if (cache.Lookup(hash, bytes)) {
		return bytes;
	}
	auto result = LoggedGet(store, key);
	if (result.outcome.status == ObjectStatus::NOT_FOUND) {
		Fail(missing,
		     "The " + kind + " " + key + " is missing at " + store.Describe() +
		         ": the export is incomplete or its objects were deleted. Attach a newer branch head or descriptor.");
	}
	if (!result.outcome.Ok()) {
		FailRemote(result.outcome, store, "reading the " + kind + " " + key);
	}
	if (Sha256(result.data.data(), result.data.size()) != hash) {
		Fail(corrupt_code,
		     "The " + kind + " " + key + " at " + store.Describe() +
		         " does not match the SHA-256 its key names: it was damaged in the store. Re-export the snapshot.");
	}
	cache.Insert(hash, result.data);
	return std::move(result.data);
}

[[noreturn]] static void FailIndex(const std::string &key, const std::string &why) {
	Fail(ErrorCode::CORRUPT_INDEX_PAGE,
	     "The export index page " + key + " cannot be used: " + why + ". Re-export the snapshot.");
}

//! Checks one page's slots against the file's geometry and appends them (holes where the page stops).
static void AppendPage(const std::string &key, uint64_t first, const std::vector<PackedChunk> &slots, uint64_t length,
                       RemoteImage &image) {
	auto count = ChunkCount(length);
	for (uint64_t i = 0; i < slots.size(); i++) {
		auto index = first + i;
		auto &slot = slots[i];
		if (slot.IsHole()) {
			continue;
		}
		if (index >= count) {
			FailIndex(key, "slot " + std::to_string(i) + " maps a chunk past the end of the file");
		}
		// Reads stop at the file's length; a chunk may still be stored longer than what is left of the file
		// (a truncate inside it), never longer than its place in the geometry.
		if (slot.length > ChunkCapacity(index)) {
			FailIndex(key, "chunk " + std::to_string(index) + " is longer than a chunk at its place can be");
		}
		image.chunks[index] = slot;
	}
}

static RemoteImage ReadImage(ObjectStore &store, ContentCache &cache, const ExportDescriptor &descriptor) {
	RemoteImage image;
	image.length = descriptor.length;
	auto count = ChunkCount(descriptor.length);
	auto pages = (count + EXPORT_INDEX_SLOTS - 1) / EXPORT_INDEX_SLOTS;
	// Checked before anything is allocated for the chunks: a length is only as large as the page list.
	if (descriptor.index_pages.size() != pages) {
		Fail(ErrorCode::CORRUPT_DESCRIPTOR,
		     "The descriptor of database '" + descriptor.database + "' snapshot " +
		         std::to_string(descriptor.snapshot_id) + " lists " + std::to_string(descriptor.index_pages.size()) +
		         " index pages for a file of " + std::to_string(descriptor.length) + " bytes, which needs " +
		         std::to_string(pages) + ". Re-export the snapshot.");
	}
	image.chunks.assign(count, PackedChunk());
	for (uint64_t p = 0; p < pages; p++) {
		auto &hash = descriptor.index_pages[p];
		auto key = ExportIndexKey(hash);
		auto blob = ReadVerified(store, cache, key, hash, "export index page", ErrorCode::MISSING_OBJECT,
		                         ErrorCode::CORRUPT_INDEX_PAGE);
		std::vector<PackedChunk> slots;
		std::string why;
		if (!DecodeExportIndexPage(blob, slots, why)) {
			FailIndex(key, why);
		}
		AppendPage(key, p * EXPORT_INDEX_SLOTS, slots, descriptor.length, image);
	}
	return image;
}

ResolvedExport ReadExport(ObjectStore &store, const RemoteLocator &locator, ContentCache &cache) {
	ResolvedExport resolved;
	if (locator.kind == RemoteLocator::Kind::HEAD) {
		resolved.head = ReadHead(store, locator, resolved.head_etag);
		resolved.descriptor_hash = resolved.head->descriptor;
	} else {
		resolved.descriptor_hash = locator.descriptor;
	}
	auto key = DescriptorKey(resolved.descriptor_hash);
	auto text = ReadVerified(store, cache, key, resolved.descriptor_hash, "descriptor", ErrorCode::DESCRIPTOR_NOT_FOUND,
	                         ErrorCode::CORRUPT_DESCRIPTOR);
	std::string why;
	if (!DecodeDescriptor(text, resolved.descriptor, why)) {
		Fail(ErrorCode::CORRUPT_DESCRIPTOR,
		     "The descriptor " + key + " at " + store.Describe() + " cannot be read: " + why + ".");
	}
	if (resolved.head && resolved.descriptor.database != resolved.head->database) {
		Fail(ErrorCode::CORRUPT_HEAD, "The branch head " + locator.Key() + " points at a descriptor of database '" +
		                                  resolved.descriptor.database + "'. Re-export the branch.");
	}
	resolved.image = ReadImage(store, cache, resolved.descriptor);
	return resolved;
}

} // namespace differential
