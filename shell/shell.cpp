// A small SQL shell over DuckDB's C++ API, built into build/release/duckdb against the same DuckDB library as the
// extension. The PyPI sdist ships no sources for DuckDB's own shell (tools/shell), so this stands in for it: same
// spelling for the options used here (-unsigned, -c, -cmd, -csv, -box, -bail, -version), statements end with ';'.
#include "duckdb.hpp"

#include <algorithm>
#include <cctype>
#include <iostream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using duckdb::idx_t;

enum class Mode { BOX, CSV };

struct Shell {
	duckdb::unique_ptr<duckdb::DuckDB> database;
	duckdb::unique_ptr<duckdb::Connection> connection;
	Mode mode = Mode::BOX;
	bool bail = false;
	bool interactive = false;
	//! Whether a statement failed: a script (stdin that is not a terminal, -c, -cmd) then exits with 1.
	bool failed = false;
	bool quit = false;
};

// Display width of UTF-8 text in code points: continuation bytes take no column.
size_t Width(const std::string &text) {
	size_t width = 0;
	for (unsigned char c : text) {
		width += (c & 0xC0) != 0x80;
	}
	return width;
}

std::string Pad(const std::string &text, size_t width, bool right) {
	std::string padding(width - Width(text), ' ');
	return right ? padding + text : text + padding;
}

std::string CsvField(const std::string &text) {
	if (text.find_first_of(",\"\n\r") == std::string::npos) {
		return text;
	}
	std::string quoted = "\"";
	for (char c : text) {
		quoted += c;
		if (c == '"') {
			quoted += '"';
		}
	}
	return quoted + "\"";
}

// Values are shown as DuckDB casts them to VARCHAR, as DuckDB's shell shows them; numbers align right.
void Render(Shell &shell, duckdb::QueryResult &result) {
	idx_t columns = result.ColumnCount();
	std::vector<std::string> names = duckdb::IdentifiersToStrings(result.GetNames());
	std::vector<bool> numeric;
	for (auto &type : result.GetTypes()) {
		numeric.push_back(type.IsNumeric());
	}
	std::vector<std::vector<std::string>> cells;
	std::vector<std::vector<bool>> nulls;
	while (auto chunk = result.Fetch()) {
		if (chunk->size() == 0) {
			break;
		}
		for (idx_t row = 0; row < chunk->size(); row++) {
			cells.emplace_back(columns);
			nulls.emplace_back(columns);
			for (idx_t col = 0; col < columns; col++) {
				auto value = chunk->GetValue(col, row);
				nulls.back()[col] = value.IsNull();
				if (!value.IsNull()) {
					cells.back()[col] = value.ToString();
				}
			}
		}
	}
	idx_t rows = cells.size();
	if (shell.mode == Mode::CSV) {
		for (idx_t col = 0; col < columns; col++) {
			std::cout << (col ? "," : "") << CsvField(names[col]);
		}
		std::cout << "\n";
		for (idx_t row = 0; row < rows; row++) {
			for (idx_t col = 0; col < columns; col++) {
				std::cout << (col ? "," : "") << (nulls[row][col] ? "" : CsvField(cells[row][col]));
			}
			std::cout << "\n";
		}
		return;
	}
	std::vector<size_t> widths(columns);
	for (idx_t col = 0; col < columns; col++) {
		widths[col] = Width(names[col]);
		for (idx_t row = 0; row < rows; row++) {
			if (nulls[row][col]) {
				cells[row][col] = "NULL";
			}
			widths[col] = std::max(widths[col], Width(cells[row][col]));
		}
	}
	auto line = [&](const char *left, const char *middle, const char *right) {
		std::string text = left;
		for (idx_t col = 0; col < columns; col++) {
			for (size_t i = 0; i < widths[col] + 2; i++) {
				text += "─";
			}
			text += col + 1 < columns ? middle : right;
		}
		std::cout << text << "\n";
	};
	line("┌", "┬", "┐");
	std::string header = "│";
	for (idx_t col = 0; col < columns; col++) {
		header += " " + Pad(names[col], widths[col], false) + " │";
	}
	std::cout << header << "\n";
	line("├", "┼", "┤");
	for (idx_t row = 0; row < rows; row++) {
		std::string text = "│";
		for (idx_t col = 0; col < columns; col++) {
			bool right = numeric[col] && !nulls[row][col];
			text += " " + Pad(cells[row][col], widths[col], right) + " │";
		}
		std::cout << text << "\n";
	}
	line("└", "┴", "┘");
}

void ReportError(Shell &shell, const std::string &message) {
	std::cout.flush();
	std::cerr << message << std::endl;
	shell.failed = true;
	if (shell.bail) {
		shell.quit = true;
	}
}

// Runs every statement of a script in order and prints the results of those that return rows, as DuckDB's shell
// does; an error stops the rest of this script (and, with -bail, the shell).
void RunSql(Shell &shell, const std::string &sql) {
	try {
		for (auto &statement : shell.connection->ExtractStatements(sql)) {
			if (shell.quit) {
				break;
			}
			auto result = shell.connection->Query(std::move(statement));
			if (result->HasError()) {
				ReportError(shell, result->GetError());
				break;
			}
			if (result->GetStatementProperties().return_type == duckdb::StatementReturnType::QUERY_RESULT) {
				Render(shell, *result);
			}
		}
	} catch (std::exception &ex) {
		ReportError(shell, duckdb::ErrorData(ex).Message());
	}
	std::cout.flush();
}

