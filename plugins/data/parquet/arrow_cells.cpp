#include "arrow_cells.h"

#include <arrow/array/array_dict.h>
#include <arrow/scalar.h>
#include <arrow/type.h>
#include <arrow/util/decimal.h>
#include <arrow/util/float16.h>

#include <cmath>
#include <string_view>

#include "orrery/csv_fields.h"

namespace orrery::data {
namespace {

std::optional<std::string_view> text_at(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::STRING: return static_cast<const arrow::StringArray&>(a).GetView(i);
    case arrow::Type::LARGE_STRING: return static_cast<const arrow::LargeStringArray&>(a).GetView(i);
    case arrow::Type::STRING_VIEW: return static_cast<const arrow::StringViewArray&>(a).GetView(i);
    default: return std::nullopt;
  }
}

// Integer and floating cells as double; nothing for other types.
std::optional<double> plain_number(const arrow::Array& a, int64_t i) {
  switch (a.type_id()) {
    case arrow::Type::BOOL: return static_cast<const arrow::BooleanArray&>(a).Value(i) ? 1.0 : 0.0;
    case arrow::Type::INT8: return static_cast<const arrow::Int8Array&>(a).Value(i);
    case arrow::Type::INT16: return static_cast<const arrow::Int16Array&>(a).Value(i);
    case arrow::Type::INT32: return static_cast<const arrow::Int32Array&>(a).Value(i);
    case arrow::Type::INT64: return static_cast<double>(static_cast<const arrow::Int64Array&>(a).Value(i));
    case arrow::Type::UINT8: return static_cast<const arrow::UInt8Array&>(a).Value(i);
    case arrow::Type::UINT16: return static_cast<const arrow::UInt16Array&>(a).Value(i);
    case arrow::Type::UINT32: return static_cast<const arrow::UInt32Array&>(a).Value(i);
    case arrow::Type::UINT64: return static_cast<double>(static_cast<const arrow::UInt64Array&>(a).Value(i));
    case arrow::Type::HALF_FLOAT:
      return arrow::util::Float16::FromBits(static_cast<const arrow::HalfFloatArray&>(a).Value(i)).ToDouble();
    case arrow::Type::FLOAT: return static_cast<const arrow::FloatArray&>(a).Value(i);
    case arrow::Type::DOUBLE: return static_cast<const arrow::DoubleArray&>(a).Value(i);
    // Decimals (prices, amounts) as the nearest double of their value at the column's scale.
    case arrow::Type::DECIMAL128: {
      const auto& d = static_cast<const arrow::Decimal128Array&>(a);
      return arrow::Decimal128(d.GetValue(i)).ToDouble(static_cast<const arrow::Decimal128Type&>(*a.type()).scale());
    }
    case arrow::Type::DECIMAL256: {
      const auto& d = static_cast<const arrow::Decimal256Array&>(a);
      return arrow::Decimal256(d.GetValue(i)).ToDouble(static_cast<const arrow::Decimal256Type&>(*a.type()).scale());
    }
    default: return std::nullopt;
  }
}

}  // namespace

bool numeric_type(const arrow::DataType& type) {
  return arrow::is_integer(type.id()) || arrow::is_floating(type.id()) || type.id() == arrow::Type::BOOL ||
         type.id() == arrow::Type::DECIMAL128 || type.id() == arrow::Type::DECIMAL256;
}

Cell number_at(const arrow::Array& a, int64_t i, double& out) {
  if (a.IsNull(i)) return Cell::missing;
  if (auto v = plain_number(a, i)) {
    out = *v;
    return std::isnan(out) ? Cell::missing : std::isfinite(out) ? Cell::ok : Cell::bad;
  }
  if (auto t = text_at(a, i)) {  // text cells by CSV's rule (csv_fields.h)
    const CsvNumber n = read_csv_number(csv_trim(*t));
    out = n.value;
    return n.kind == CsvNumber::Kind::missing ? Cell::missing : n.kind == CsvNumber::Kind::number ? Cell::ok : Cell::bad;
  }
  return Cell::bad;
}

Cell seconds_at(const arrow::Array& a, int64_t i, TimeFormat format, double& out) {
  if (a.IsNull(i)) return Cell::missing;
  switch (a.type_id()) {
    case arrow::Type::TIMESTAMP: {
      const auto& type = static_cast<const arrow::TimestampType&>(*a.type());
      const double per_second = type.unit() == arrow::TimeUnit::SECOND ? 1 : type.unit() == arrow::TimeUnit::MILLI ? 1e3
                              : type.unit() == arrow::TimeUnit::MICRO ? 1e6 : 1e9;
      out = static_cast<double>(static_cast<const arrow::TimestampArray&>(a).Value(i)) / per_second;
      return in_time_range(out) ? Cell::ok : Cell::bad;
    }
    case arrow::Type::DATE32:
      out = static_cast<const arrow::Date32Array&>(a).Value(i) * 86400.0;
      return in_time_range(out) ? Cell::ok : Cell::bad;
    case arrow::Type::DATE64:
      out = static_cast<double>(static_cast<const arrow::Date64Array&>(a).Value(i)) / 1e3;
      return in_time_range(out) ? Cell::ok : Cell::bad;
    default: break;
  }
  if (auto t = text_at(a, i)) {
    auto v = parse_timestamp(*t, format);
    if (!v) return Cell::bad;
    out = *v;
    return Cell::ok;
  }
  if (auto v = plain_number(a, i); v && format != TimeFormat::iso) {
    if (!std::isfinite(*v)) return Cell::bad;
    if (format == TimeFormat::unix_seconds) {
      out = *v;
      return in_time_range(out) ? Cell::ok : Cell::bad;
    }
    const auto parsed = parse_timestamp(std::to_string(*v), format);  // R's years: the rules of text
    if (!parsed) return Cell::bad;
    out = *parsed;
    return Cell::ok;
  }
  return Cell::bad;
}

std::string id_at(const arrow::Array& a, int64_t i) {
  if (a.IsNull(i)) return "";
  if (a.type_id() == arrow::Type::DICTIONARY) {
    const auto& d = static_cast<const arrow::DictionaryArray&>(a);
    return id_at(*d.dictionary(), d.GetValueIndex(i));
  }
  if (auto t = text_at(a, i)) return std::string(*t);
  if (arrow::is_integer(a.type_id())) {
    auto v = a.GetScalar(i);
    return v.ok() ? (*v)->ToString() : "";
  }
  return cell_text(a, i);
}

std::string category_at(const arrow::Array& a, int64_t i) {
  // A floating NaN is missing, as number_at reads it; other cells by their text.
  if (!a.IsNull(i) && arrow::is_floating(a.type_id())) {
    const auto v = plain_number(a, i);
    if (v && std::isnan(*v)) return "";
  }
  return std::string(csv_trim(id_at(a, i)));
}

std::string cell_text(const arrow::Array& a, int64_t i) {
  if (auto t = text_at(a, i)) return std::string(*t);
  auto v = a.GetScalar(i);
  return v.ok() ? (*v)->ToString() : "?";
}

}  // namespace orrery::data
