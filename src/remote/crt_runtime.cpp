// CrtRuntime: one event-loop group, host resolver, client bootstrap and TLS context per process.
#include "remote/crt_runtime.hpp"

#include "common/errors.hpp"

#include <aws/common/error.h>
#include <aws/io/channel_bootstrap.h>
#include <aws/io/event_loop.h>
#include <aws/io/host_resolver.h>
#include <aws/io/tls_channel_handler.h>
#include <aws/s3/s3.h>

#include <mutex>

namespace differential {

aws_tls_connection_options *MakeTlsOptions(aws_allocator *allocator, const std::string &ca_file) {
	struct aws_tls_ctx_options ctx_options;
	aws_tls_ctx_options_init_default_client(&ctx_options, allocator);
	bool ok = ca_file.empty() || aws_tls_ctx_options_override_default_trust_store_from_path(
	                                 &ctx_options, nullptr, ca_file.c_str()) == AWS_OP_SUCCESS;
	struct aws_tls_ctx *ctx = ok ? aws_tls_client_ctx_new(allocator, &ctx_options) : nullptr;
	aws_tls_ctx_options_clean_up(&ctx_options);
	if (!ctx) {
		return nullptr;
	}
	auto options = new aws_tls_connection_options();
	aws_tls_connection_options_init_from_ctx(options, ctx);
	aws_tls_ctx_release(ctx); // the connection options hold their own reference
	return options;
}

void FreeTlsOptions(aws_tls_connection_options *options) {
	if (options) {
		aws_tls_connection_options_clean_up(options);
		delete options;
	}
}

static CrtRuntime *Start() {
	auto runtime = new CrtRuntime();
	runtime->allocator = aws_default_allocator();
	aws_s3_library_init(runtime->allocator);
	// Two loops: enough to keep many connections busy (the work is I/O), and this runs inside DuckDB,
	// whose own threads should have the cores.
	struct aws_event_loop_group_options loop_options = {};
	loop_options.loop_count = 2;
	struct aws_event_loop_group *loops = aws_event_loop_group_new(runtime->allocator, &loop_options);
	struct aws_host_resolver_default_options resolver_options = {};
	resolver_options.max_entries = 8;
	resolver_options.el_group = loops;
	struct aws_host_resolver *resolver =
	    loops ? aws_host_resolver_new_default(runtime->allocator, &resolver_options) : nullptr;
	struct aws_client_bootstrap_options bootstrap_options = {};
	bootstrap_options.event_loop_group = loops;
	bootstrap_options.host_resolver = resolver;
	runtime->bootstrap = resolver ? aws_client_bootstrap_new(runtime->allocator, &bootstrap_options) : nullptr;
	if (!runtime->bootstrap) {
		Fail(ErrorCode::S3_CLIENT_ERROR, std::string("Cannot start the S3 client runtime: ") +
		                                     aws_error_name(aws_last_error()) +
		                                     ". Check the process's thread and file-descriptor limits.");
	}
	// The bootstrap holds references to both.
	aws_host_resolver_release(resolver);
	aws_event_loop_group_release(loops);
	return runtime;
}

static std::mutex &RuntimeLock() {
	static std::mutex lock;
	return lock;
}

aws_tls_connection_options *CrtRuntime::DefaultTlsOptions() {
	std::lock_guard<std::mutex> guard(RuntimeLock());
	if (!tls_tried) {
		tls_options = MakeTlsOptions(allocator, "");
		tls_tried = true;
	}
	return tls_options;
}

CrtRuntime &CrtRuntime::Get() {
	static CrtRuntime *runtime = nullptr;
	std::lock_guard<std::mutex> guard(RuntimeLock());
	if (!runtime) {
		runtime = Start(); // a failure throws and leaves it unset, so a later call tries again
	}
	return *runtime;
}

} // namespace differential
