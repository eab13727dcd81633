// The one way the core and the readers of files and requests refuse an input: std::invalid_argument with
// "<what>: <why>", the thing named first (a file, a key, a tensor) so the message says where the problem is.
#pragma once
#include <stdexcept>
#include <string>

namespace attn {

[[noreturn]] inline void refuse(const std::string& what, const std::string& why) { throw std::invalid_argument(what + ": " + why); }

}  // namespace attn
