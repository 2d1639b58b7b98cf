// Reading an export back for a remote attach: a branch head or a descriptor, then the descriptor, then its
// export index pages, into the RemoteImage storage reads from. Every content-addressed object is checked
// against the SHA-256 its key names before it is decoded; nothing here reads a pack.
#pragma once

#include "remote/export_format.hpp"
#include "storage/content_cache.hpp"
#include "storage/object_store.hpp"

#include <optional>

namespace differential {

struct ResolvedExport {
	//! The head the locator named (HEAD locators only).
	std::optional<BranchHead> head;
	//! The etag the head was read at (HEAD locators only): a follower's first If-None-Match.
	std::string head_etag;
	Hash256 descriptor_hash {};
	ExportDescriptor descriptor;
	RemoteImage image;
};

//! Resolves `locator` in `store` (keys relative to the locator's store URL). Descriptors and index pages
//! come from `cache` when it holds them, and go into it when fetched; heads always come from the store.
//! Refusals: head_not_found, bucket_not_found, descriptor_not_found, missing_object, corrupt_head,
//! corrupt_descriptor, corrupt_index_page, and the request errors of storage/remote_fetch.hpp.
ResolvedExport ReadExport(ObjectStore &store, const RemoteLocator &locator, ContentCache &cache);

} // namespace differential
