// Handing this thread's log sink on to the threads a call starts (they open a LogScope with it), so their
// events reach the same DuckDB logger; kept apart from logging.hpp, which nearly every file includes.
#pragma once

#include "common/logging.hpp"

namespace differential {

//! The sink this thread reports to (nullptr: none). The sink must be safe to call from several threads
//! (DuckDB's client loggers are).
LogSink *CurrentLogSink();

} // namespace differential
