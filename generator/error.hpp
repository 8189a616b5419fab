// One error type for the whole project: the failing call and a readable message.
#pragma once
#include <stdexcept>
#include <string>

namespace i8g {

class Error : public std::runtime_error {
 public:
  Error(std::string where, std::string what)
      : std::runtime_error(where.empty() ? what : where + ": " + what),
        where_(std::move(where)), message_(std::move(what)) {}
  const std::string& where() const { return where_; }      // the failing call
  const std::string& message() const { return message_; }  // what went wrong, in words

 private:
  std::string where_;
  std::string message_;
};

}  // namespace i8g
