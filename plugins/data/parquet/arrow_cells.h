#pragma once
// Single cells of Arrow arrays as the layout needs them: numbers (NaN when null), times in
// seconds since the epoch, and ids as text. Arrow columns are typed, so what CSV learns by
// parsing text is mostly a type switch here; text columns are parsed like CSV fields.
#include <arrow/array.h>

#include <cstdint>
#include <optional>
#include <string>

#include "orrery/timestamps.h"

namespace orrery::data {

// Whether a column of this type holds numbers (so that default value columns skip the rest).
bool numeric_type(const arrow::DataType& type);

enum class Cell { ok, missing, bad };

// A value; `missing` for null (and NA/NaN text), `bad` when it is not a number.
Cell number_at(const arrow::Array& a, int64_t i, double& out);

// A time: timestamp (any unit), date32 and date64 columns directly; text as in CSV (`format`);
// integer and float columns as unix seconds or fractional years when `format` says so.
Cell seconds_at(const arrow::Array& a, int64_t i, TimeFormat format, double& out);

// An id as text: strings, integers, and dictionary-encoded (categorical) columns of them.
std::string id_at(const arrow::Array& a, int64_t i);

// A categorical covariate's cell as text, trimmed as a CSV field is: strings, integers and
// dictionary-encoded columns of them, other types by their value's text; "" (missing) for null
// and a floating NaN.
std::string category_at(const arrow::Array& a, int64_t i);

// The cell as text for messages.
std::string cell_text(const arrow::Array& a, int64_t i);

}  // namespace orrery::data
