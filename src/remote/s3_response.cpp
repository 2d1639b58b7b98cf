// Classification of S3 responses and the reading of S3's XML documents (with the CRT's XML parser).
#include "remote/s3_response.hpp"

#include <algorithm>
#include <aws/auth/auth.h>
#include <aws/common/error.h>
#include <aws/common/xml_parser.h>
#include <cctype>
#include <cstdlib>

namespace differential {

void S3Response::SetHeader(std::string name, std::string value) {
	std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
	headers.emplace_back(std::move(name), std::move(value));
}

std::string S3Response::Header(const std::string &lower_case_name) const {
	for (auto &header : headers) {
		if (header.first == lower_case_name) {
			return header.second;
		}
	}
	return "";
}

static bool IsAuthError(int error_code) {
	auto code = static_cast<unsigned>(error_code);
	return code >= AWS_ERROR_ENUM_BEGIN_RANGE(AWS_C_AUTH_PACKAGE_ID) &&
	       code < AWS_ERROR_ENUM_BEGIN_RANGE(AWS_C_AUTH_PACKAGE_ID + 1);
}

//! S3 error codes that mean "these credentials are not accepted" whatever the status says: AWS sends a
//! 400 for a bad session token, versitygw a 404 for an unknown access key.
static bool IsCredentialCode(const std::string &s3_code) {
	for (auto code : {"InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "InvalidToken",
	                  "TokenRefreshRequired", "XAdminUserNotFound"}) {
		if (s3_code == code) {
			return true;
		}
	}
	return false;
}

static ObjectStatus StatusOfHttp(int http_status, const std::string &s3_code) {
	if (IsCredentialCode(s3_code)) {
		return ObjectStatus::DENIED;
	}
	switch (http_status) {
	case 404:
		return ObjectStatus::NOT_FOUND;
	case 412:
		return ObjectStatus::PRECONDITION_FAILED;
	case 409:
		return ObjectStatus::CONFLICT;
	case 401:
	case 403:
		return ObjectStatus::DENIED;
	case 408:
	case 429:
		return ObjectStatus::TRANSIENT;
	default:
		return http_status >= 500 ? ObjectStatus::TRANSIENT : ObjectStatus::INVALID;
	}
}

static ObjectOutcome Classify(const S3Response &response, const std::string &operation, const std::string &what) {
	bool http_ok = response.http_status >= 200 && response.http_status < 300;
	if (response.error_code == 0 && http_ok) {
		return {};
	}
	std::string prefix = operation + " '" + what + "': ";
	if (response.http_status == 0 || http_ok) {
		// No HTTP answer to judge (or a 200 the CRT refused): the request never completed.
		auto status = IsAuthError(response.error_code) ? ObjectStatus::DENIED : ObjectStatus::TRANSIENT;
		return {status, prefix + aws_error_name(response.error_code)};
	}
	// Only the status line and the S3 error code go into the detail: never headers, never the request.
	std::string code = S3ErrorCode(response.body);
	return {StatusOfHttp(response.http_status, code),
	        prefix + "HTTP " + std::to_string(response.http_status) + (code.empty() ? "" : " " + code)};
}

ObjectOutcome ClassifyS3Response(const S3Response &response, const std::string &operation, const std::string &what) {
	auto outcome = Classify(response, operation, what);
	outcome.attempts = response.attempts;
	return outcome;
}

namespace {

//! Collects the text of the direct children of one node that the caller asks for.
struct ChildText {
	struct aws_allocator *allocator;
	std::vector<std::pair<std::string, std::string>> wanted; //! name → text (filled in)
};

int OnChild(struct aws_xml_node *node, void *user) {
	auto state = static_cast<ChildText *>(user);
	auto name = aws_xml_node_get_name(node);
	for (auto &entry : state->wanted) {
		if (aws_byte_cursor_eq_c_str(&name, entry.first.c_str())) {
			struct aws_byte_buf text;
			aws_byte_buf_init(&text, state->allocator, 64);
			int rc = aws_xml_node_as_body_unescaped(state->allocator, node, &text);
			entry.second.assign(reinterpret_cast<const char *>(text.buffer), text.len);
			aws_byte_buf_clean_up(&text);
			return rc;
		}
	}
	return AWS_OP_SUCCESS;
}

std::string Text(const ChildText &state, const char *name) {
	for (auto &entry : state.wanted) {
		if (entry.first == name) {
			return entry.second;
		}
	}
	return "";
}

struct ListState {
	struct aws_allocator *allocator;
	ListPage *page;
	bool is_list_result = false;
	bool truncated = false;
};

int OnListChild(struct aws_xml_node *node, void *user) {
	auto state = static_cast<ListState *>(user);
	auto name = aws_xml_node_get_name(node);
	if (aws_byte_cursor_eq_c_str(&name, "Contents")) {
		ChildText object {state->allocator, {{"Key", ""}, {"ETag", ""}, {"Size", ""}}};
		if (aws_xml_node_traverse(node, OnChild, &object) != AWS_OP_SUCCESS) {
			return AWS_OP_ERR;
		}
		ObjectInfo info;
		info.key = Text(object, "Key");
		info.etag = Text(object, "ETag");
		info.size = std::strtoull(Text(object, "Size").c_str(), nullptr, 10);
		state->page->objects.push_back(std::move(info));
		return AWS_OP_SUCCESS;
	}
	ChildText scalar {state->allocator, {{"IsTruncated", ""}, {"NextContinuationToken", ""}}};
	if (OnChild(node, &scalar) != AWS_OP_SUCCESS) {
		return AWS_OP_ERR;
	}
	if (Text(scalar, "IsTruncated") == "true") {
		state->truncated = true;
	}
	if (!Text(scalar, "NextContinuationToken").empty()) {
		state->page->next_token = Text(scalar, "NextContinuationToken");
	}
	return AWS_OP_SUCCESS;
}

int OnListRoot(struct aws_xml_node *node, void *user) {
	auto state = static_cast<ListState *>(user);
	auto name = aws_xml_node_get_name(node);
	state->is_list_result = aws_byte_cursor_eq_c_str(&name, "ListBucketResult");
	return state->is_list_result ? aws_xml_node_traverse(node, OnListChild, state) : AWS_OP_SUCCESS;
}

int OnErrorRoot(struct aws_xml_node *node, void *user) {
	auto name = aws_xml_node_get_name(node);
	return aws_byte_cursor_eq_c_str(&name, "Error") ? aws_xml_node_traverse(node, OnChild, user) : AWS_OP_SUCCESS;
}

} // namespace

std::string S3ErrorCode(const std::string &document) {
	if (document.empty()) {
		return "";
	}
	ChildText state {aws_default_allocator(), {{"Code", ""}}};
	struct aws_xml_parser_options options = {};
	options.doc = aws_byte_cursor_from_array(document.data(), document.size());
	options.on_root_encountered = OnErrorRoot;
	options.user_data = &state;
	if (aws_xml_parse(aws_default_allocator(), &options) != AWS_OP_SUCCESS) {
		return "";
	}
	return Text(state, "Code");
}

bool ParseListObjectsV2(const std::string &document, ListPage &page) {
	ListState state {aws_default_allocator(), &page};
	struct aws_xml_parser_options options = {};
	options.doc = aws_byte_cursor_from_array(document.data(), document.size());
	options.on_root_encountered = OnListRoot;
	options.user_data = &state;
	if (aws_xml_parse(aws_default_allocator(), &options) != AWS_OP_SUCCESS || !state.is_list_result) {
		return false;
	}
	if (!state.truncated) {
		page.next_token.clear(); // some servers send a token on the last page too
	}
	return !(state.truncated && page.next_token.empty());
}

} // namespace differential
