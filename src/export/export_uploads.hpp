// The requests an export makes, counted and logged one by one; a failed request becomes an
// ExportFailure that carries its status, so the caller decides from data what to tell the user.
#pragma once

#include "storage/object_store.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace differential {

//! What an export did, for the SQL result and for the dedup tests.
struct ExportStats {
	uint64_t requests = 0;    //! every request sent (HTTP attempts are logged, not counted here)
	uint64_t packs = 0;       //! packs uploaded
	uint64_t chunks = 0;      //! chunks inside them
	uint64_t bytes = 0;       //! bytes of every object uploaded
	uint64_t index_pages = 0; //! export index pages uploaded
	uint64_t objects = 0;     //! objects uploaded of any kind (packs, pages, descriptors, records, heads)

	void Add(const ExportStats &other);
};

//! A request that failed; `what` names the request and the store's detail (never credentials).
class ExportFailure : public std::runtime_error {
public:
	ExportFailure(ObjectStatus status, const std::string &what) : std::runtime_error(what), status(status) {
	}
	ObjectStatus status;
};

class ExportUploader {
public:
	ExportUploader(ObjectStore &store, ExportStats &stats) : store(store), stats(stats) {
	}

	//! Uploads a content-addressed object create-only. A key that exists already holds these bytes (its
	//! name is their SHA-256), so `precondition_failed` is success too; nothing is ever overwritten.
	void PutContent(const std::string &key, const void *data, size_t size);
	//! Uploads a create-only record. When the key exists, reads it back: the same bytes (a retry of our
	//! own write) are success, other bytes return false (another writer got there first).
	bool PutRecord(const std::string &key, const std::string &text);
	//! A conditional PUT whose refusal the caller handles (heads); other failures throw.
	PutResult PutConditional(const std::string &key, const std::string &text, const PutCondition &condition);
	//! Reads an object whole; NOT_FOUND is returned, other failures throw.
	GetResult Get(const std::string &key);

	ObjectStore &store;

private:
	PutResult Put(const std::string &key, const void *data, size_t size, const PutCondition &condition);
	ExportStats &stats;
};

} // namespace differential