void DotCommand(Shell &shell, const std::string &line) {
	std::string command = line.substr(0, line.find_first_of(" \t"));
	std::string argument = command.size() < line.size() ? line.substr(command.size() + 1) : "";
	while (!argument.empty() && std::isspace(static_cast<unsigned char>(argument.back()))) {
		argument.pop_back();
	}
	if (command == ".quit" || command == ".exit") {
		shell.quit = true;
	} else if (command == ".mode" && (argument == "csv" || argument == "box")) {
		shell.mode = argument == "csv" ? Mode::CSV : Mode::BOX;
	} else if (command == ".help") {
		std::cout << ".mode box|csv   how results are printed\n.quit           leave the shell\n";
	} else {
		ReportError(shell, "Unknown command or invalid arguments: " + line + " (try .help)");
	}
}

// Reads statements until end of input: a statement runs once a line ends with ';' (a dot command at the start of a
// statement runs at once).
void ReadLoop(Shell &shell) {
	bool interactive = shell.interactive;
	std::string buffer;
	std::string line;
	while (!shell.quit) {
		if (interactive) {
			std::cout << (buffer.empty() ? "D " : "· ") << std::flush;
		}
		if (!std::getline(std::cin, line)) {
			break;
		}
		if (buffer.empty() && !line.empty() && line[0] == '.') {
			DotCommand(shell, line);
			continue;
		}
		buffer += line + "\n";
		auto end = buffer.find_last_not_of(" \t\r\n");
		if (end != std::string::npos && buffer[end] == ';') {
			RunSql(shell, buffer);
			buffer.clear();
		}
	}
	if (buffer.find_first_not_of(" \t\r\n") != std::string::npos && !shell.quit) {
		RunSql(shell, buffer);
	}
	if (interactive) {
		std::cout << std::endl;
	}
}

int Usage(const char *program) {
	std::cerr << "Usage: " << program << " [OPTIONS] [FILENAME]\n"
	          << "  FILENAME      database file (default: an in-memory database)\n"
	          << "  -unsigned     allow loading unsigned extensions\n"
	          << "  -cmd SQL      run SQL before reading standard input (repeatable)\n"
	          << "  -c SQL        run SQL and exit\n"
	          << "  -csv | -box   output mode (default: box)\n"
	          << "  -bail         stop at the first error\n"
	          << "  -version      print DuckDB's version and exit\n";
	return 1;
}

} // namespace

int main(int argc, char **argv) {
	Shell shell;
	std::string path;
	std::vector<std::string> commands;
	std::string command_and_exit;
	bool has_command_and_exit = false;
	bool unsigned_extensions = false;
	for (int i = 1; i < argc; i++) {
		std::string option = argv[i];
		// DuckDB's shell accepts both -option and --option.
		if (option.size() > 2 && option[0] == '-' && option[1] == '-') {
			option = option.substr(1);
		}
		bool has_value = i + 1 < argc;
		if (option == "-unsigned") {
			unsigned_extensions = true;
		} else if (option == "-csv") {
			shell.mode = Mode::CSV;
		} else if (option == "-box") {
			shell.mode = Mode::BOX;
		} else if (option == "-bail") {
			shell.bail = true;
		} else if (option == "-version") {
			std::cout << duckdb::DuckDB::LibraryVersion() << std::endl;
			return 0;
		} else if (option == "-cmd" && has_value) {
			commands.emplace_back(argv[++i]);
		} else if (option == "-c" && has_value) {
			command_and_exit = argv[++i];
			has_command_and_exit = true;
		} else if (option == "-help" || option == "-h") {
			Usage(argv[0]);
			return 0;
		} else if (option[0] != '-' && path.empty()) {
			path = option;
		} else {
			std::cerr << argv[0] << ": unknown option or missing value: " << argv[i] << "\n";
			return Usage(argv[0]);
		}
	}

	try {
		duckdb::DBConfig config;
		if (unsigned_extensions) {
			config.SetOptionByName("allow_unsigned_extensions", duckdb::Value::BOOLEAN(true));
		}
		shell.database = duckdb::make_uniq<duckdb::DuckDB>(path.empty() ? nullptr : path.c_str(), &config);
		shell.connection = duckdb::make_uniq<duckdb::Connection>(*shell.database);
	} catch (std::exception &ex) {
		std::cerr << "Error: unable to open database \"" << path << "\": " << duckdb::ErrorData(ex).Message() << "\n";
		return 1;
	}

	for (auto &sql : commands) {
		if (!shell.quit) {
			RunSql(shell, sql);
		}
	}
	if (has_command_and_exit) {
		if (!shell.quit) {
			RunSql(shell, command_and_exit);
		}
	} else if (!shell.quit) {
		shell.interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
		if (shell.interactive) {
			std::cout
			    << "DuckDB " << duckdb::DuckDB::LibraryVersion()
			    << " (differential's shell over DuckDB's C++ API; '.help' for commands, '.quit' or Ctrl-D to leave)"
			    << std::endl;
		}
		ReadLoop(shell);
	}
	shell.connection.reset();
	shell.database.reset();
	return shell.failed && !shell.interactive ? 1 : 0;
}
