// Experiment switches of the ops' host code: an integer from the environment, with a default. Callers read
// each once (a function-local static), so a switch holds for the life of the process.
#pragma once

#include <cstdlib>

namespace opcore {

inline int env_int(const char* name, int dflt) {
  const char* e = std::getenv(name);
  return e ? std::atoi(e) : dflt;
}

}  // namespace opcore
