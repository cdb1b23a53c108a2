// ge::AscendString for the simulator. In the vendor product this class lives in CANN's metadef
// library; the simulator defines it in libcann_hixl.so (documented in sim/README.md). Every
// member that touches the std::string is here, out of line, so the string's ABI is the library's.
#include <cstring>
#include <string_view>

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
std::string_view View(const AscendString &a) { return std::string_view(a.GetString(), a.GetLength()); }
int Compare(const AscendString &a, const AscendString &b) { return View(a).compare(View(b)); }
}  // namespace

size_t AscendString::Find(const AscendString &ascend_string) const {
  return View(*this).find(View(ascend_string));
}

size_t AscendString::Hash() const { return std::hash<std::string_view>()(View(*this)); }

bool AscendString::operator<(const AscendString &d) const { return Compare(*this, d) < 0; }
bool AscendString::operator>(const AscendString &d) const { return Compare(*this, d) > 0; }
bool AscendString::operator<=(const AscendString &d) const { return Compare(*this, d) <= 0; }
bool AscendString::operator>=(const AscendString &d) const { return Compare(*this, d) >= 0; }
bool AscendString::operator==(const AscendString &d) const { return Compare(*this, d) == 0; }
bool AscendString::operator!=(const AscendString &d) const { return Compare(*this, d) != 0; }
bool AscendString::operator==(const char *const d) const {
  return d != nullptr && View(*this) == std::string_view(d);
}
bool AscendString::operator!=(const char *const d) const { return !(*this == d); }

}  // namespace ge
