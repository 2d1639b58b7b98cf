// S3ObjectStore: each operation is one CRT "default" meta request (a single signed HTTP request with the
// CRT's retries), run synchronously; outcomes come from the HTTP status and the CRT's error code.
#include "remote/s3_object_store.hpp"

#include "common/errors.hpp"
#include "remote/crt_runtime.hpp"
#include "remote/object_key.hpp"
#include "remote/s3_response.hpp"

#include <aws/auth/credentials.h>
#include <aws/auth/signing_config.h>
#include <aws/common/encoding.h>
#include <aws/common/uri.h>
#include <aws/http/connection.h>
#include <aws/http/request_response.h>
#include <aws/io/channel_bootstrap.h>
#include <aws/s3/s3_client.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>

namespace differential {

static aws_byte_cursor Cursor(const std::string &text) {
	return aws_byte_cursor_from_array(text.data(), text.size());
}

static std::string EncodePath(const std::string &path) {
	struct aws_byte_buf buf;
	aws_byte_buf_init(&buf, aws_default_allocator(), path.size() + 16);
	std::string with_slash = "/" + path;
	auto cursor = Cursor(with_slash);
	aws_byte_buf_append_encoding_uri_path(&buf, &cursor);
	std::string out(reinterpret_cast<const char *>(buf.buffer), buf.len);
	aws_byte_buf_clean_up(&buf);
	return out;
}

static std::string EncodeParam(const std::string &value) {
	struct aws_byte_buf buf;
	aws_byte_buf_init(&buf, aws_default_allocator(), value.size() + 16);
	auto cursor = Cursor(value);
	aws_byte_buf_append_encoding_uri_param(&buf, &cursor);
	std::string out(reinterpret_cast<const char *>(buf.buffer), buf.len);
	aws_byte_buf_clean_up(&buf);
	return out;
}

static std::string Base64(const Hash256 &digest) {
	struct aws_byte_buf buf;
	aws_byte_buf_init(&buf, aws_default_allocator(), 64);
	auto raw = aws_byte_cursor_from_array(digest.data(), digest.size());
	aws_base64_encode(&raw, &buf);
	std::string out(reinterpret_cast<const char *>(buf.buffer), buf.len);
	aws_byte_buf_clean_up(&buf);
	return out;
}

S3Target MakeS3Target(const S3Credentials &credentials, const std::string &bucket, const std::string &full_key) {
	S3Target target;
	target.scheme = credentials.use_ssl ? "https" : "http";
	std::string host =
	    credentials.endpoint.empty() ? "s3." + credentials.region + ".amazonaws.com" : credentials.endpoint;
	if (credentials.url_style == S3UrlStyle::VIRTUAL_HOST) {
		target.authority = bucket + "." + host;
		target.path = EncodePath(full_key);
	} else {
		target.authority = host;
		target.path = EncodePath(full_key.empty() ? bucket : bucket + "/" + full_key);
	}
	return target;
}

struct S3ObjectStore::Request {
	Request(const char *method_p, const char *operation_p, std::string key_p)
	    : method(method_p), operation(operation_p), key(std::move(key_p)) {
	}
	const char *method;
	const char *operation; //! the S3 operation name: the CRT treats some (GetObject) specially
	std::string key;       //! the full key, with the location's prefix; empty for the bucket itself
	std::string query;     //! encoded, without '?'
	std::vector<std::pair<std::string, std::string>> headers;
	const void *body = nullptr;
	size_t body_size = 0;
};

//! What the CRT callbacks fill in; the caller waits until the meta request has shut down, after which
//! no callback runs, so this can live on the caller's stack.
struct Call {
	S3Response response;
	std::mutex lock;
	std::condition_variable done_signal;
	bool done = false;
	bool receives_body = true;
};

static void CopyHeaders(const struct aws_http_headers *headers, S3Response &response) {
	for (size_t i = 0; headers && i < aws_http_headers_count(headers); i++) {
		struct aws_http_header header;
		if (aws_http_headers_get_index(headers, i, &header) == AWS_OP_SUCCESS) {
			response.SetHeader(std::string(reinterpret_cast<const char *>(header.name.ptr), header.name.len),
			                   std::string(reinterpret_cast<const char *>(header.value.ptr), header.value.len));
		}
	}
}

static int OnHeaders(struct aws_s3_meta_request *, const struct aws_http_headers *headers, int status, void *user) {
	auto call = static_cast<Call *>(user);
	call->response.http_status = status;
	CopyHeaders(headers, call->response);
	// One allocation for the body instead of doublings (8 MiB packs); a HEAD's length is no body.
	auto length = std::strtoull(call->response.Header("content-length").c_str(), nullptr, 10);
	if (call->receives_body && length > 0 && length <= (64ull << 20)) {
		call->response.body.reserve(length);
	}
	return AWS_OP_SUCCESS;
}

static int OnBody(struct aws_s3_meta_request *, const struct aws_byte_cursor *body, uint64_t, void *user) {
	// A default meta request is one HTTP request, so its body arrives in order.
	static_cast<Call *>(user)->response.body.append(reinterpret_cast<const char *>(body->ptr), body->len);
	return AWS_OP_SUCCESS;
}

static void OnFinish(struct aws_s3_meta_request *, const struct aws_s3_meta_request_result *result, void *user) {
	auto &response = static_cast<Call *>(user)->response;
	response.error_code = result->error_code;
	if (result->response_status != 0) {
		response.http_status = result->response_status;
	}
	if (result->error_response_body) {
		response.body.assign(reinterpret_cast<const char *>(result->error_response_body->buffer),
		                     result->error_response_body->len);
	}
	CopyHeaders(result->error_response_headers, response);
}

static void OnTelemetry(struct aws_s3_meta_request *, struct aws_s3_request_metrics *, void *user) {
	// Called once per HTTP request the CRT made, failed attempts included.
	static_cast<Call *>(user)->response.attempts++;
}

static void OnShutdown(void *user) {
	auto call = static_cast<Call *>(user);
	std::lock_guard<std::mutex> guard(call->lock);
	call->done = true;
	call->done_signal.notify_all();
}

static struct aws_http_message *BuildMessage(struct aws_allocator *allocator, const S3ObjectStore::Request &request,
                                             const S3Target &target) {
	struct aws_http_message *message = aws_http_message_new_request(allocator);
	std::string path = target.path + (request.query.empty() ? "" : "?" + request.query);
	aws_http_message_set_request_method(message, aws_byte_cursor_from_c_str(request.method));
	aws_http_message_set_request_path(message, Cursor(path));
	auto add = [&](const std::string &name, const std::string &value) {
		struct aws_http_header header = {};
		header.name = Cursor(name);
		header.value = Cursor(value);
		aws_http_message_add_header(message, header);
	};
	add("Host", target.authority);
	if (std::string(request.method) == "PUT") {
		add("Content-Length", std::to_string(request.body_size));
	}
	for (auto &header : request.headers) {
		add(header.first, header.second);
	}
	return message;
}

S3Response S3ObjectStore::Send(const Request &request) const {
	auto &runtime = CrtRuntime::Get();
	S3Target target = MakeS3Target(credentials, location.bucket, request.key);
	struct aws_http_message *message = BuildMessage(runtime.allocator, request, target);
	std::string endpoint_text = target.scheme + "://" + target.authority;
	auto endpoint_cursor = Cursor(endpoint_text);
	struct aws_uri endpoint;
	Call call;
	if (aws_uri_init_parse(&endpoint, runtime.allocator, &endpoint_cursor) != AWS_OP_SUCCESS) {
		call.response.error_code = aws_last_error();
		aws_http_message_release(message);
		return call.response;
	}
	struct aws_s3_meta_request_options options = {};
	options.type = AWS_S3_META_REQUEST_TYPE_DEFAULT;
	options.operation_name = aws_byte_cursor_from_c_str(request.operation);
	options.message = message;
	options.endpoint = &endpoint;
	if (request.body_size > 0) {
		options.request_body = aws_byte_cursor_from_array(request.body, request.body_size);
	}
	call.receives_body = std::string(request.method) != "HEAD";
	options.user_data = &call;
	options.headers_callback = OnHeaders;
	options.body_callback = OnBody;
	options.finish_callback = OnFinish;
	options.telemetry_callback = OnTelemetry;
	options.shutdown_callback = OnShutdown;
	struct aws_s3_meta_request *meta_request = aws_s3_client_make_meta_request(client, &options);
	if (!meta_request) {
		call.response.error_code = aws_last_error();
	} else {
		// Our reference is dropped at once; the CRT keeps its own until the request is over, then shuts down.
		aws_s3_meta_request_release(meta_request);
		std::unique_lock<std::mutex> guard(call.lock);
		call.done_signal.wait(guard, [&] { return call.done; });
	}
	aws_uri_clean_up(&endpoint);
	aws_http_message_release(message);
	return std::move(call.response);
}

struct S3ObjectStore::ClientShutdown {
	std::mutex lock;
	std::condition_variable signal;
	bool done = false;
};

namespace {

void OnClientShutdown(void *user) {
	auto shutdown = static_cast<S3ObjectStore::ClientShutdown *>(user);
	std::lock_guard<std::mutex> guard(shutdown->lock);
	shutdown->done = true;
	shutdown->signal.notify_all();
}

struct aws_credentials_provider *MakeProvider(const CrtRuntime &runtime, const S3Credentials &credentials) {
	if (credentials.UseProviderChain()) {
		struct aws_credentials_provider_chain_default_options options = {};
		options.bootstrap = runtime.bootstrap;
		return aws_credentials_provider_new_chain_default(runtime.allocator, &options);
	}
	struct aws_credentials_provider_static_options options = {};
	options.access_key_id = Cursor(credentials.key_id);
	options.secret_access_key = Cursor(credentials.secret);
	options.session_token = Cursor(credentials.session_token);
	return aws_credentials_provider_new_static(runtime.allocator, &options);
}

} // namespace

S3ObjectStore::S3ObjectStore(S3Location location_p, S3Credentials credentials_p, S3Tuning tuning_p)
    : location(std::move(location_p)), credentials(std::move(credentials_p)), tuning(tuning_p) {
	if (location.bucket.empty()) {
		Fail(ErrorCode::INVALID_S3_LOCATION, "An S3 location needs a bucket. Use s3://bucket/prefix/.");
	}
	if (!location.prefix.empty() && location.prefix.back() != '/') {
		location.prefix += '/';
	}
	// Every request parses the same scheme://host[:port]; a bad endpoint is refused here, once.
	auto target = MakeS3Target(credentials, location.bucket, "");
	std::string endpoint_text = target.scheme + "://" + target.authority;
	auto endpoint_cursor = Cursor(endpoint_text);
	struct aws_uri endpoint;
	if (aws_uri_init_parse(&endpoint, aws_default_allocator(), &endpoint_cursor) != AWS_OP_SUCCESS) {
		Fail(ErrorCode::INVALID_S3_LOCATION,
		     "The S3 endpoint '" + credentials.endpoint + "' is not host[:port]. Fix ENDPOINT.");
	}
	aws_uri_clean_up(&endpoint);
	auto &runtime = CrtRuntime::Get();
	// The client copies the TLS options it is given, so ours only need to outlive its creation.
	std::unique_ptr<aws_tls_connection_options, void (*)(aws_tls_connection_options *)> own_tls(nullptr,
	                                                                                            FreeTlsOptions);
	if (credentials.use_ssl && !tuning.ca_file.empty()) {
		own_tls.reset(MakeTlsOptions(runtime.allocator, tuning.ca_file));
		if (!own_tls) {
			Fail(ErrorCode::S3_CLIENT_ERROR,
			     "Cannot use the CA file " + tuning.ca_file + " for S3: " + aws_error_name(aws_last_error()) + ".");
		}
	}
	auto tls_options = own_tls ? own_tls.get() : credentials.use_ssl ? runtime.DefaultTlsOptions() : nullptr;
	if (credentials.use_ssl && !tls_options) {
		Fail(ErrorCode::S3_CLIENT_ERROR,
		     "Cannot set up TLS for S3 (no usable CA certificates?). Install ca-certificates.");
	}
	provider = MakeProvider(runtime, credentials);
	// The provider holds its own copy; ours is not needed any more and should not linger in memory.
	std::fill(credentials.secret.begin(), credentials.secret.end(), '\0');
	credentials.secret.clear();
	std::fill(credentials.session_token.begin(), credentials.session_token.end(), '\0');
	credentials.session_token.clear();
	struct aws_signing_config_aws signing = {};
	if (provider) {
		aws_s3_init_default_signing_config(&signing, Cursor(credentials.region), provider);
	}
	struct aws_s3_client_config config = {};
	config.region = Cursor(credentials.region);
	config.client_bootstrap = runtime.bootstrap;
	config.tls_mode = credentials.use_ssl ? AWS_MR_TLS_ENABLED : AWS_MR_TLS_DISABLED;
	config.tls_connection_options = credentials.use_ssl ? tls_options : nullptr;
	config.signing_config = &signing;
	shutdown = std::make_unique<ClientShutdown>();
	config.shutdown_callback = OnClientShutdown;
	config.shutdown_callback_user_data = shutdown.get();
	config.connect_timeout_ms = tuning.connect_timeout_ms;
	struct aws_http_connection_monitoring_options monitoring = {};
	monitoring.minimum_throughput_bytes_per_second = 1;
	monitoring.allowable_throughput_failure_interval_seconds = std::max<uint32_t>(1, tuning.stall_timeout_s);
	config.monitoring_options = &monitoring;
	config.retry_config.max_retries = tuning.max_retries;
	config.retry_config.backoff_scale_factor_ms = tuning.backoff_scale_ms;
	if (tuning.max_retries == 0) {
		config.retry_config.retry_mode = AWS_S3_RETRY_MODE_NONE;
	}
	client = provider ? aws_s3_client_new(runtime.allocator, &config) : nullptr;
	if (!client) {
		std::string reason = aws_error_name(aws_last_error());
		aws_credentials_provider_release(provider);
		Fail(ErrorCode::S3_CLIENT_ERROR, "Cannot set up the S3 client for " + Describe() + ": " + reason + ".");
	}
}

S3ObjectStore::~S3ObjectStore() {
	// The client shuts down asynchronously; wait, so no CRT thread touches it after we are gone.
	aws_s3_client_release(client);
	{
		std::unique_lock<std::mutex> guard(shutdown->lock);
		shutdown->signal.wait(guard, [&] { return shutdown->done; });
	}
	aws_credentials_provider_release(provider);
}

std::string S3ObjectStore::Describe() const {
	return "s3://" + location.bucket + "/" + location.prefix;
}

ObjectOutcome S3ObjectStore::CheckKey(const std::string &key) const {
	std::string why;
	if (!ValidObjectKey(key, why)) {
		return {ObjectStatus::INVALID, "invalid key '" + key + "': " + why};
	}
	return {};
}

PutResult S3ObjectStore::Put(const PutRequest &request) {
	PutResult result;
	result.outcome = CheckKey(request.key);
	if (!result.outcome.Ok()) {
		return result;
	}
	Request put {"PUT", "PutObject", location.prefix + request.key};
	// The server recomputes this over the bytes it received and refuses the upload on a mismatch, so a
	// body damaged on the way never becomes an object.
	auto sha256 = request.sha256 ? *request.sha256 : Sha256(request.data, request.size);
	put.headers.emplace_back("x-amz-checksum-sha256", Base64(sha256));
	if (request.condition.kind == PutCondition::Kind::IF_NONE_MATCH_ANY) {
		put.headers.emplace_back("If-None-Match", "*");
	} else if (request.condition.kind == PutCondition::Kind::IF_MATCH) {
		put.headers.emplace_back("If-Match", request.condition.etag);
	}
	put.body = request.data;
	put.body_size = request.size;
	auto response = Send(put);
	result.outcome = ClassifyS3Response(response, "PUT", request.key);
	if (result.outcome.Ok()) {
		result.etag = response.Header("etag");
	} else if (result.outcome.status == ObjectStatus::PRECONDITION_FAILED && response.attempts > 1) {
		ResolveRetriedPut(request.key, sha256, result);
	}
	return result;
}

//! A conditional PUT that the CRT had to retry may have been applied by an attempt whose answer was
//! lost, so the retry's 412 can be about our own write. If the object now holds exactly our bytes, it
//! was: report success with its etag, as if the first answer had arrived.
void S3ObjectStore::ResolveRetriedPut(const std::string &key, const Hash256 &sha256, PutResult &result) {
	auto current = Get(key);
	if (current.outcome.Ok() && Sha256(current.data.data(), current.data.size()) == sha256) {
		auto attempts = result.outcome.attempts;
		result.outcome = {};
		result.outcome.attempts = attempts;
		result.etag = current.etag;
	}
}

//! The object's total size from a 206's "Content-Range: bytes a-b/total".
static uint64_t TotalFromContentRange(const std::string &content_range, uint64_t fallback) {
	auto slash = content_range.rfind('/');
	if (slash == std::string::npos || content_range.compare(slash + 1, std::string::npos, "*") == 0) {
		return fallback;
	}
	return std::strtoull(content_range.c_str() + slash + 1, nullptr, 10);
}

GetResult S3ObjectStore::Get(const std::string &key, const std::optional<ByteRange> &range) {
	GetResult result;
	result.outcome = CheckKey(key);
	if (result.outcome.Ok() && range && range->length == 0) {
		result.outcome = {ObjectStatus::INVALID, "GET '" + key + "': an empty range"};
	}
	if (!result.outcome.Ok()) {
		return result;
	}
	Request get {"GET", "GetObject", location.prefix + key};
	if (range) {
		get.headers.emplace_back("Range", "bytes=" + std::to_string(range->offset) + "-" +
		                                      std::to_string(range->offset + range->length - 1));
	}
	auto response = Send(get);
	result.outcome = ClassifyS3Response(response, "GET", key);
	if (!result.outcome.Ok()) {
		return result;
	}
	result.etag = response.Header("etag");
	result.object_size = TotalFromContentRange(response.Header("content-range"), response.body.size());
	result.data = std::move(response.body);
	return result;
}

GetResult S3ObjectStore::GetIfNoneMatch(const std::string &key, const std::string &etag) {
	GetResult result;
	result.outcome = CheckKey(key);
	if (!result.outcome.Ok()) {
		return result;
	}
	Request get {"GET", "GetObject", location.prefix + key};
	if (!etag.empty()) {
		get.headers.emplace_back("If-None-Match", etag);
	}
	auto response = Send(get);
	if (response.http_status == 304) {
		// Not an error although the CRT reports one for any status outside 2xx: the object is unchanged.
		result.outcome.attempts = response.attempts;
		result.not_modified = true;
		result.etag = etag;
		return result;
	}
	result.outcome = ClassifyS3Response(response, "GET", key);
	if (!result.outcome.Ok()) {
		return result;
	}
	result.etag = response.Header("etag");
	result.object_size = response.body.size();
	result.data = std::move(response.body);
	return result;
}

HeadResult S3ObjectStore::Head(const std::string &key) {
	HeadResult result;
	result.outcome = CheckKey(key);
	if (!result.outcome.Ok()) {
		return result;
	}
	auto response = Send({"HEAD", "HeadObject", location.prefix + key});
	result.outcome = ClassifyS3Response(response, "HEAD", key);
	if (result.outcome.Ok()) {
		result.info.key = key;
		result.info.etag = response.Header("etag");
		result.info.size = std::strtoull(response.Header("content-length").c_str(), nullptr, 10);
	}
	return result;
}

ListPage S3ObjectStore::List(const std::string &prefix, const std::string &token, uint32_t max_keys) {
	ListPage page;
	Request list {"GET", "ListObjectsV2", ""};
	// Parameters in the order SigV4's canonical query wants does not matter: the CRT signer sorts them.
	list.query = "list-type=2&max-keys=" + std::to_string(std::max<uint32_t>(1, std::min<uint32_t>(max_keys, 1000))) +
	             "&prefix=" + EncodeParam(location.prefix + prefix);
	if (!token.empty()) {
		list.query += "&continuation-token=" + EncodeParam(token);
	}
	auto response = Send(list);
	page.outcome = ClassifyS3Response(response, "LIST", prefix);
	if (page.outcome.Ok() && !ParseListObjectsV2(response.body, page)) {
		page.outcome = {ObjectStatus::TRANSIENT, "LIST '" + prefix + "': the server sent no readable listing"};
	}
	for (auto &object : page.objects) {
		object.key.erase(0, location.prefix.size()); // the server only returns keys under our prefix
	}
	if (!page.outcome.Ok()) {
		page.objects.clear();
		page.next_token.clear();
	}
	return page;
}

ObjectOutcome S3ObjectStore::Delete(const std::string &key) {
	auto outcome = CheckKey(key);
	if (!outcome.Ok()) {
		return outcome;
	}
	outcome = ClassifyS3Response(Send({"DELETE", "DeleteObject", location.prefix + key}), "DELETE", key);
	// S3 answers 204 whether or not the key existed; a server that says 404 means the same.
	return outcome.status == ObjectStatus::NOT_FOUND ? ObjectOutcome {} : outcome;
}

ObjectOutcome S3ObjectStore::CreateBucket() {
	Request create {"PUT", "CreateBucket", ""};
	// Outside us-east-1, AWS wants the region in the body; a test server on loopback does not care.
	std::string body;
	if (credentials.region != "us-east-1") {
		body = "<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>" +
		       credentials.region + "</LocationConstraint></CreateBucketConfiguration>";
	}
	create.body = body.data();
	create.body_size = body.size();
	auto response = Send(create);
	auto outcome = ClassifyS3Response(response, "CREATE BUCKET", location.bucket);
	if (outcome.status == ObjectStatus::CONFLICT && S3ErrorCode(response.body) == "BucketAlreadyOwnedByYou") {
		return {};
	}
	return outcome;
}

} // namespace differential
