// A repository's metadata: the core (connection, schema, transactions) and one store per concept,
// all sharing it. Other layers reach the metadata only through these stores.
#pragma once

#include "metadata/accounting_store.hpp"
#include "metadata/file_store.hpp"
#include "metadata/garbage_store.hpp"
#include "metadata/history_store.hpp"
#include "metadata/lifecycle_store.hpp"
#include "metadata/merge_request_store.hpp"
#include "metadata/metadata_core.hpp"
#include "metadata/pin_store.hpp"
#include "metadata/remote_store.hpp"
#include "metadata/shared_writer_store.hpp"
#include "metadata/shipping_store.hpp"

#include <string>

namespace differential {

class MetadataStore {
public:
	//! Opens (creating if needed) <root>/metadata.sqlite and migrates it to the current schema.
	explicit MetadataStore(const std::string &root)
	    : core(root), pins(root), files(core, pins), history(core), lifecycle(core), merges(core), garbage(core, pins),
	      accounting(core), remote(core), shipping(core), shared(core), root(root) {
	}
	MetadataStore(const MetadataStore &) = delete;
	MetadataStore &operator=(const MetadataStore &) = delete;

private:
	MetadataCore core;
	PinStore pins;

public:
	FileStore files;
	HistoryStore history;
	LifecycleStore lifecycle;
	MergeRequestStore merges;
	GarbageStore garbage;
	AccountingStore accounting;
	RemoteStore remote;
	ShippingStore shipping;
	SharedWriterStore shared;
	const std::string root;
};

} // namespace differential
