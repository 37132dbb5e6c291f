// Whole-file reads and writes of the tools (files.h).
#include "cpp/tools/common/files.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace attnlab::tools {

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << text;
}

void MakeDir(const std::string& dir) {
  const std::string mkdir = "mkdir -p '" + dir + "'";
  if (std::system(mkdir.c_str()) != 0) throw std::runtime_error("cannot create " + dir);
}

}  // namespace attnlab::tools
