// An ObjectStore over S3 (any server that speaks it) through the AWS Common Runtime: the CRT signs
// (SigV4), sends, retries and resolves credentials; this file decides the requests and their outcomes.
#pragma once

#include "storage/object_store.hpp"

#include <memory>
#include <string>

struct aws_s3_client;
struct aws_credentials_provider;

namespace differential {

struct S3Response;

enum class S3UrlStyle { VIRTUAL_HOST, PATH };

//! How to reach and sign for a bucket; httpfs's `TYPE s3` secret carries the same fields. It lives in
//! memory only: nothing here is ever logged, written, or put in an error message or an outcome's detail.
struct S3Credentials {
	//! Empty: use the CRT's default provider chain (environment, shared config and credentials files with
	//! AWS_PROFILE, STS web identity, ECS, EC2 instance metadata).
	std::string key_id;
	std::string secret;
	std::string session_token;
	std::string region = "us-east-1";
	//! host[:port]; empty means AWS (`s3.<region>.amazonaws.com`).
	std::string endpoint;
	S3UrlStyle url_style = S3UrlStyle::VIRTUAL_HOST;
	//! false sends plain HTTP: for a test server on loopback, never for AWS.
	bool use_ssl = true;

	bool UseProviderChain() const {
		return key_id.empty();
	}
};

//! Where the objects go: keys given to the store are relative to `prefix` inside `bucket`.
struct S3Location {
	std::string bucket;
	std::string prefix; //! "" or ending in '/'
};

struct S3Tuning {
	uint32_t max_retries = 5;           //! per request, by the CRT's standard retry strategy; 0: none
	uint32_t backoff_scale_ms = 0;      //! first backoff step; 0: the CRT's default (500 ms)
	uint32_t connect_timeout_ms = 3000; //! per connection attempt
	//! A connection that moves no byte for this long while a request is on it is dropped (and the
	//! request retried): a hung server must not hang a query. The CRT's default is 30 s.
	uint32_t stall_timeout_s = 30;
	//! A PEM file of CAs to trust instead of the system's (a private endpoint, a test server).
	std::string ca_file;
};

//! Where one request goes, as built from the credentials' endpoint and url style (exposed for tests).
struct S3Target {
	std::string scheme;    //! "https" or "http"
	std::string authority; //! the Host header: host[:port]
	std::string path;      //! URI-encoded, starting with '/'
};
S3Target MakeS3Target(const S3Credentials &credentials, const std::string &bucket, const std::string &full_key);

class S3ObjectStore : public ObjectStore {
public:
	//! Sets up the CRT client; sends nothing. Throws a DifferentialError when the CRT cannot be set up.
	S3ObjectStore(S3Location location, S3Credentials credentials, S3Tuning tuning = {});
	~S3ObjectStore() override;
	S3ObjectStore(const S3ObjectStore &) = delete;
	S3ObjectStore &operator=(const S3ObjectStore &) = delete;

	PutResult Put(const PutRequest &request) override;
	GetResult Get(const std::string &key, const std::optional<ByteRange> &range = std::nullopt) override;
	GetResult GetIfNoneMatch(const std::string &key, const std::string &etag) override;
	HeadResult Head(const std::string &key) override;
	ListPage List(const std::string &prefix, const std::string &token = "", uint32_t max_keys = 1000) override;
	ObjectOutcome Delete(const std::string &key) override;
	std::string Describe() const override;

	//! Creates the bucket (for tests and first-time setup); an existing bucket of ours is OK.
	ObjectOutcome CreateBucket();

	struct Request;
	struct ClientShutdown;

private:
	S3Response Send(const Request &request) const;
	ObjectOutcome CheckKey(const std::string &key) const;
	void ResolveRetriedPut(const std::string &key, const Hash256 &sha256, PutResult &result);

	S3Location location;
	S3Credentials credentials;
	S3Tuning tuning;
	aws_credentials_provider *provider = nullptr;
	aws_s3_client *client = nullptr;
	std::unique_ptr<ClientShutdown> shutdown; //! signalled by the CRT when the client is gone
};

} // namespace differential
