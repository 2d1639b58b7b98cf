// Secrets in, stores out. Credentials stay in memory: the store cache is keyed by a hash of them, and no
// message built here ever contains them.
#include "host/object_store_access.hpp"

#include "common/errors.hpp"
#include "common/hash.hpp"
#include "duckdb/catalog/catalog_transaction.hpp"
#include "duckdb/main/secret/secret.hpp"
#include "duckdb/main/secret/secret_manager.hpp"
#include "export/data_path.hpp"
#include "host/access_rules.hpp"
#include "remote/local_object_store.hpp"
#include "remote/s3_object_store.hpp"

#include <map>
#include <mutex>

namespace differential {

using namespace duckdb;

static std::string SecretText(const KeyValueSecret &secret, const char *key) {
	Value value;
	return secret.TryGetValue(key, value) && !value.IsNull() ? value.ToString() : std::string();
}

//! The credentials of the best matching secret, or the AWS chain's when no secret matches.
static S3Credentials ResolveCredentials(ClientContext &context, const std::string &url) {
	S3Credentials credentials;
	auto &manager = SecretManager::Get(context);
	auto match = manager.LookupSecret(CatalogTransaction::GetSystemCatalogTransaction(context), url, "s3");
	if (!match.HasMatch()) {
		return credentials;
	}
	auto secret = dynamic_cast<const KeyValueSecret *>(&match.GetSecret());
	if (!secret) {
		return credentials;
	}
	credentials.key_id = SecretText(*secret, "key_id");
	credentials.secret = SecretText(*secret, "secret");
	credentials.session_token = SecretText(*secret, "session_token");
	auto region = SecretText(*secret, "region");
	credentials.region = region.empty() ? credentials.region : region;
	credentials.endpoint = SecretText(*secret, "endpoint");
	// httpfs's default is virtual-host style for AWS and path style is what other servers need.
	credentials.url_style = SecretText(*secret, "url_style") == "path" ? S3UrlStyle::PATH : S3UrlStyle::VIRTUAL_HOST;
	Value use_ssl;
	if (secret->TryGetValue("use_ssl", use_ssl) && !use_ssl.IsNull()) {
		credentials.use_ssl = use_ssl.GetValue<bool>();
	}
	return credentials;
}

//! A fingerprint of everything that decides how requests are signed and sent, never the fields themselves.
static std::string CacheKey(const std::string &url, const S3Credentials &c) {
	auto joined = c.key_id + '\n' + c.secret + '\n' + c.session_token + '\n' + c.region + '\n' + c.endpoint + '\n' +
	              (c.url_style == S3UrlStyle::PATH ? "path" : "vhost") + (c.use_ssl ? "s" : "p");
	auto digest = HashToHex(Sha256(joined.data(), joined.size()));
	std::fill(joined.begin(), joined.end(), '\0');
	return url + '\n' + digest;
}

//! The process's one store per URL and credentials: each S3 store is a CRT client with its connections.
static std::shared_ptr<ObjectStore> OpenResolved(const ObjectStoreUrl &parsed, const std::string &canonical,
                                                 const S3Credentials &credentials) {
	static std::mutex lock;
	static auto *stores = new std::map<std::string, std::shared_ptr<ObjectStore>>();
	std::lock_guard<std::mutex> guard(lock);
	auto &store = (*stores)[CacheKey(canonical, credentials)];
	if (!store) {
		if (parsed.kind == ObjectStoreUrl::Kind::FILE) {
			store = std::make_shared<LocalObjectStore>(parsed.path);
		} else {
			store = std::make_shared<S3ObjectStore>(S3Location {parsed.bucket, parsed.prefix}, credentials);
		}
	}
	return store;
}

std::function<std::shared_ptr<ObjectStore>()> ObjectStoreOpener(ClientContext &context, const std::string &url) {
	RequireStoreAccess(context, url);
	auto parsed = ParseDataPath(url);
	auto canonical = FormatObjectStoreUrl(parsed);
	S3Credentials credentials;
	if (parsed.kind == ObjectStoreUrl::Kind::S3) {
		credentials = ResolveCredentials(context, canonical);
	}
	return [parsed, canonical, credentials]() {
		return OpenResolved(parsed, canonical, credentials);
	};
}

std::shared_ptr<ObjectStore> OpenObjectStore(ClientContext &context, const std::string &url) {
	return ObjectStoreOpener(context, url)();
}

} // namespace differential
