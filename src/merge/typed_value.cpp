// Typed cell values for conflict details and resolution audits.
#include "merge/typed_value.hpp"

namespace differential {

using duckdb::LogicalType;
using duckdb::LogicalTypeId;
using duckdb::Value;

LogicalType TypedValueType() {
	duckdb::child_list_t<LogicalType> fields;
	fields.emplace_back("column_name", LogicalType::VARCHAR);
	fields.emplace_back("sql_type", LogicalType::VARCHAR);
	fields.emplace_back("is_null", LogicalType::BOOLEAN);
	fields.emplace_back("boolean_value", LogicalType::BOOLEAN);
	fields.emplace_back("integer_value", LogicalType::HUGEINT);
	fields.emplace_back("double_value", LogicalType::DOUBLE);
	fields.emplace_back("varchar_value", LogicalType::VARCHAR);
	fields.emplace_back("blob_value", LogicalType::BLOB);
	fields.emplace_back("text_value", LogicalType::VARCHAR);
	return LogicalType::STRUCT(std::move(fields));
}

Value MakeTypedValue(const std::string &column, const Value &value) {
	auto &type = value.type();
	Value boolean(LogicalType::BOOLEAN), integer(LogicalType::HUGEINT), real(LogicalType::DOUBLE),
	    text(LogicalType::VARCHAR), blob(LogicalType::BLOB), display(LogicalType::VARCHAR);
	if (!value.IsNull()) {
		display = Value(value.ToString());
		if (type.IsIntegral()) {
			// A UHUGEINT above the HUGEINT range keeps only its text.
			auto wide = value.DefaultTryCastAs(LogicalType::HUGEINT);
			if (wide) {
				integer = *wide;
			}
		} else if (type.id() == LogicalTypeId::FLOAT || type.id() == LogicalTypeId::DOUBLE) {
			real = value.DefaultCastAs(LogicalType::DOUBLE);
		} else if (type.id() == LogicalTypeId::BOOLEAN) {
			boolean = value;
		} else if (type.id() == LogicalTypeId::VARCHAR) {
			text = value;
		} else if (type.id() == LogicalTypeId::BLOB) {
			blob = value;
		}
	}
	return Value::STRUCT(TypedValueType(), {Value(column), Value(type.ToString()), Value::BOOLEAN(value.IsNull()),
	                                        boolean, integer, real, text, blob, display});
}

Value TypedValueList(const std::vector<std::string> &columns, const std::vector<Value> &values) {
	duckdb::vector<Value> out;
	for (size_t i = 0; i < columns.size(); i++) {
		out.push_back(MakeTypedValue(columns[i], values[i]));
	}
	return Value::LIST(TypedValueType(), std::move(out));
}

} // namespace differential
