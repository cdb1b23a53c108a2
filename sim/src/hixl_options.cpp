// Initialize's options and the engine selection, the way the vendor parses them
// (hicann/hixl src/hixl/engine/hixl_options.cc, engine_factory.cc, comm_engine.cc,
// hixl_engine.cc, fabric_mem_engine.cc; src/llm_datadist/adxl/adxl_inner_engine.cc).
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <set>

#include "acl/acl_rt.h"
#include "hixl_engine.h"

namespace aclsim {

namespace {

// A small JSON reader: enough to validate a document and read the values HIXL reads (strings,
// numbers, arrays of strings at the top level of an object).
struct Json {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
  std::string str;  // string value, or the number's text
  std::vector<Json> items;
  std::map<std::string, Json> members;
};

class JsonReader {
 public:
  explicit JsonReader(const std::string &s) : s_(s) {}
  bool Parse(Json &out) {
    if (!Value(out, 0)) return false;
    Ws();
    return i_ == s_.size();
  }

 private:
  void Ws() {
    while (i_ < s_.size() && isspace(static_cast<unsigned char>(s_[i_]))) i_++;
  }
  bool Lit(const char *w) {
    size_t n = strlen(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  bool Str(std::string &out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    i_++;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) return false;
        char e = s_[i_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u':
            if (s_.size() - i_ < 4) return false;
            i_ += 4;
            out += '?';
            break;
          default: out += e; break;
        }
      } else {
        out += c;
      }
    }
    if (i_ >= s_.size()) return false;
    i_++;
    return true;
  }
  bool Value(Json &v, int depth) {
    if (depth > 32) return false;
    Ws();
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{') {
      v.type = Json::kObject;
      i_++;
      Ws();
      if (i_ < s_.size() && s_[i_] == '}') {
        i_++;
        return true;
      }
      for (;;) {
        Ws();
        std::string key;
        if (!Str(key)) return false;
        Ws();
        if (i_ >= s_.size() || s_[i_] != ':') return false;
        i_++;
        Json member;
        if (!Value(member, depth + 1)) return false;
        v.members[key] = member;
        Ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          i_++;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == '}') {
          i_++;
          return true;
        }
        return false;
      }
    }
    if (c == '[') {
      v.type = Json::kArray;
      i_++;
      Ws();
      if (i_ < s_.size() && s_[i_] == ']') {
        i_++;
        return true;
      }
      for (;;) {
        Json item;
        if (!Value(item, depth + 1)) return false;
        v.items.push_back(item);
        Ws();
        if (i_ < s_.size() && s_[i_] == ',') {
          i_++;
          continue;
        }
        if (i_ < s_.size() && s_[i_] == ']') {
          i_++;
          return true;
        }
        return false;
      }
    }
    if (c == '"') {
      v.type = Json::kString;
      return Str(v.str);
    }
    if (Lit("true") || Lit("false")) {
      v.type = Json::kBool;
      v.str = s_[i_ - 1] == 'e' && s_.compare(i_ - 4, 4, "true") == 0 ? "true" : "false";
      return true;
    }
    if (Lit("null")) return true;
    size_t start = i_;
    while (i_ < s_.size() && (isdigit(static_cast<unsigned char>(s_[i_])) || strchr("+-.eE", s_[i_]) != nullptr)) i_++;
    if (i_ == start) return false;
    v.type = Json::kNumber;
    v.str = s_.substr(start, i_ - start);
    return true;
  }
  const std::string &s_;
  size_t i_ = 0;
};

bool ParseJson(const std::string &text, Json &out) { return JsonReader(text).Parse(out); }

// "0" / "1" and nothing else (the vendor's ToNumber then a 0-or-1 check).
bool ZeroOrOne(const std::string &v, bool &out) {
  if (v == "0" || v == "1") {
    out = v == "1";
    return true;
  }
  return false;
}

bool ToU64(const std::string &v, uint64_t &out) {
  if (v.empty() || v.size() > 19) return false;
  for (char c : v)
    if (!isdigit(static_cast<unsigned char>(c))) return false;
  out = strtoull(v.c_str(), nullptr, 10);
  return true;
}

const char *Find(const std::map<std::string, std::string> &raw, const char *a, const char *b = nullptr) {
  auto it = raw.find(a);
  if (it == raw.end() && b != nullptr) it = raw.find(b);
  return it == raw.end() ? nullptr : it->second.c_str();
}

