// Shared by the validation tests: fn() must throw std::invalid_argument whose message names the argument and says
// what was expected and what was got.
#ifndef ATTNLAB_TESTS_CPP_VALIDATION_H_
#define ATTNLAB_TESTS_CPP_VALIDATION_H_

#include <catch2/catch.hpp>

#include <cctype>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab_test {

// `word` occurs in `text` not as part of a longer identifier ("key" does not match inside "key_padding_mask").
inline bool ContainsWord(const std::string& text, const std::string& word) {
  auto is_ident = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; };
  for (size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
    const bool left_ok = pos == 0 || !is_ident(text[pos - 1]);
    const size_t end = pos + word.size();
    const bool right_ok = end == text.size() || !is_ident(text[end]);
    if (left_ok && right_ok) return true;
  }
  return false;
}

// fn() must throw std::invalid_argument naming one of `names` and containing "expected" and "got".
template <class Fn>
inline void ExpectInvalidArgument(Fn&& fn, const std::vector<std::string>& names) {
  std::string message;
  bool thrown = false;
  try {
    fn();
  } catch (const std::invalid_argument& e) {
    thrown = true;
    message = e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("expected std::invalid_argument, got another exception: " << e.what());
    return;
  }
  std::string wanted;
  for (const std::string& n : names) wanted += (wanted.empty() ? "" : " or ") + n;
  INFO("argument name wanted: " << wanted << "\nmessage: " << message);
  CHECK(thrown);
  if (!thrown) return;
  bool names_argument = false;
  for (const std::string& n : names) names_argument |= ContainsWord(message, n);
  CHECK(names_argument);
  CHECK(message.find("expected") != std::string::npos);
  CHECK(message.find("got") != std::string::npos);
}

}  // namespace attnlab_test

#endif  // ATTNLAB_TESTS_CPP_VALIDATION_H_
