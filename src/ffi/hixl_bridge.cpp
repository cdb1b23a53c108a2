// Walks the `const std::map<ge::AscendString, ge::AscendString> &options` of
// hixl::Hixl::Initialize for regcheck (src/frontend/hixl.rs).
//
// - No vendor symbol is referenced at link time: the vendor's AscendString::GetString and
//   GetLength are passed in as function pointers found at run time, so a program that links
//   libregcheck.a without HIXL still links.
// - No libstdc++ symbol is referenced either (compiled with -fno-exceptions -fno-rtti, and the
//   tree is walked here rather than through std::_Rb_tree_increment), so C programs that link
//   libregcheck.a need no -lstdc++.
// - The map's layout comes from this compiler's own <map>; only the key type is ours: `Key`
//   has the size and alignment of ge::AscendString (one std::shared_ptr, 16 bytes), which is
//   all std::map's node layout depends on. The strings themselves are read only through the
//   vendor's accessors.
#include <cstddef>
#include <map>

namespace {

// Layout-compatible with ge::AscendString (std::shared_ptr<std::string>: two pointers).
struct Key {
  void *words[2];
};
static_assert(sizeof(Key) == 16, "ge::AscendString is 16 bytes");
static_assert(alignof(Key) == alignof(void *), "ge::AscendString is pointer-aligned");

using OptionsMap = std::map<Key, Key>;
using Node = std::_Rb_tree_node<OptionsMap::value_type>;
using NodeBase = std::_Rb_tree_node_base;

// In-order successor (the algorithm of libstdc++'s _Rb_tree_increment, on the header's
// public fields). `header` is the map's end() node.
const NodeBase *Next(const NodeBase *x) {
  if (x->_M_right != nullptr) {
    x = x->_M_right;
    while (x->_M_left != nullptr) x = x->_M_left;
    return x;
  }
  const NodeBase *y = x->_M_parent;
  while (y != nullptr && x == y->_M_right) {
    x = y;
    y = y->_M_parent;
  }
  if (y == nullptr) return nullptr;
  if (x->_M_right != y) x = y;
  return x;
}

}  // namespace

extern "C" {

// `const char *ge::AscendString::GetString() const` called as a function of `this`.
typedef const char *(*RcGetStringFn)(const void *self);
// `size_t ge::AscendString::GetLength() const`.
typedef size_t (*RcGetLengthFn)(const void *self);
// Receives one option: key and value bytes (not NUL-terminated; may be NULL when len is 0).
typedef void (*RcOptionFn)(void *ctx, const char *key, size_t key_len, const char *value, size_t value_len);

// Calls `each` for the first `max` entries of `*map` in key order; returns the map's size
// (0 when `map` or a function pointer is NULL). Stops early at a NULL link.
__attribute__((visibility("hidden"))) size_t rcbridge_hixl_walk_options(const void *map, RcGetStringFn get_string,
                                                                         RcGetLengthFn get_length, RcOptionFn each,
                                                                         void *ctx, size_t max) {
  if (map == nullptr || get_string == nullptr || get_length == nullptr || each == nullptr) return 0;
  const OptionsMap &m = *static_cast<const OptionsMap *>(map);
  const size_t size = m.size();
  const NodeBase *header = m.end()._M_node;
  const NodeBase *node = m.begin()._M_node;
  for (size_t i = 0; i < size && i < max && node != nullptr && node != header; i++) {
    const OptionsMap::value_type &kv = *static_cast<const Node *>(node)->_M_valptr();
    const void *k = &kv.first;
    const void *v = &kv.second;
    each(ctx, get_string(k), get_length(k), get_string(v), get_length(v));
    node = Next(node);
  }
  return size;
}

}  // extern "C"
