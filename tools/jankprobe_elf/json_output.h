// --json: one document for all files, written with RapidJSON's streaming writer.
#ifndef JANKPROBE_TOOLS_JANKPROBE_ELF_JSON_OUTPUT_H_
#define JANKPROBE_TOOLS_JANKPROBE_ELF_JSON_OUTPUT_H_

#include <cstdio>
#include <memory>

#include "tools/jankprobe_elf/inspection.h"

namespace jp::elftool {

// {"files": [ {path, machine, class, slots: [...], unmatched_stubs: [...], check: {...}} or
//             {path, error} ... ]}
class JsonOutput {
 public:
  explicit JsonOutput(std::FILE* to);
  ~JsonOutput();
  void Add(const Inspection& in);
  void Finish();  // closes the document and writes it out

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::FILE* to_;
};

}  // namespace jp::elftool

#endif  // JANKPROBE_TOOLS_JANKPROBE_ELF_JSON_OUTPUT_H_