// A JSON number with a fraction or an exponent, or a boolean, as tag v9.1.0's JsonToNumber
// reads it (nlohmann's get<T>: truncated toward zero, true 1, false 0); after 9.1 it is refused
// (hixl 1577fcd: only an integer JSON value). False when refused.
bool ConvertedBefore92(const Json &v, long long &out) {
  if (ReleaseAfter91()) return false;
  if (v.type == Json::kBool) {
    out = v.str == "true" ? 1 : 0;
    return true;
  }
  char *end = nullptr;
  double d = strtod(v.str.c_str(), &end);
  if (end == v.str.c_str() || *end != '\0' || !(d > -9.0e18 && d < 9.0e18)) return false;
  out = static_cast<long long>(d);
  return true;
}

// An integer member within [lo, hi], when present (ParseIntegerFieldInRange, JsonToNumber: an
// integer JSON number, or a string holding one; a number with a fraction or an exponent, or a
// boolean, is refused after 9.1 and converted on 9.1.0). `out` gets the value.
bool IntInRange(const Json &obj, const char *key, long long lo, long long hi, long long *out = nullptr) {
  auto it = obj.members.find(key);
  if (it == obj.members.end()) return true;
  const bool fraction = it->second.type == Json::kNumber &&
                        it->second.str.find_first_of(".eE") != std::string::npos;
  if (fraction || it->second.type == Json::kBool) {
    long long v = 0;
    if (!ConvertedBefore92(it->second, v) || v < lo || v > hi) return false;
    if (out != nullptr) *out = v;
    return true;
  }
  if (it->second.type != Json::kNumber && it->second.type != Json::kString) return false;
  const std::string &t = it->second.str;
  size_t i = (!t.empty() && t[0] == '-') ? 1 : 0;
  if (i == t.size() || t.size() - i > 18) return false;
  for (; i < t.size(); i++)
    if (!isdigit(static_cast<unsigned char>(t[i]))) return false;
  long long v = atoll(t.c_str());
  if (v < lo || v > hi) return false;
  if (out != nullptr) *out = v;
  return true;
}

// The fabric_memory fields, flat ("fabric_memory.max_capacity") or in a nested "fabric_memory"
// object (ParseFabricMemoryFields, ParseFabricMemoryConfig): max_capacity [1, 1024] TB,
// start_address [0, 1024] TB, task_stream_num [1, 8], enable_aicpu_unfold a JSON boolean; with
// aicpu unfold on (the default) task_stream_num must be 1. Tag v9.1.0 reads neither
// enable_aicpu_unfold nor the aicpu unfold rule (its hixl_options.cc from_json).
bool FabricMemoryConfigOk(const Json &j) {
  long long streams = -1;
  int unfold = -1;  // -1 not given, 0 false, 1 true
  auto fields = [&](const Json &obj, const std::string &prefix) {
    if (!IntInRange(obj, (prefix + "max_capacity").c_str(), 1, 1024)) return false;
    if (!IntInRange(obj, (prefix + "start_address").c_str(), 0, 1024)) return false;
    if (!IntInRange(obj, (prefix + "task_stream_num").c_str(), 1, 8, &streams)) return false;
    auto u = obj.members.find(prefix + "enable_aicpu_unfold");
    if (u != obj.members.end() && ReleaseAfter91()) {
      if (u->second.type != Json::kBool) return false;
      unfold = u->second.str == "true" ? 1 : 0;
    }
    return true;
  };
  auto nested = j.members.find("fabric_memory");
  if (nested != j.members.end() && nested->second.type == Json::kObject && !fields(nested->second, "")) return false;
  if (!fields(j, "fabric_memory.")) return false;
  return !ReleaseAfter91() || unfold == 0 || streams == -1 || streams == 1;
}

// comm_resource_config.listen_port as tag v9.1.0 reads it: JsonToNumber<uint32_t> (a JSON
// number wraps to 32 bits) then [1, 65535]; after 9.1 an int64 within [1, 65535].
bool ListenPortOk(const Json &j) {
  const char *key = "comm_resource_config.listen_port";
  if (ReleaseAfter91()) return IntInRange(j, key, 1, 65535);
  long long v = 0;
  auto it = j.members.find(key);
  if (it == j.members.end()) return true;
  // a string: std::stringstream >> uint32_t, which fails past 32 bits
  if (it->second.type == Json::kString) return IntInRange(j, key, 1, 65535);
  if (!IntInRange(j, key, LLONG_MIN + 1, LLONG_MAX, &v)) return false;
  const uint32_t port = static_cast<uint32_t>(v);
  return port >= 1 && port <= 65535;
}

