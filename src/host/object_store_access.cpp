// Secrets in, stores out. Credentials stay in memory: the store cache is keyed by a hash of them, and no
// message built here ever contains them.
#include "host/object_store_access.hpp"

#include "common/errors.hpp"
#include "common/hash.hpp"
#include "duckdb/catalog/catalog_transaction.hpp"
#include "duckdb/main/database.hpp"
#include "duckdb/main/extension_helper.hpp"
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

static const char *const S3_SECRET_KEYS[] = {"key_id", "secret", "session_token", "region", "endpoint", "url_style"};

static unique_ptr<BaseSecret> CreateS3Secret(ClientContext &, CreateSecretInput &input) {
	auto scope = input.scope;
	if (scope.empty()) {
		scope.push_back("s3://");
	}
	auto secret = make_uniq<KeyValueSecret>(scope, input.type, input.provider, input.name);
	for (auto key : S3_SECRET_KEYS) {
		secret->TrySetValue(key, input);
	}
	secret->TrySetValue("use_ssl", input);
	secret->redact_keys = {"secret", "session_token"};
	if (input.provider.GetIdentifierName() == "credential_chain" && secret->secret_map.count("key_id")) {
		Fail(ErrorCode::INVALID_SECRET,
		     "A TYPE s3 secret with PROVIDER credential_chain takes its keys from the AWS credential chain; remove "
		     "KEY_ID and SECRET, or use PROVIDER config.");
	}
	return std::move(secret);
}

static CreateSecretFunction S3SecretFunction(const std::string &provider) {
	CreateSecretFunction function;
	function.secret_type = "s3";
	function.provider = Identifier(provider);
	function.function = CreateS3Secret;
	for (auto key : S3_SECRET_KEYS) {
		function.named_parameters[key] = LogicalType::VARCHAR;
	}
	function.named_parameters["use_ssl"] = LogicalType::BOOLEAN;
	return function;
}

//! httpfs registers the same type on load; if it is installed, let DuckDB autoload it for `TYPE s3`.
static bool HttpfsProvidesS3(DatabaseInstance &db) {
	if (db.ExtensionIsLoaded("httpfs")) {
		return true;
	}
	auto &fs = FileSystem::GetFileSystem(db);
	for (auto &directory : ExtensionHelper::GetExtensionDirectoryPath(db, fs)) {
		if (fs.FileExists(fs.JoinPath(directory, "httpfs.duckdb_extension"))) {
			return true;
		}
	}
	return false;
}

void RegisterS3SecretType(ExtensionLoader &loader) {
	auto &db = loader.GetDatabaseInstance();
	if (HttpfsProvidesS3(db)) {
		return;
	}
	SecretType type;
	type.name = "s3";
	type.deserializer = KeyValueSecret::Deserialize<KeyValueSecret>;
	type.default_provider = "config";
	type.extension = "differential";
	loader.RegisterSecretType(type);
	loader.RegisterFunction(S3SecretFunction("config"));
	loader.RegisterFunction(S3SecretFunction("credential_chain"));
}

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

std::shared_ptr<ObjectStore> OpenObjectStore(ClientContext &context, const std::string &url) {
	RequireStoreAccess(context, url);
	auto parsed = ParseDataPath(url);
	auto canonical = FormatObjectStoreUrl(parsed);
	S3Credentials credentials;
	if (parsed.kind == ObjectStoreUrl::Kind::S3) {
		credentials = ResolveCredentials(context, canonical);
	}
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

} // namespace differential
