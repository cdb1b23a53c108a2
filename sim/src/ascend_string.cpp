// ge::AscendString for the simulator. In the vendor product this class lives in CANN's metadef
// library; the simulator defines it in libcann_hixl.so (documented in sim/README.md).
#include <cstring>

#include "graph/ascend_string.h"

static_assert(sizeof(ge::AscendString) == 16, "AscendString is one std::shared_ptr<std::string>");

namespace ge {

AscendString::AscendString(const char *name) {
  if (name != nullptr) name_ = std::make_shared<std::string>(name);
}

AscendString::AscendString(const char *name, size_t length) {
  if (name != nullptr) name_ = std::make_shared<std::string>(name, length);
}

const char *AscendString::GetString() const { return name_ == nullptr ? "" : name_->c_str(); }

size_t AscendString::GetLength() const { return name_ == nullptr ? 0 : name_->length(); }

namespace {
int Compare(const AscendString &a, const AscendString &b) {
  std::string x(a.GetString(), a.GetLength());
  std::string y(b.GetString(), b.GetLength());
  return x.compare(y);
}
}  // namespace

bool AscendString::operator<(const AscendString &d) const { return Compare(*this, d) < 0; }
bool AscendString::operator>(const AscendString &d) const { return Compare(*this, d) > 0; }
bool AscendString::operator<=(const AscendString &d) const { return Compare(*this, d) <= 0; }
bool AscendString::operator>=(const AscendString &d) const { return Compare(*this, d) >= 0; }
bool AscendString::operator==(const AscendString &d) const { return Compare(*this, d) == 0; }
bool AscendString::operator!=(const AscendString &d) const { return Compare(*this, d) != 0; }

}  // namespace ge
