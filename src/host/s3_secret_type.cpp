// Registers differential's `s3` secret type and `credential_chain` provider only when a CREATE SECRET needs one that
// no extension provides, and refuses a later httpfs or aws load that would collide with them: DuckDB allows one
// registration per type and per provider and answers a second with an internal error.
#include "host/s3_secret_type.hpp"

#include "common/duckdb_errors.hpp"
#include "common/errors.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/client_context_state.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/connection_manager.hpp"
#include "duckdb/main/extension_helper.hpp"
#include "duckdb/main/extension_manager.hpp"
#include "duckdb/main/secret/secret.hpp"
#include "duckdb/main/secret/secret_manager.hpp"
#include "duckdb/main/settings.hpp"
#include "duckdb/parser/expression/columnref_expression.hpp"
#include "duckdb/parser/expression/constant_expression.hpp"
#include "duckdb/parser/parsed_data/create_secret_info.hpp"
#include "duckdb/parser/statement/create_statement.hpp"
#include "duckdb/planner/extension_callback.hpp"

#include <atomic>
#include <mutex>
#include <optional>

namespace differential {

using namespace duckdb;

static const char *const S3_SECRET_KEYS[] = {"key_id", "secret", "session_token", "region", "endpoint", "url_style"};
static const char *const CONFIG = "config";
static const char *const CREDENTIAL_CHAIN = "credential_chain";
static const char *const STATE_KEY = "differential_s3_secret";

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
	if (input.provider.GetIdentifierName() == CREDENTIAL_CHAIN && secret->secret_map.count("key_id")) {
		Fail(ErrorCode::INVALID_SECRET,
		     "A TYPE s3 secret with PROVIDER credential_chain takes its keys from the AWS credential chain; remove "
		     "KEY_ID and SECRET, or use PROVIDER config.");
	}
	return std::move(secret);
}

