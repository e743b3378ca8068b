// Status: an error code plus a readable reason, returned instead of throwing (the code runs inside
// other people's apps; exceptions never cross our boundary).
#ifndef JANKPROBE_PLT_STATUS_H_
#define JANKPROBE_PLT_STATUS_H_

#include <string>
#include <utility>

#include "jankprobe/plt.h"

namespace jp::plt {

class Status {
 public:
  Status() = default;
  Status(int code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status Malformed(std::string why) { return Status(JP_PLT_ERR_MALFORMED_ELF, std::move(why)); }
  static Status NotFound(std::string why) { return Status(JP_PLT_ERR_NOT_FOUND, std::move(why)); }
  static Status Invalid(std::string why) { return Status(JP_PLT_ERR_INVALID_ARG, std::move(why)); }

  bool ok() const { return code_ == JP_PLT_OK; }
  int code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  int code_ = JP_PLT_OK;
  std::string message_;
};

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_STATUS_H_
