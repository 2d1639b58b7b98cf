// Branch heads: the only objects an export replaces, always by a conditional PUT from the version this
// repository published last, and only to stores that passed the conditional-write probe in this process.
#include "export/snapshot_export.hpp"

#include "common/logging.hpp"
#include "remote/conditional_write_probe.hpp"
#include "remote/export_format.hpp"
#include "remote/logged_object_store.hpp"

#include <map>
#include <mutex>

namespace differential {

//! The probe's verdict per store URL, for the life of the process. Only verdicts are kept: a probe
//! that could not finish (denied, unreachable) runs again next time.
void RequireConditionalWrites(ExportContext &context) {
	static std::mutex lock;
	static auto *verdicts = new std::map<std::string, ProbeResult>();
	std::lock_guard<std::mutex> guard(lock);
	auto it = verdicts->find(context.store_url);
	if (it == verdicts->end()) {
		LogTimer timer;
		LoggedObjectStore logged(context.store, "probe_request");
		auto result = ProbeConditionalWrites(logged, "probes/");
		LogEvent("export_probe", timer.ElapsedMs(),
		         context.store.Describe() + (result.passed ? ": conditional writes honoured" : ": " + result.failure));
		if (!result.passed && (result.status == ObjectStatus::DENIED || result.status == ObjectStatus::TRANSIENT)) {
			throw ExportFailure(result.status, "the conditional-write probe: " + result.failure);
		}
		it = verdicts->emplace(context.store_url, result).first;
	}
	if (!it->second.passed) {
		throw ProbeRefusal(it->second.failure);
	}
}

bool PublishBranchHead(ExportContext &context, const std::string &branch, int64_t snapshot_id,
                       const Hash256 &descriptor, ExportStats &stats) {
	auto &remote = context.repository.metadata->remote;
	auto published = remote.Head(context.store_url, context.database, branch);
	if (published && published->snapshot_id == snapshot_id) {
		return false;
	}
	RequireConditionalWrites(context);
	BranchHead head;
	head.database = context.database;
	head.branch = branch;
	head.snapshot_id = snapshot_id;
	head.descriptor = descriptor;
	if (published) {
		head.previous = published->descriptor;
		// A shipping database's head keeps naming its WAL chain when a snapshot moves it.
		head.chain = published->chain;
		head.chain_base = published->chain_base;
	}
	auto text = EncodeHead(head);
	auto key = HeadKey(context.database, branch);
	ExportUploader uploader(context.store, stats);
	auto result = uploader.PutConditional(
	    key, text, published ? PutCondition::IfMatch(published->etag) : PutCondition::CreateOnly());
	auto etag = result.etag;
	if (!result.outcome.Ok()) {
		// Refused: the head is not the version we published last. It may be our own write whose answer
		// was lost before we recorded it; then it holds exactly these bytes and is ours.
		auto current = uploader.Get(key);
		if (!current.outcome.Ok() || current.data != text) {
			throw RemoteConflict("the head " + key + " is not the version this repository published last (" +
			                     (published ? "snapshot " + std::to_string(published->snapshot_id) : "none") + ")");
		}
		etag = current.etag;
	}
	PublishedHead record {snapshot_id, descriptor, etag};
	record.chain = head.chain;
	record.chain_base = head.chain_base;
	remote.RecordHead(context.store_url, context.database, branch, record);
	return true;
}

} // namespace differential