static CreateSecretFunction S3SecretFunction(const char *provider) {
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

//! What differential registered in one database instance, and the loads of httpfs or aws under way in it: one
//! registration must not slip in between such a load's start and its own registration.
struct S3SecretOwnership {
	std::mutex lock;
	bool own_type = false;
	bool own_chain = false;
	int httpfs_loading = 0;
	int aws_loading = 0;
	//! The type and both providers exist, so no CREATE SECRET can need ours any more. Until then every statement of
	//! every connection is bound on a copy first (what CanRequestRebind costs), so states stop asking once settled.
	std::atomic<bool> settled {false};
};

static bool HasS3Type(DatabaseInstance &db) {
	for (auto &type : SecretManager::Get(db).AllSecretTypes()) {
		if (type.name == "s3") {
			return true;
		}
	}
	return false;
}

static bool HasS3Provider(DatabaseInstance &db, const char *provider) {
	for (auto &function : SecretManager::Get(db).AllSecretFunctions()) {
		if (StringUtil::CIEquals(function.secret_type, "s3") && function.provider == provider) {
			return true;
		}
	}
	return false;
}

static void Refresh(DatabaseInstance &db, S3SecretOwnership &ownership) {
	ownership.settled = HasS3Type(db) && HasS3Provider(db, CONFIG) && HasS3Provider(db, CREDENTIAL_CHAIN);
}

//! DuckDB itself loads `extension` for a statement that needs it: installed in the extension directory and
//! autoloading on. Then the extension is the owner, whatever happens to that load.
static bool Autoloadable(DatabaseInstance &db, const std::string &extension) {
	if (!Settings::Get<AutoloadKnownExtensionsSetting>(db)) {
		return false;
	}
	auto &fs = FileSystem::GetFileSystem(db);
	for (auto &directory : ExtensionHelper::GetExtensionDirectoryPath(db, fs)) {
		if (fs.FileExists(fs.JoinPath(directory, extension + ".duckdb_extension"))) {
			return true;
		}
	}
	return false;
}

//! Registers what a `CREATE SECRET (TYPE s3, PROVIDER provider)` needs and no extension provides or would be
//! autoloaded to provide: the type with `config`, and `credential_chain` when asked for. True if it registered any.
static bool RegisterMissing(DatabaseInstance &db, S3SecretOwnership &ownership, const std::string &provider) {
	std::lock_guard<std::mutex> guard(ownership.lock);
	auto &manager = SecretManager::Get(db);
	bool registered = false;
	if (!HasS3Type(db)) {
		if (ownership.httpfs_loading > 0 || Autoloadable(db, "httpfs")) {
			return false;
		}
		SecretType type;
		type.name = "s3";
		type.deserializer = KeyValueSecret::Deserialize<KeyValueSecret>;
		type.default_provider = CONFIG;
		type.extension = "differential";
		manager.RegisterSecretType(type);
		manager.RegisterSecretFunction(S3SecretFunction(CONFIG), OnCreateConflict::ERROR_ON_CONFLICT);
		ownership.own_type = true;
		registered = true;
	}
	if (provider == CREDENTIAL_CHAIN && !HasS3Provider(db, CREDENTIAL_CHAIN) && ownership.aws_loading == 0 &&
	    !Autoloadable(db, "aws")) {
		manager.RegisterSecretFunction(S3SecretFunction(CREDENTIAL_CHAIN), OnCreateConflict::ERROR_ON_CONFLICT);
		ownership.own_chain = true;
		registered = true;
	}
	Refresh(db, ownership);
	return registered;
}

//! A CREATE SECRET option written as a name or a constant (`TYPE s3`, `TYPE 's3'`), lower-cased; else empty.
static std::string OptionText(const unique_ptr<ParsedExpression> &expression) {
	if (!expression) {
		return std::string();
	}
	if (expression->GetExpressionType() == ExpressionType::COLUMN_REF) {
		return StringUtil::Lower(expression->Cast<ColumnRefExpression>().GetColumnName().GetIdentifierName());
	}
	if (expression->GetExpressionType() == ExpressionType::VALUE_CONSTANT) {
		auto value = expression->Cast<ConstantExpression>().GetLiteral().ToValue();
		return value.IsNull() ? std::string() : StringUtil::Lower(value.ToString());
	}
	return std::string();
}

//! The provider of a `CREATE SECRET (TYPE s3 …)` that differential can serve (`config` when none is named); nothing
//! for other statements and other providers, which registering ours would not help.
static std::optional<std::string> ServableS3Provider(SQLStatement &statement) {
	if (statement.type != StatementType::CREATE_STATEMENT) {
		return std::nullopt;
	}
	auto &create = statement.Cast<CreateStatement>();
	if (!create.info || create.info->type != CatalogType::SECRET_ENTRY) {
		return std::nullopt;
	}
	auto &info = create.info->Cast<CreateSecretInfo>();
	if (OptionText(info.type) != "s3") {
		return std::nullopt;
	}
	auto provider = OptionText(info.provider);
	provider = provider.empty() ? CONFIG : provider;
	if (provider != CONFIG && provider != CREDENTIAL_CHAIN) {
		return std::nullopt;
	}
	return provider;
}

//! Per connection: DuckDB hands a failed bind to OnPlanningError only through client context states.
class S3SecretRebind : public ClientContextState {
public:
	explicit S3SecretRebind(shared_ptr<S3SecretOwnership> ownership_p) : ownership(std::move(ownership_p)) {
	}

	bool CanRequestRebind() override {
		return !ownership->settled;
	}

	// DuckDB has already tried to autoload httpfs (or aws) for the statement when it gets here, so a type or provider
	// still missing is one nobody else provides.
	RebindQueryInfo OnPlanningError(ClientContext &context, SQLStatement &statement, ErrorData &) override {
		auto provider = ServableS3Provider(statement);
		if (!provider) {
			return RebindQueryInfo::DO_NOT_REBIND;
		}
		auto &db = DatabaseInstance::GetDatabase(context);
		return RegisterMissing(db, *ownership, *provider) ? RebindQueryInfo::ATTEMPT_TO_REBIND
		                                                  : RebindQueryInfo::DO_NOT_REBIND;
	}

private:
	shared_ptr<S3SecretOwnership> ownership;
};

static void AttachState(ClientContext &context, const shared_ptr<S3SecretOwnership> &ownership) {
	context.registered_state->GetOrCreate<S3SecretRebind>(STATE_KEY, ownership);
}

//! The extension a load callback names: loads under an alias (`LOAD httpfs AS h`) report the alias.
static std::string OriginalName(DatabaseInstance &db, const std::string &name) {
	auto info = ExtensionManager::Get(db).GetExtensionInfo(name);
	if (info && !info->orig_ext_name.empty()) {
		return info->orig_ext_name;
	}
	return ExtensionHelper::GetExtensionName(name);
}

//! Refuses the load of `extension` that DuckDB registered as `name`. `what` is what differential registered,
//! `secrets` the secrets that need it.
[[noreturn]] static void RefuseLoad(DatabaseInstance &db, const std::string &name, const std::string &extension,
                                    const std::string &what, const std::string &secrets) {
	// DuckDB forgets a failed load under an alias (ExtensionActiveLoad::LoadFail) but not one refused before it
	// started: without this, the alias would stay taken and the next try would be told so instead of why.
	auto &manager = ExtensionManager::Get(db);
	auto info = manager.GetExtensionInfo(name);
	if (info && !info->alias.empty()) {
		manager.RemoveExtensionInfo(name);
	}
	auto code = ErrorCode::SECRET_TYPE_TAKEN;
	auto message = extension + " cannot be loaded into this process: differential registered " + what +
	               " here when the process first created " + secrets + ", because " + extension +
	               " was neither loaded nor installed then, and DuckDB allows only one registration. Restart the "
	               "process and LOAD " +
	               extension + " (or INSTALL " + extension + ", so that it autoloads) before creating " + secrets +
	               "; differential reads the secrets " + extension + " makes. Nothing was loaded.";
	ThrowAsDuckDB(DifferentialError(KindOf(code), code, message));
}

class S3SecretLoadGuard : public ExtensionCallback {
public:
	explicit S3SecretLoadGuard(shared_ptr<S3SecretOwnership> ownership_p) : ownership(std::move(ownership_p)) {
	}

	void OnConnectionOpened(ClientContext &context) override {
		AttachState(context, ownership);
	}

	void OnBeginExtensionLoad(DatabaseInstance &db, const string &name) override {
		auto extension = OriginalName(db, name);
		std::lock_guard<std::mutex> guard(ownership->lock);
		if (extension == "httpfs") {
			if (ownership->own_type) {
				RefuseLoad(db, name, extension, "the s3 secret type", "s3 secrets");
			}
			ownership->httpfs_loading++;
		} else if (extension == "aws") {
			if (ownership->own_chain) {
				RefuseLoad(db, name, extension, "the s3 secret provider credential_chain",
				           "s3 secrets with PROVIDER credential_chain");
			}
			ownership->aws_loading++;
		}
	}

	void OnExtensionLoaded(DatabaseInstance &db, const string &name) override {
		Finished(db, name);
	}

	void OnExtensionLoadFail(DatabaseInstance &db, const string &name, const ErrorData &) override {
		Finished(db, name);
	}

private:
	void Finished(DatabaseInstance &db, const string &name) {
		auto extension = OriginalName(db, name);
		std::lock_guard<std::mutex> guard(ownership->lock);
		if (extension == "httpfs" && ownership->httpfs_loading > 0) {
			ownership->httpfs_loading--;
		} else if (extension == "aws" && ownership->aws_loading > 0) {
			ownership->aws_loading--;
		}
		Refresh(db, *ownership);
	}

	shared_ptr<S3SecretOwnership> ownership;
};

void InstallS3SecretType(DatabaseInstance &db) {
	auto ownership = make_shared_ptr<S3SecretOwnership>();
	Refresh(db, *ownership);
	ExtensionCallback::Register(DBConfig::GetConfig(db), make_shared_ptr<S3SecretLoadGuard>(ownership));
	// OnConnectionOpened never runs for connections opened before this LOAD, the one running it among them. A
	// connection opening meanwhile gets the state from the callback or is in this list (both is harmless).
	for (auto &context : ConnectionManager::Get(db).GetConnectionList()) {
		AttachState(*context, ownership);
	}
}

} // namespace differential
