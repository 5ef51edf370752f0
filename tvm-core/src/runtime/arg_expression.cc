/*!
 * \file arg_expression.cc
 * \brief ArgExpression: the integer expressions over a kernel's scalar arguments that device
 *        modules carry (buffer sizes, launch bounds, loop bounds), parsed into postfix once.
 */
#include <tvm/ffi/reflection/registry.h>
#include <tvm/runtime/device_module.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace tvm {
namespace runtime {

/*! \brief Recursive descent over the text into ArgExpression's postfix steps; any error leaves
 *  the expression invalid. */
class ArgExpressionParser {
 public:
  ArgExpressionParser(const FunctionInfo& info, const std::string& text)
      : info_(info), text_(text) {}

  ArgExpression Parse() {
    ArgExpression out;
    constexpr size_t kMaxLength = 4096;
    if (text_.empty() || text_.size() > kMaxLength || !Sum(0) || pos_ != text_.size()) return out;
    if (MostHeld() > ArgExpression::kMaxStack) return out;
    out.steps_ = std::move(steps_);
    out.text_ = text_;
    return out;
  }

 private:
  static constexpr int kMaxDepth = 64;

  bool Eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool EatWord(const char* word) {
    size_t n = std::char_traits<char>::length(word);
    if (text_.compare(pos_, n, word) != 0) return false;
    pos_ += n;
    return true;
  }
  void Emit(char op, int64_t value = 0) { steps_.push_back({op, value}); }

  /*! \brief The most values the steps hold at once. */
  size_t MostHeld() const {
    size_t held = 0, most = 0;
    for (const ArgExpression::Step& step : steps_) {
      held = (step.op == 'c' || step.op == '$') ? held + 1 : held - 1;
      most = std::max(most, held);
    }
    return most;
  }

  /*! \brief sum := product (('+' | '-') product)* */
  bool Sum(int depth) {
    if (!Product(depth)) return false;
    while (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
      char op = text_[pos_++];
      if (!Product(depth)) return false;
      Emit(op);
    }
    return true;
  }

  /*! \brief product := atom (('*' | '/' | '%') atom)* */
  bool Product(int depth) {
    if (!Atom(depth)) return false;
    while (pos_ < text_.size() &&
           (text_[pos_] == '*' || text_[pos_] == '/' || text_[pos_] == '%')) {
      char op = text_[pos_++];
      if (!Atom(depth)) return false;
      Emit(op);
    }
    return true;
  }

  /*! \brief atom := integer | '$' integer | '(' sum ')' | ('min' | 'max') '(' sum ',' sum ')' */
  bool Atom(int depth) {
    if (depth >= kMaxDepth) return false;
    int64_t value = 0;
    if (Eat('(')) return Sum(depth + 1) && Eat(')');
    for (auto [word, op] : {std::pair<const char*, char>{"min(", 'm'}, {"max(", 'M'}}) {
      if (EatWord(word)) {
        if (!Sum(depth + 1) || !Eat(',') || !Sum(depth + 1) || !Eat(')')) return false;
        Emit(op);
        return true;
      }
    }
    if (Eat('$')) {
      DLDataType dtype;
      if (!Integer(&value) || !IntegerScalar(value, &dtype)) return false;
      Emit('$', value);
      steps_.back().bits = dtype.bits;
      steps_.back().is_unsigned = dtype.code == kDLUInt;
      return true;
    }
    if (!Integer(&value)) return false;
    Emit('c', value);
    return true;
  }

  /*! \brief Decimal digits into `*value`, saturating past int64 (as large as can be). */
  bool Integer(int64_t* value) {
    size_t start = pos_;
    *value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      int digit = text_[pos_++] - '0';
      *value = *value > (INT64_MAX - digit) / 10 ? INT64_MAX : *value * 10 + digit;
    }
    return pos_ > start;
  }

  /*! \brief Whether argument `k` of the kernel is an integer scalar of 8 to 64 bits (its dtype
   *  into `*dtype`). */
  bool IntegerScalar(int64_t k, DLDataType* dtype) const {
    if (k < 0 || k >= static_cast<int64_t>(info_.arg_types.size())) return false;
    try {
      *dtype = ffi::StringToDLDataType(info_.arg_types[static_cast<size_t>(k)]);
    } catch (const ffi::Error&) {
      return false;
    }
    const DLDataType& t = *dtype;
    return (t.code == kDLInt || t.code == kDLUInt) && t.lanes == 1 && t.bits >= 8 && t.bits <= 64;
  }

