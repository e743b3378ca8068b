// Symbol versions: DT_VERSYM gives each dynamic symbol a version index; DT_VERNEED (versions this
// image requires from others, e.g. "GLIBC_2.2.5") and DT_VERDEF (versions it defines) name them.
// A versioned import such as sendto@GLIBC_2.2.5 still has the plain name "sendto" in the string table.
#ifndef JANKPROBE_PLT_SYMBOL_VERSIONS_H_
#define JANKPROBE_PLT_SYMBOL_VERSIONS_H_

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "plt/dynamic_section.h"
#include "plt/segment_map.h"
#include "plt/status.h"
#include "plt/symbol_table.h"

namespace jp::plt {

class SymbolVersions {
 public:
  // `symbols` must already be initialised (for the count and the string table).
  Status Init(const SegmentMap& map, const DynamicInfo& dyn, const SymbolTable& symbols);

  // Version name of symbol `index`; empty when the image has no DT_VERSYM, or the symbol is local,
  // unversioned, or has an index no DT_VERNEED/DT_VERDEF entry names.
  std::string_view VersionOf(uint32_t index) const;
  // A non-default version (foo@V rather than foo@@V): not what a plain name lookup binds to.
  bool IsHidden(uint32_t index) const;

 private:
  uint16_t RawIndex(uint32_t index) const;
  Status ReadVerneed(const SegmentMap& map, const DynamicInfo& dyn, const SymbolTable& symbols);
  Status ReadVerdef(const SegmentMap& map, const DynamicInfo& dyn, const SymbolTable& symbols);

  const uint8_t* versym_ = nullptr;  // uint16 per symbol
  size_t count_ = 0;
  std::vector<std::pair<uint16_t, std::string_view>> names_;  // version index -> name
};

}  // namespace jp::plt

#endif  // JANKPROBE_PLT_SYMBOL_VERSIONS_H_
