// Global functions chat templates call: jinja2's range/dict/namespace and
// the ones HF transformers adds (raise_exception, strftime_now).
#include <ctime>

#include "text/jinja/builtins.h"

namespace llmesh::text::jinja {
namespace {

Value global_range(const CallArgs& args) {
  if (args.positional.empty() || args.positional.size() > 3) throw RuntimeError("range expected 1 to 3 arguments");
  for (const Value& arg : args.positional)
    if (!arg.is_number() || arg.is_float()) throw RuntimeError("range() arguments must be integers");
  int64_t start = 0, stop, step = 1;
  if (args.positional.size() == 1) {
    stop = args.positional[0].as_int();
  } else {
    start = args.positional[0].as_int();
    stop = args.positional[1].as_int();
    if (args.positional.size() == 3) step = args.positional[2].as_int();
  }
  if (step == 0) throw RuntimeError("range() arg 3 must not be zero");
  constexpr int64_t kMaxRangeItems = 100000;  // jinja2's sandbox limit (MAX_RANGE)
  ValueList out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    if (static_cast<int64_t>(out.size()) >= kMaxRangeItems) throw RuntimeError("range too big");
    out.emplace_back(i);
    if (__builtin_add_overflow(i, step, &i)) break;  // past INT64_MAX / INT64_MIN: past stop too
  }
  return Value(std::move(out));
}

ValueDict dict_from_args(const CallArgs& args, const char* what) {
  ValueDict dict;
  if (args.positional.size() > 1) throw RuntimeError(std::string(what) + " expected at most 1 positional argument");
  if (!args.positional.empty()) {
    const Value& initial = args.positional[0];
    if (initial.is_dict()) {
      for (const auto& [key, value] : initial.as_dict().entries()) dict.set(key, value);
    } else if (initial.is_list()) {
      for (const Value& pair : initial.as_list()) {
        if (!pair.is_list() || pair.as_list().size() != 2 || !pair.as_list()[0].is_string())
          throw RuntimeError(std::string(what) + ": sequence items must be (str, value) pairs");
        dict.set(pair.as_list()[0].as_string(), pair.as_list()[1]);
      }
    } else {
      throw RuntimeError(std::string(what) + ": cannot convert " + initial.type_name());
    }
  }
  for (const auto& [key, value] : args.keyword) dict.set(key, value);
  return dict;
}

Value global_raise_exception(const CallArgs& args) {
  throw RuntimeError(args.positional.empty() ? "raise_exception called" : args.positional[0].str());
}

// HF: datetime.now().strftime(format).
Value global_strftime_now(const CallArgs& args) {
  if (args.positional.empty() || !args.positional[0].is_string()) throw RuntimeError("strftime_now needs a format string");
  std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buffer[256];
  size_t size = std::strftime(buffer, sizeof(buffer), args.positional[0].as_string().c_str(), &local);
  return Value(std::string(buffer, size));
}

}  // namespace

ValueDict make_globals() {
  ValueDict globals;
  globals.set("range", Value(Function(global_range)));
  globals.set("dict", Value(Function([](const CallArgs& args) { return Value(dict_from_args(args, "dict")); })));
  globals.set("namespace", Value(Function([](const CallArgs& args) {
                return Value::make_namespace(dict_from_args(args, "namespace"));
              })));
  globals.set("raise_exception", Value(Function(global_raise_exception)));
  globals.set("strftime_now", Value(Function(global_strftime_now)));
  return globals;
}

}  // namespace llmesh::text::jinja
