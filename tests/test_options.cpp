#include <catch2/catch.hpp>

#include <stdexcept>

#include "orrery/error.h"
#include "orrery/options.h"

using orrery::Json;
using orrery::OptionSchema;

static OptionSchema schema() {
  return OptionSchema{}
      .integer("d_model", 128, "width", 8, 4096)
      .number("lr", 1e-3, "learning rate", 0.0)
      .boolean("bias", true, "use biases")
      .string("kind", "a", "variant", {"a", "b"})
      .number_list("levels", {0.1, 0.5, 0.9}, "levels")
      .number("alpha", 1.0, "an exponent whose default changed", 0.5, 1.0)
      .default_was(0.5);
}

TEST_CASE("validation fills defaults and keeps given values") {
  Json out = schema().validate({{"d_model", 64}}, "architecture plugin 'x'");
  CHECK(out["d_model"] == 64);
  CHECK(out["lr"] == 1e-3);
  CHECK(out["bias"] == true);
  CHECK(out["levels"].size() == 3);
}

TEST_CASE("an integral float is accepted as an integer") {
  CHECK(schema().validate({{"d_model", 64.0}}, "p")["d_model"].is_number_integer());
}

TEST_CASE("unknown options name the option, the plugin and a suggestion") {
  try {
    schema().validate({{"d_modle", 64}}, "architecture plugin 'toto2'");
    FAIL("no error");
  } catch (const orrery::Error& e) {
    std::string msg = e.what();
    CHECK(msg.find("unknown option 'd_modle' for architecture plugin 'toto2'") != std::string::npos);
    CHECK(msg.find("did you mean 'd_model'") != std::string::npos);
  }
}

TEST_CASE("wrong types and ranges are refused with the option's name") {
  CHECK_THROWS_WITH(schema().validate({{"d_model", 12.5}}, "p"), Catch::Contains("'d_model'") && Catch::Contains("integer"));
  CHECK_THROWS_WITH(schema().validate({{"d_model", 4}}, "p"), Catch::Contains(">= 8"));
  CHECK_THROWS_WITH(schema().validate({{"bias", 1}}, "p"), Catch::Contains("true or false"));
  CHECK_THROWS_WITH(schema().validate({{"kind", "c"}}, "p"), Catch::Contains("one of a, b"));
  CHECK_THROWS_WITH(schema().validate({{"levels", Json::array()}}, "p"), Catch::Contains("non-empty"));
}

TEST_CASE("a schema survives its JSON round trip") {
  OptionSchema s = OptionSchema::from_json(schema().to_json());
  REQUIRE(s.specs().size() == 6);
  CHECK(s.find("d_model")->min == 8);
  CHECK(s.find("kind")->choices.size() == 2);
  CHECK(!s.find("lr")->default_was);
  REQUIRE(s.find("alpha")->default_was);
  CHECK(*s.find("alpha")->default_was == 0.5);
}

TEST_CASE("an option whose default changed validates to its new default") {
  CHECK(schema().validate(Json::object(), "p")["alpha"] == 1.0);
  CHECK_THROWS_AS(OptionSchema{}.default_was(1), std::logic_error);  // no option to attach it to
}
