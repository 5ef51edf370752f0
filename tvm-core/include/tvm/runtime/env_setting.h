/*!
 * \file tvm/runtime/env_setting.h
 * \brief Whole-number and on/off settings read from environment variables, refused by name when
 *        malformed.
 */
#ifndef TVM_RUNTIME_ENV_SETTING_H_
#define TVM_RUNTIME_ENV_SETTING_H_

#include <tvm/ffi/error.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace tvm {
namespace runtime {

/*!
 * \brief Whole number `name` from the environment in [lo, hi]; `fallback` when it is unset or
 *  empty. Anything else (not a number, trailing text, out of range) is a ValueError
 *  "<name>='<value>': expected <what> from <lo> to <hi>", so a typo never silently changes what
 *  the setting controls.
 */
inline int64_t IntegerSetting(const char* name, int64_t fallback, int64_t lo, int64_t hi,
                              const char* what) {
  const char* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(env, &end, 10);  // NOLINT(runtime/int): strtoll's own type
  if (end == env || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    TVM_FFI_THROW(ValueError) << name << "='" << env << "': expected " << what << " from " << lo
                              << " to " << hi;
  }
  return v;
}

/*! \brief `text` (an environment value, may be null) without the spaces around it, as Python's
 *  str.strip() gives it. */
inline std::string SettingText(const char* text) {
  std::string value(text != nullptr ? text : "");
  size_t first = value.find_first_not_of(" \t\n\r\f\v");
  size_t last = value.find_last_not_of(" \t\n\r\f\v");
  return first == std::string::npos ? "" : value.substr(first, last - first + 1);
}

/*! \brief SettingText(text) lower-cased: the word of a switch. */
inline std::string SettingWord(const char* text) {
  std::string value = SettingText(text);
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return value;
}

/*!
 * \brief Switch `name` from the environment, read as Python's side reads switches: 1, true, yes
 *  or on (any case, spaces around ignored) is true, 0, false, no or off is false, unset or empty
 *  is `fallback`; anything else is a ValueError "<name>='<value>': expected 1, true, yes or on,
 *  or 0, false, no or off".
 */
inline bool BooleanSetting(const char* name, bool fallback) {
  const char* env = std::getenv(name);
  std::string value = SettingWord(env);
  if (value.empty()) return fallback;
  for (const char* yes : {"1", "true", "yes", "on"}) {
    if (value == yes) return true;
  }
  for (const char* no : {"0", "false", "no", "off"}) {
    if (value == no) return false;
  }
  TVM_FFI_THROW(ValueError) << name << "='" << env
                            << "': expected 1, true, yes or on, or 0, false, no or off";
}

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_ENV_SETTING_H_
