// Names of object-store outcomes and the listing helper shared by every ObjectStore implementation.
#include "storage/object_store.hpp"

#include "common/errors.hpp"

namespace differential {

const char *ObjectStatusName(ObjectStatus status) {
	switch (status) {
	case ObjectStatus::OK:
		return "ok";
	case ObjectStatus::NOT_FOUND:
		return "not_found";
	case ObjectStatus::PRECONDITION_FAILED:
		return "precondition_failed";
	case ObjectStatus::CONFLICT:
		return "conflict";
	case ObjectStatus::TRANSIENT:
		return "transient";
	case ObjectStatus::DENIED:
		return "denied";
	case ObjectStatus::INVALID:
		return "invalid";
	}
	return "invalid";
}

void FailRemote(const ObjectOutcome &outcome, const ObjectStore &store, const std::string &doing) {
	auto where = "Failed " + doing + " in " + store.Describe() + " (" + outcome.detail + ")";
	switch (outcome.status) {
	case ObjectStatus::NOT_FOUND:
		Fail(ErrorCode::REMOTE_NOT_FOUND,
		     where + ". The object is missing: check the URL, or whether it was deleted from the bucket.");
	case ObjectStatus::PRECONDITION_FAILED:
	case ObjectStatus::CONFLICT:
		Fail(ErrorCode::REMOTE_CONFLICT, where + ". Another writer changed it first; retry.");
	case ObjectStatus::TRANSIENT:
		Fail(ErrorCode::REMOTE_UNAVAILABLE,
		     where + " after retries. Check the ENDPOINT and USE_SSL of the TYPE s3 secret and the network, then "
		             "retry.");
	case ObjectStatus::DENIED:
		Fail(ErrorCode::REMOTE_DENIED,
		     where + ". The credentials were refused: check the TYPE s3 secret whose SCOPE matches this URL (or "
		             "the AWS credential chain when none does) and its permissions.");
	case ObjectStatus::OK:
	case ObjectStatus::INVALID:
		break;
	}
	Fail(ErrorCode::REMOTE_INVALID, where + ". The store refused the request; check the URL and the server.");
}

GetResult ObjectStore::GetIfNoneMatch(const std::string &key, const std::string &etag) {
	auto result = Get(key);
	if (result.outcome.Ok() && !etag.empty() && result.etag == etag) {
		result.not_modified = true;
		result.data.clear();
	}
	return result;
}

ObjectOutcome ListAll(ObjectStore &store, const std::string &prefix, std::vector<ObjectInfo> &out) {
	std::string token;
	uint32_t attempts = 0; // of all pages, for the callers' request logs
	do {
		ListPage page = store.List(prefix, token);
		attempts += page.outcome.attempts;
		if (!page.outcome.Ok()) {
			page.outcome.attempts = attempts;
			return page.outcome;
		}
		for (auto &object : page.objects) {
			out.push_back(std::move(object));
		}
		token = std::move(page.next_token);
	} while (!token.empty());
	ObjectOutcome done;
	done.attempts = attempts;
	return done;
}

} // namespace differential
