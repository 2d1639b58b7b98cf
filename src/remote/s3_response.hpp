// An S3 response as the CRT delivered it, and what it means: the outcome, the error code, a listing.
#pragma once

#include "storage/object_store.hpp"

#include <string>
#include <utility>
#include <vector>

namespace differential {

struct S3Response {
	int http_status = 0;   //! 0 when no response arrived (connection, DNS, TLS or signing failure)
	int error_code = 0;    //! the CRT's error code; 0 is success
	uint32_t attempts = 0; //! HTTP requests the CRT made for it (retries included)
	std::vector<std::pair<std::string, std::string>> headers; //! names in lower case
	std::string body;                                         //! the body, or on failure the server's error document

	void SetHeader(std::string name, std::string value);
	//! The header's value, or "" when absent.
	std::string Header(const std::string &lower_case_name) const;
};

//! The outcome of `operation` on `what` (a key, for the detail). The status comes from the HTTP status
//! and the CRT error code, plus the S3 error code for the few 400s that are really about credentials.
ObjectOutcome ClassifyS3Response(const S3Response &response, const std::string &operation, const std::string &what);

//! The <Code> of an S3 error document ("PreconditionFailed"), or "" when there is none.
std::string S3ErrorCode(const std::string &document);

//! Parses a ListObjectsV2 result into `page` (keys still carry the location's prefix). False when the
//! document is not one.
bool ParseListObjectsV2(const std::string &document, ListPage &page);

} // namespace differential
