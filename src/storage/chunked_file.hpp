// A branch's or snapshot's database file: fixed chunks (chunk_geometry.hpp), each stored whole and
// content-addressed; publishing writes the touched index pages and one new root.
#pragma once

#include "storage/versioned_file.hpp"

namespace differential {

class ChunkedFile : public VersionedFile {
public:
	ChunkedFile(FileAddress address, std::shared_ptr<RepositoryStorage> storage, bool writable);
	~ChunkedFile() override;

	std::vector<CompanionFile> TakeCompanions() override;
	bool Trim(uint64_t offset, uint64_t size) override;
	std::vector<Hash256> CurrentChunkHashes() override;

protected:
	PinKind PinsOnLoad() const override {
		return writable ? PinKind::WRITER : PinKind::READER;
	}
	void KeepLoadedLocked(StoredFile &stored) override;
	void ApplyLocked(StoredFile &stored) override;
	void ClearLocked() override;
	uint64_t ReadLocked(uint8_t *out, uint64_t size, uint64_t offset) override;
	void WriteLocked(const uint8_t *in, uint64_t size, uint64_t offset) override;
	void ShrinkLocked(uint64_t new_length) override;
	void PublishLocked() override;
	void CollectUnpublishedLocked(std::set<uint64_t> &out) override;

private:
	struct Chunk {
		Hash256 hash {};
		ChunkLocation location;
		bool present = false;
	};

	void ReadChunk(const Chunk &chunk, uint8_t *out);
	//! Copies bytes [begin, end) of the file, all inside chunk `index`, to `out`.
	void ReadPartOfChunk(uint64_t index, uint64_t begin, uint64_t end, uint8_t *out, std::vector<uint8_t> &scratch);
	void StoreChunkLocked(uint64_t index, const uint8_t *content, uint64_t size);
	//! The index pages a publication must rewrite, encoded, with the page list updated to them.
	std::vector<NewIndexPage> RewriteTouchedPages();

	//! Keeps the loaded (then the last published) root safe from cleanup.
	FilePin pin;
	std::vector<CompanionFile> companions;
	std::vector<Chunk> chunks;
	std::vector<Hash256> pages;
	std::set<uint64_t> dirty_chunks;
	bool length_dirty = false;
};

} // namespace differential