// local_comm_res_path (ReadLocalCommResFile): a path realpath resolves to a regular file of 1
// byte to 1 MiB that can be read; its text becomes LocalCommRes.
bool ReadLocalCommResFile(const std::string &path, std::string &content) {
  char resolved[PATH_MAX] = {};
  if (realpath(path.c_str(), resolved) == nullptr) return false;
  int fd = open(resolved, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size <= 1024 * 1024;
  if (ok) {
    content.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (ok && got < content.size()) {
      ssize_t n = read(fd, &content[got], content.size() - got);
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0;
      if (ok) got += static_cast<size_t>(n);
    }
  }
  close(fd);
  return ok;
}

// LocalCommRes text: JSON, its "version" read for the engine selection.
uint32_t TakeLocalCommRes(const std::string &text, EngineOptions &o) {
  Json j;
  if (!ParseJson(text, j)) return hixl::PARAM_INVALID;
  o.has_local_comm_res = true;
  auto it = j.members.find("version");
  if (it != j.members.end() && it->second.type == Json::kString) o.local_comm_res_version = it->second.str;
  return hixl::SUCCESS;
}

// The hixl_cs engine's endpoint list filtered by protocol_desc (endpoint_generator.cc
// ParseProtocolDesc, IsSupportedProtocolDesc, ParseProtocolDescMode): each entry
// "protocol:placement" with protocol roce, hccs, ub_ctp, uboe or ub_rtp and placement host or
// device (uboe and ub_rtp on the device only); uboe:device and ub_rtp:device not both.
bool ProtocolDescOk(const std::vector<std::string> &descs) {
  static const std::set<std::string> protocols = {"roce", "hccs", "ub_ctp", "uboe", "ub_rtp"};
  bool uboe = false, ub_rtp = false;
  for (const std::string &d : descs) {
    size_t colon = d.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 >= d.size() || d.find(':', colon + 1) != std::string::npos)
      return false;
    const std::string protocol = d.substr(0, colon), placement = d.substr(colon + 1);
    if (protocols.count(protocol) == 0 || (placement != "host" && placement != "device")) return false;
    if ((protocol == "uboe" || protocol == "ub_rtp") && placement != "device") return false;
    uboe = uboe || d == "uboe:device";
    ub_rtp = ub_rtp || d == "ub_rtp:device";
  }
  return !(uboe && ub_rtp);
}

}  // namespace

const char *KindName(EngineKind kind) {
  switch (kind) {
    case EngineKind::kComm: return "comm";
    case EngineKind::kHixlCs: return "hixl_cs";
    case EngineKind::kFabric: return "fabric_mem";
  }
  return "?";
}

uint32_t ParseEngineOptions(const std::map<std::string, std::string> &raw, EngineOptions &o) {
  o.raw = raw;
  if (const char *v = Find(raw, "EnableUseFabricMem")) {
    if (*v != '\0' && !ZeroOrOne(v, o.fabric)) return hixl::PARAM_INVALID;
  }
  if (const char *v = Find(raw, "AutoConnect")) {
    if (!ZeroOrOne(v, o.auto_connect)) return hixl::PARAM_INVALID;
  }
  const char *local_comm_res = Find(raw, "LocalCommRes", "adxl.LocalCommRes");
  if (local_comm_res != nullptr && *local_comm_res != '\0' && TakeLocalCommRes(local_comm_res, o) != hixl::SUCCESS)
    return hixl::PARAM_INVALID;
  std::string local_comm_res_path;
  if (const char *v = Find(raw, "GlobalResourceConfig")) {
    if (*v != '\0') {
      Json j;
      if (!ParseJson(v, j) || j.type != Json::kObject) return hixl::PARAM_INVALID;
      // the flat key, or the nested {"comm_resource_config": {"protocol_desc": ...}}
      const Json *pd = nullptr;
      auto it = j.members.find("comm_resource_config.protocol_desc");
      if (it != j.members.end()) pd = &it->second;
      if (pd != nullptr) {
        if (pd->type == Json::kString) {
          o.protocols.push_back(pd->str);
        } else if (pd->type == Json::kArray) {
          for (const Json &item : pd->items) {
            if (item.type != Json::kString) return hixl::PARAM_INVALID;
            o.protocols.push_back(item.str);
          }
        } else {
          return hixl::PARAM_INVALID;
        }
        o.protocol_desc = !o.protocols.empty();
      }
      // ParseGlobalResourceConfigJson: fabric memory, connect pool, comm resources, the file path
      if (!FabricMemoryConfigOk(j)) return hixl::PARAM_INVALID;
      // tag v9.1.0 checks no range of connect_pool's (JsonToNumber<int32_t> only)
      const bool after91 = ReleaseAfter91();
      if (!IntInRange(j, "connect_pool.thread_num", after91 ? 1 : LLONG_MIN + 1, after91 ? 64 : LLONG_MAX))
        return hixl::PARAM_INVALID;
      if (!IntInRange(j, "connect_pool.task_queue_capacity", after91 ? 1 : LLONG_MIN + 1, after91 ? 65535 : LLONG_MAX))
        return hixl::PARAM_INVALID;
      if (!ListenPortOk(j)) return hixl::PARAM_INVALID;
      if (!IntInRange(j, "comm_resource_config.qos", 0, 7)) return hixl::PARAM_INVALID;
      if (!IntInRange(j, "comm_resource_config.max_active_channels", 1, 4294967295LL)) return hixl::PARAM_INVALID;
      // local_comm_res_path: after 9.1 only (tag v9.1.0 does not read it)
      auto path = j.members.find("local_comm_res_path");
      if (path != j.members.end() && after91) {
        if (path->second.type != Json::kString || path->second.str.empty()) return hixl::PARAM_INVALID;
        local_comm_res_path = path->second.str;
      }
    }
  }
  // ResolveLocalCommResFromFile: only when LocalCommRes itself is not given
  if (!local_comm_res_path.empty() && (local_comm_res == nullptr || *local_comm_res == '\0')) {
    std::string text;
    if (!ReadLocalCommResFile(local_comm_res_path, text) || TakeLocalCommRes(text, o) != hixl::SUCCESS)
      return hixl::PARAM_INVALID;
  }
  if (const char *v = Find(raw, "BufferPool", "adxl.BufferPool")) {
    o.has_buffer_pool = true;
    o.buffer_pool = v;
  }
  return hixl::SUCCESS;
}

