// printf-style formatting into std::string, shared by the simulator's libraries.
#ifndef ACLSIM_SRC_SIM_FORMAT_H_
#define ACLSIM_SRC_SIM_FORMAT_H_

#include <cstdarg>
#include <cstdio>
#include <string>

namespace aclsim_format {

// Formats `f` with `ap` (which it does not consume: it works on copies).
inline std::string VFormat(const char *f, va_list ap) {
    char buf[512];
    va_list first;
    va_copy(first, ap);
    int n = vsnprintf(buf, sizeof buf, f, first);
    va_end(first);
    if (n < 0) return std::string();
    if (static_cast<size_t>(n) < sizeof buf) return std::string(buf, static_cast<size_t>(n));
    std::string out(static_cast<size_t>(n) + 1, '\0');
    va_list second;
    va_copy(second, ap);
    vsnprintf(&out[0], out.size(), f, second);
    va_end(second);
    out.resize(static_cast<size_t>(n));
    return out;
}

}  // namespace aclsim_format

#endif  // ACLSIM_SRC_SIM_FORMAT_H_
