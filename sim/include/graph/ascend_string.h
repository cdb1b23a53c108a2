/*
 * graph/ascend_string.h - ge::AscendString as declared by the CANN metadef library, written
 * for the regcheck simulator (the simulator defines it in libcann_hixl.so; see sim/README.md).
 * Layout: one std::shared_ptr<std::string> (16 bytes). The destructor is inline.
 */
#ifndef ACLSIM_GRAPH_ASCEND_STRING_H_
#define ACLSIM_GRAPH_ASCEND_STRING_H_

#include <cstddef>
#include <memory>
#include <string>

namespace ge {
class AscendString {
 public:
  AscendString() = default;
  ~AscendString() = default;
  AscendString(const char *name);
  AscendString(const char *name, size_t length);

  const char *GetString() const;
  size_t GetLength() const;

  bool operator<(const AscendString &d) const;
  bool operator>(const AscendString &d) const;
  bool operator<=(const AscendString &d) const;
  bool operator>=(const AscendString &d) const;
  bool operator==(const AscendString &d) const;
  bool operator!=(const AscendString &d) const;

 private:
  std::shared_ptr<std::string> name_;
};
}  // namespace ge

#endif  // ACLSIM_GRAPH_ASCEND_STRING_H_
