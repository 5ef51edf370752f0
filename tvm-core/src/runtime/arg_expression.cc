/*!
 * \file arg_expression.cc
 * \brief ArgExpression: the integer expressions over a kernel's scalar arguments that device
 *        modules carry (buffer sizes, launch bounds, loop bounds), parsed into postfix once.
 */
#include <tvm/runtime/device_module.h>

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
    out.steps_ = std::move(steps_);
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
      if (!Integer(&value) || !IsIntegerScalar(value)) return false;
      Emit('$', value);
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

  /*! \brief Whether argument `k` of the kernel is an integer scalar. */
  bool IsIntegerScalar(int64_t k) const {
    if (k < 0 || k >= static_cast<int64_t>(info_.arg_types.size())) return false;
    const std::string& type = info_.arg_types[static_cast<size_t>(k)];
    return type.compare(0, 3, "int") == 0 || type.compare(0, 4, "uint") == 0;
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
}  // namespace

bool ArgExpression::Evaluate(ffi::PackedArgs args, int64_t* value, bool negative_as_zero) const {
  if (steps_.empty()) return false;
  std::vector<int64_t> stack;
  stack.reserve(steps_.size());
  for (const Step& step : steps_) {
    if (step.op == 'c' || step.op == '$') {
      int64_t v = step.value;
      if (step.op == '$') {
        if (step.value >= args.size()) return false;
        auto arg = args[static_cast<size_t>(step.value)].try_cast<int64_t>();
        if (!arg.has_value()) return false;
        v = *arg;
        if (v < 0 && !negative_as_zero) return false;
        if (v < 0) v = 0;
      }
      stack.push_back(v);
      continue;
    }
    int64_t b = stack.back();
    stack.pop_back();
    int64_t a = stack.back();
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
        a = a < b ? a : b;
        break;
      case 'M':
        a = a > b ? a : b;
        break;
      default:  // '/' and '%'
        if (b == 0) return false;
        a = step.op == '/' ? FloorDiv(a, b) : FloorMod(a, b);
    }
    stack.back() = a;
  }
  *value = stack.back();
  return true;
}

}  // namespace runtime
}  // namespace tvm
