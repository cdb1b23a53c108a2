/*
 * graph/ascend_string.h - ge::AscendString as declared by the CANN metadef library, written
 * for the regcheck simulator (the simulator defines it in libcann_hixl.so; see sim/README.md).
 * Layout: one std::shared_ptr<std::string> (16 bytes). Nothing inline touches the std::string
 * itself (the destructor releases the shared_ptr, whose control block was made in the library),
 * so programs built with either libstdc++ string ABI (_GLIBCXX_USE_CXX11_ABI 0 or 1) can use it.
 */
#ifndef ACLSIM_GRAPH_ASCEND_STRING_H_
#define ACLSIM_GRAPH_ASCEND_STRING_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

namespace ge {
using char_t = char;

class AscendString {
 public:
  AscendString() = default;
  ~AscendString() = default;
  AscendString(const char_t *const name);
  AscendString(const char_t *const name, size_t length);

  const char_t *GetString() const;
  size_t GetLength() const;
  size_t Find(const AscendString &ascend_string) const;
  size_t Hash() const;

  bool operator<(const AscendString &d) const;
  bool operator>(const AscendString &d) const;
  bool operator<=(const AscendString &d) const;
  bool operator>=(const AscendString &d) const;
  bool operator==(const AscendString &d) const;
  bool operator!=(const AscendString &d) const;
  bool operator==(const char_t *const d) const;
  bool operator!=(const char_t *const d) const;

 private:
  std::shared_ptr<std::string> name_;
};
}  // namespace ge

namespace std {
template <>
struct hash<ge::AscendString> {
  size_t operator()(const ge::AscendString &name) const { return name.Hash(); }
};
}  // namespace std

#endif  // ACLSIM_GRAPH_ASCEND_STRING_H_
