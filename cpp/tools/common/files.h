// Whole-file reads and writes of the tools (std::runtime_error naming the path when one fails).
#ifndef ATTNLAB_TOOLS_COMMON_FILES_H_
#define ATTNLAB_TOOLS_COMMON_FILES_H_

#include <string>

namespace attnlab::tools {

std::string ReadFile(const std::string& path);
void WriteText(const std::string& path, const std::string& text);
void MakeDir(const std::string& dir);  // mkdir -p

}  // namespace attnlab::tools

#endif  // ATTNLAB_TOOLS_COMMON_FILES_H_
