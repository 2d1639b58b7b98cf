// The process-wide AWS CRT state that every S3 client shares: library init, event loops, DNS, TLS.
#pragma once

#include <string>

struct aws_allocator;
struct aws_client_bootstrap;
struct aws_tls_connection_options;

namespace differential {

//! Created on first use and kept for the life of the process: the CRT's event-loop threads and its
//! library state are process-wide, and tearing them down while another client may still run is the
//! riskier choice. Only the S3 code in remote/ includes the CRT's headers.
struct CrtRuntime {
	aws_allocator *allocator = nullptr;
	aws_client_bootstrap *bootstrap = nullptr;

	//! Throws a DifferentialError when the CRT cannot be started (no threads, no DNS resolver).
	static CrtRuntime &Get();
	//! The TLS options trusting the system's CAs, made on the first https client: reading and parsing the CA
	//! store is most of what starting the CRT costs a fresh process, and a plain-http endpoint never needs it.
	//! Null when they cannot be made (no usable CA store); https clients then refuse to start.
	aws_tls_connection_options *DefaultTlsOptions();

private:
	bool tls_tried = false;
	aws_tls_connection_options *tls_options = nullptr;
};

//! New TLS connection options that trust the CAs in `ca_file` (PEM) instead of the system's, or the
//! system's when it is empty; null when they cannot be made. Free with FreeTlsOptions.
aws_tls_connection_options *MakeTlsOptions(aws_allocator *allocator, const std::string &ca_file);
void FreeTlsOptions(aws_tls_connection_options *options);

} // namespace differential
