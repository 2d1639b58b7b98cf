// Each export request goes through here: one place counts it, logs it with its duration and HTTP
// attempts (duckdb_logs, type differential), and turns a failure into an ExportFailure.
#include "export/export_uploads.hpp"

#include "common/logging.hpp"

namespace differential {

void ExportStats::Add(const ExportStats &other) {
	requests += other.requests;
	packs += other.packs;
	chunks += other.chunks;
	bytes += other.bytes;
	index_pages += other.index_pages;
	objects += other.objects;
}

static const char *ConditionName(const PutCondition &condition) {
	switch (condition.kind) {
	case PutCondition::Kind::IF_NONE_MATCH_ANY:
		return " if-none-match";
	case PutCondition::Kind::IF_MATCH:
		return " if-match";
	default:
		return "";
	}
}

static void Log(const char *verb, const std::string &key, const ObjectOutcome &outcome, const LogTimer &timer,
                size_t size, const char *condition) {
	if (!LogEnabled()) {
		return;
	}
	LogEvent("export_request", timer.ElapsedMs(),
	         std::string(verb) + condition + " " + key + ": " + ObjectStatusName(outcome.status) + ", " +
	             std::to_string(size) + " bytes, " + std::to_string(outcome.attempts) + " attempt(s)");
}

PutResult ExportUploader::Put(const std::string &key, const void *data, size_t size, const PutCondition &condition) {
	PutRequest request;
	request.key = key;
	request.data = data;
	request.size = size;
	request.condition = condition;
	LogTimer timer;
	auto result = store.Put(request);
	stats.requests++;
	Log("PUT", key, result.outcome, timer, size, ConditionName(condition));
	if (result.outcome.Ok()) {
		stats.objects++;
		stats.bytes += size;
	}
	return result;
}

void ExportUploader::PutContent(const std::string &key, const void *data, size_t size) {
	auto result = Put(key, data, size, PutCondition::CreateOnly());
	if (!result.outcome.Ok() && result.outcome.status != ObjectStatus::PRECONDITION_FAILED) {
		throw ExportFailure(result.outcome.status, result.outcome.detail);
	}
}

bool ExportUploader::PutRecord(const std::string &key, const std::string &text) {
	auto result = Put(key, text.data(), text.size(), PutCondition::CreateOnly());
	if (result.outcome.Ok()) {
		return true;
	}
	if (result.outcome.status != ObjectStatus::PRECONDITION_FAILED) {
		throw ExportFailure(result.outcome.status, result.outcome.detail);
	}
	auto existing = Get(key);
	return existing.outcome.Ok() && existing.data == text;
}

PutResult ExportUploader::PutConditional(const std::string &key, const std::string &text,
                                         const PutCondition &condition) {
	auto result = Put(key, text.data(), text.size(), condition);
	auto status = result.outcome.status;
	if (!result.outcome.Ok() && status != ObjectStatus::PRECONDITION_FAILED && status != ObjectStatus::NOT_FOUND &&
	    status != ObjectStatus::CONFLICT) {
		throw ExportFailure(status, result.outcome.detail);
	}
	return result;
}

GetResult ExportUploader::Get(const std::string &key) {
	LogTimer timer;
	auto result = store.Get(key);
	stats.requests++;
	Log("GET", key, result.outcome, timer, result.data.size(), "");
	if (!result.outcome.Ok() && result.outcome.status != ObjectStatus::NOT_FOUND) {
		throw ExportFailure(result.outcome.status, result.outcome.detail);
	}
	return result;
}

} // namespace differential