  const FunctionInfo& info_;
  const std::string& text_;
  size_t pos_ = 0;
  std::vector<ArgExpression::Step> steps_;
};

ArgExpression ArgExpression::Parse(const FunctionInfo& info, const std::string& text) {
  return ArgExpressionParser(info, text).Parse();
}

namespace {
int64_t Saturate(__int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(v);
}

/*! \brief Floor division and modulo (as TIR's floordiv/floormod); b != 0. */
int64_t FloorDiv(int64_t a, int64_t b) {
  if (b == -1) return Saturate(-static_cast<__int128>(a));
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t FloorMod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/*! \brief `v` as a kernel parameter of `bits` and signedness receives it (uint64 values past
 *  int64 saturate). */
int64_t AsReceived(int64_t v, int bits, bool is_unsigned) {
  if (bits >= 64) return is_unsigned && v < 0 ? INT64_MAX : v;
  uint64_t mask = (uint64_t{1} << bits) - 1, u = static_cast<uint64_t>(v) & mask;
  if (is_unsigned || (u >> (bits - 1)) == 0) return static_cast<int64_t>(u);
  return static_cast<int64_t>(u | ~mask);
}
}  // namespace

bool ArgExpression::Evaluate(ffi::PackedArgs args, int64_t* value, bool magnitudes) const {
  if (steps_.empty()) return false;
  std::array<int64_t, kMaxStack> stack;
  size_t top = 0;
  for (const Step& step : steps_) {
    if (step.op == 'c' || step.op == '$') {
      int64_t v = step.value;
      if (step.op == '$') {
        if (step.value >= args.size()) return false;
        auto arg = args[static_cast<size_t>(step.value)].try_cast<int64_t>();
        if (!arg.has_value()) return false;
        v = AsReceived(*arg, step.bits, step.is_unsigned);
        if (v < 0 && magnitudes) v = v == INT64_MIN ? INT64_MAX : -v;
      }
      stack[top++] = v;
      continue;
    }
    int64_t b = stack[--top], a = stack[top - 1];
    __int128 wide_a = a, wide_b = b;
    switch (step.op) {
      case '+':
        a = Saturate(wide_a + wide_b);
        break;
      case '-':
        a = Saturate(wide_a - wide_b);
        break;
      case '*':
        a = Saturate(wide_a * wide_b);
        break;
      case 'm':
        a = std::min(a, b);
        break;
      case 'M':
        a = std::max(a, b);
        break;
      default:  // '/' and '%'
        if (b == 0) return false;
        a = step.op == '/' ? FloorDiv(a, b) : FloorMod(a, b);
    }
    stack[top - 1] = a;
  }
  *value = stack[0];
  return true;
}

TVM_FFI_STATIC_INIT_BLOCK() {
  // (arg_types, text, *call_args): what a module's size or bound says for a call; None when it
  // is not understood or unknown for these arguments (for tests and for inspecting modules)
  ffi::reflection::GlobalDef().def_packed("runtime.ArgExpressionEvaluate", [](ffi::PackedArgs args,
                                                                              ffi::Any* rv) {
    if (args.size() < 2) {
      TVM_FFI_THROW(TypeError) << "runtime.ArgExpressionEvaluate expects (arg_types, text, *args)";
    }
    FunctionInfo info;
    info.name = "expression";
    for (const ffi::Any& t : args[0].cast<ffi::Array<ffi::Any>>()) {
      info.arg_types.push_back(t.cast<ffi::String>());
    }
    ffi::PackedArgs call = args.Slice(2);
    if (static_cast<size_t>(call.size()) != info.arg_types.size()) {
      TVM_FFI_THROW(TypeError) << "runtime.ArgExpressionEvaluate: " << info.arg_types.size()
                               << " arg_types but " << call.size() << " arguments";
    }
    int64_t value = 0;
    ArgExpression expr = ArgExpression::Parse(info, args[1].cast<ffi::String>());
    *rv = expr.Evaluate(call, &value) ? ffi::Any(value) : ffi::Any();
  });
}

}  // namespace runtime
}  // namespace tvm
