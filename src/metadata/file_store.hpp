// The file catalog in the metadata: published file versions, index pages, chunk locations, WAL
// byte ranges and reader pins. Implements the interface the storage layer declares.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/pin_store.hpp"
#include "storage/file_catalog.hpp"

namespace differential {

class FileStore : public FileCatalog {
public:
	FileStore(MetadataCore &core, PinStore &pins) : core(core), pins(pins) {
	}

	bool LoadFile(const FileAddress &file, StoredFile &out, PinKind pin = PinKind::NONE) override;
	void Unpin(const FilePin &pin) override;
	std::vector<uint8_t> LoadIndexPage(const Hash256 &page) override;
	void LookupChunks(const std::vector<Hash256> &hashes, std::vector<ChunkLocation> &out) override;
	void PublishChunked(const FileAddress &file, PublishedState &state, uint64_t length,
	                    const std::vector<Hash256> &pages, const std::vector<NewIndexPage> &new_pages,
	                    const std::vector<NewChunk> &new_chunks, const FilePin &publisher_pin) override;
	void PublishRanged(const FileAddress &file, PublishedState &state, uint64_t kept_extents,
	                   const std::vector<RangeExtent> &new_extents) override;
	void RemoveFile(const FileAddress &file) override;
	void MoveFile(const FileAddress &from, const FileAddress &to) override;
	uint64_t AllocateSegment() override;

private:
	bool LoadPinnedByWriter(const FileAddress &file, StoredFile &out);
	bool LoadPinnedByReader(const FileAddress &file, StoredFile &out);

	MetadataCore &core;
	PinStore &pins;
};

} // namespace differential