EngineKind SelectEngine(const EngineOptions &o) {
  if (o.fabric) return EngineKind::kFabric;
  if (o.has_local_comm_res) return o.local_comm_res_version == "1.3" ? EngineKind::kHixlCs : EngineKind::kComm;
  if (o.protocol_desc) return EngineKind::kHixlCs;
  // After 9.1 only (hixl bb0d0f6): tag v9.1.0's factory has no SoC branch, comm everywhere.
  if (!ReleaseAfter91()) return EngineKind::kComm;
  const char *soc = aclrtGetSocName();
  if (soc != nullptr && strstr(soc, "Ascend950") != nullptr) return EngineKind::kHixlCs;
  return EngineKind::kComm;
}

uint32_t CheckEngineOptions(EngineKind kind, const EngineOptions &o, uint64_t &pool_bytes) {
  static const std::set<std::string> common = {
      "RdmaTrafficClass", "adxl.RdmaTrafficClass", "RdmaServiceLevel", "adxl.RdmaServiceLevel",
      "LocalCommRes",     "adxl.LocalCommRes",     "BufferPool",       "adxl.BufferPool",
      "AutoConnect",      "GlobalResourceConfig"};
  for (const auto &kv : o.raw) {
    bool ok = common.count(kv.first) != 0;
    if (kv.first == "EnableUseFabricMem") ok = kind != EngineKind::kHixlCs;
    if (!ok) {
      Log("Unsupported option '%s' for the %s engine", kv.first.c_str(), KindName(kind));
      return hixl::PARAM_INVALID;
    }
  }
  pool_bytes = 0;
  if (kind == EngineKind::kHixlCs && !ProtocolDescOk(o.protocols)) return hixl::PARAM_INVALID;
  if (kind != EngineKind::kComm) {
    if (o.has_buffer_pool && o.buffer_pool != "0:0") return hixl::PARAM_INVALID;
    return hixl::SUCCESS;
  }
  uint64_t num = 4, size_mb = 8;  // the comm engine's default pool: 4 buffers of 8 MB
  if (o.has_buffer_pool && !o.buffer_pool.empty()) {
    if (o.buffer_pool == "0:0") return hixl::SUCCESS;
    size_t colon = o.buffer_pool.find(':');
    if (colon == std::string::npos || o.buffer_pool.find(':', colon + 1) != std::string::npos) return hixl::PARAM_INVALID;
    if (!ToU64(o.buffer_pool.substr(0, colon), num) || !ToU64(o.buffer_pool.substr(colon + 1), size_mb))
      return hixl::PARAM_INVALID;
    if (num == 0 || size_mb == 0) return hixl::PARAM_INVALID;
  }
  uint64_t total = 0;
  if (__builtin_mul_overflow(num, size_mb, &total) || __builtin_mul_overflow(total, 1024ULL * 1024ULL, &total))
    return hixl::PARAM_INVALID;
  pool_bytes = total;
  return hixl::SUCCESS;
}

}  // namespace aclsim
