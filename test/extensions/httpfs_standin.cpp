// A stand-in for httpfs in the tests (no httpfs build for this DuckDB is at hand): it registers the `s3` secret type
// the way httpfs does and nothing else, which is all that decides whether httpfs and differential share a process.
// scripts/build.sh copies it to build/testing/httpfs/httpfs.duckdb_extension: DuckDB derives the entry point,
// httpfs_duckdb_cpp_init, from that file name. Written from DuckDB's extension API, not from httpfs's sources.
#include "duckdb.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/main/secret/secret.hpp"

namespace {

using namespace duckdb;

const char *const TEXT_PARAMETERS[] = {"key_id", "secret", "region", "session_token", "endpoint", "url_style"};

unique_ptr<BaseSecret> CreateFromConfig(ClientContext &, CreateSecretInput &input) {
	auto scope = input.scope;
	if (scope.empty()) {
		scope.push_back("s3://");
	}
	auto secret = make_uniq<KeyValueSecret>(scope, input.type, input.provider, input.name);
	for (auto &option : input.options) {
		secret->secret_map[Identifier(StringUtil::Lower(option.first))] = option.second;
	}
	secret->redact_keys = {"secret", "session_token"};
	return std::move(secret);
}

} // namespace

extern "C" {
DUCKDB_CPP_EXTENSION_ENTRY(httpfs, loader) {
	SecretType type;
	type.name = "s3";
	type.deserializer = KeyValueSecret::Deserialize<KeyValueSecret>;
	type.default_provider = "config";
	type.extension = "httpfs";
	loader.RegisterSecretType(type);

	CreateSecretFunction config;
	config.secret_type = "s3";
	config.provider = "config";
	config.function = CreateFromConfig;
	for (auto name : TEXT_PARAMETERS) {
		config.named_parameters[name] = LogicalType::VARCHAR;
	}
	config.named_parameters["use_ssl"] = LogicalType::BOOLEAN;
	loader.RegisterFunction(config);
}
}
