// Names of object-store outcomes and the listing helper shared by every ObjectStore implementation.
#include "storage/object_store.hpp"

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

ObjectOutcome ListAll(ObjectStore &store, const std::string &prefix, std::vector<ObjectInfo> &out) {
	std::string token;
	do {
		ListPage page = store.List(prefix, token);
		if (!page.outcome.Ok()) {
			return page.outcome;
		}
		for (auto &object : page.objects) {
			out.push_back(std::move(object));
		}
		token = std::move(page.next_token);
	} while (!token.empty());
	return {};
}

} // namespace differential
