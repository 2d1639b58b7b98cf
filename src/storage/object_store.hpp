// The object store that exports are written to and remote reads come from (S3, or a local directory).
// storage/ declares what it needs here; remote/ implements it. Outcomes are data, never parsed from text.
#pragma once

#include "common/hash.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace differential {

//! What happened to one request, as the caller must act on it. Every implementation maps its own
//! failures onto these (S3: the HTTP status and the CRT's error code), so callers never read messages.
enum class ObjectStatus {
	OK,
	NOT_FOUND,           //! no such key (or, for If-Match, the key to match is gone)
	PRECONDITION_FAILED, //! If-None-Match: * met an existing key, or If-Match met another etag
	CONFLICT,            //! a concurrent conditional write on the same key was in flight; retry decides
	TRANSIENT,           //! network, throttling or server trouble that outlived the retries
	DENIED,              //! credentials refused (wrong secret, no permission, expired token)
	INVALID              //! the request itself was refused (bad checksum, bad range, bad key)
};

//! The stable lower-case name of a status ("precondition_failed"), for error codes and logs.
const char *ObjectStatusName(ObjectStatus status);

struct ObjectOutcome {
	ObjectStatus status = ObjectStatus::OK;
	//! For people only: what failed (HTTP status and the server's error code, or the OS error). Never
	//! contains credentials, and callers decide nothing from it.
	std::string detail;
	//! How many requests the operation took (S3: 1 + the CRT's retries; the local store: 0), for logs.
	uint32_t attempts = 0;

	bool Ok() const {
		return status == ObjectStatus::OK;
	}
};

//! One object as listed or headed. The etag is opaque: compare it for equality and pass it back in
//! `PutCondition::IfMatch`, nothing else (S3 gives an MD5 for plain PUTs, the local store a SHA-256).
struct ObjectInfo {
	std::string key;
	std::string etag;
	uint64_t size = 0;
};

//! The precondition of a PUT: none, create-only (`If-None-Match: *`), or replace-only-this-version
//! (`If-Match: <etag>`). Heads and commit records rely on exactly one racing writer winning.
struct PutCondition {
	enum class Kind { NONE, IF_NONE_MATCH_ANY, IF_MATCH };
	Kind kind = Kind::NONE;
	std::string etag;

	static PutCondition None() {
		return {};
	}
	static PutCondition CreateOnly() {
		return {Kind::IF_NONE_MATCH_ANY, {}};
	}
	static PutCondition IfMatch(std::string etag) {
		return {Kind::IF_MATCH, std::move(etag)};
	}
};

struct PutRequest {
	std::string key;
	const void *data = nullptr;
	size_t size = 0;
	PutCondition condition;
	//! The SHA-256 the store must verify the bytes against (sent as `x-amz-checksum-sha256`). Unset means
	//! "compute it from the bytes"; tests set a wrong one to prove the store refuses it.
	std::optional<Hash256> sha256;
};

//! A PUT of `bytes` under `key` on `condition`; the request points into `bytes`, which must outlive it.
inline PutRequest PutOf(const std::string &key, const std::string &bytes, PutCondition condition) {
	PutRequest request;
	request.key = key;
	request.data = bytes.data();
	request.size = bytes.size();
	request.condition = std::move(condition);
	return request;
}

struct PutResult {
	ObjectOutcome outcome;
	std::string etag; //! of the version written, when outcome is OK
};

//! A byte range of an object: `length` bytes from `offset` (a range past the end is cut short by S3).
struct ByteRange {
	uint64_t offset = 0;
	uint64_t length = 0;
};

struct GetResult {
	ObjectOutcome outcome;
	std::string data;
	std::string etag;
	uint64_t object_size = 0; //! of the whole object, also for a ranged read
	//! GetIfNoneMatch only: the object still has the etag given; `data` is empty and `etag` is that etag.
	bool not_modified = false;
};

struct HeadResult {
	ObjectOutcome outcome;
	ObjectInfo info;
};

//! One page of a listing in key order. Pass `next_token` back to get the following page; it is empty
//! on the last page.
struct ListPage {
	ObjectOutcome outcome;
	std::vector<ObjectInfo> objects;
	std::string next_token;
};

class ObjectStore {
public:
	virtual ~ObjectStore() = default;

	//! Thread safe: every method may be called from several threads at once.
	virtual PutResult Put(const PutRequest &request) = 0;
	virtual GetResult Get(const std::string &key, const std::optional<ByteRange> &range = std::nullopt) = 0;
	//! A GET unless the object's etag is still `etag` (`If-None-Match`, S3's 304): then the outcome is OK,
	//! `not_modified` is set and no body travels. The default reads the object and compares the etags, for
	//! stores without conditional reads (the local store reads a file either way).
	virtual GetResult GetIfNoneMatch(const std::string &key, const std::string &etag);
	virtual HeadResult Head(const std::string &key) = 0;
	virtual ListPage List(const std::string &prefix, const std::string &token = "", uint32_t max_keys = 1000) = 0;
	//! Deleting a key that does not exist is OK, as in S3.
	virtual ObjectOutcome Delete(const std::string &key) = 0;
	//! For messages: where this store points ("s3://bucket/prefix/", "file:///dir/").
	virtual std::string Describe() const = 0;
};

//! Raises the DifferentialError a failed outcome means for a user: `remote_not_found`, `remote_conflict`,
//! `remote_unavailable`, `remote_denied` or `remote_invalid`, naming what was being done (`doing`, e.g.
//! "reading the head heads/orders/main") and where (`store.Describe()`), and what to do about it.
[[noreturn]] void FailRemote(const ObjectOutcome &outcome, const ObjectStore &store, const std::string &doing);

//! All pages of a listing; stops at the first failed page and returns its outcome.
ObjectOutcome ListAll(ObjectStore &store, const std::string &prefix, std::vector<ObjectInfo> &out);

} // namespace differential
