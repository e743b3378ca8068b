#include "tools/jankprobe_elf/json_output.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "plt/elf_image.h"

namespace jp::elftool {

struct JsonOutput::State {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer{buffer};
};

JsonOutput::JsonOutput(std::FILE* to) : state_(std::make_unique<State>()), to_(to) {
  state_->writer.StartObject();
  state_->writer.Key("files");
  state_->writer.StartArray();
}

JsonOutput::~JsonOutput() = default;

namespace {

void String(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.c_str(), static_cast<rapidjson::SizeType>(value.size()));
}

void SlotKeys(rapidjson::Writer<rapidjson::StringBuffer>& w, uint16_t machine, const char* key,
              const std::vector<SlotKey>& keys) {
  w.Key(key);
  w.StartArray();
  for (const SlotKey& k : keys) {
    w.StartObject();
    w.Key("got");
    w.Uint64(k.got_vaddr);
    String(w, "symbol", k.symbol);
    String(w, "version", k.version);
    w.Key("type");
    w.Uint(k.reloc_type);
    String(w, "type_name", jp::plt::RelocTypeName(machine, k.reloc_type));
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

void JsonOutput::Add(const Inspection& in) {
  auto& w = state_->writer;
  w.StartObject();
  String(w, "path", in.path);
  if (!in.error.empty()) {
    String(w, "error", in.error);
    w.EndObject();
    return;
  }
  const LibelfImage& img = in.image;
  String(w, "machine", MachineName(img.machine));
  w.Key("class");
  w.Uint(img.is_64bit ? 64 : 32);
  w.Key("slots");
  w.StartArray();
  for (size_t i = 0; i < img.slots.size(); ++i) {
    const LibelfSlot& s = img.slots[i];
    w.StartObject();
    w.Key("got");
    w.Uint64(s.got_vaddr);
    String(w, "symbol", s.symbol);
    String(w, "version", s.version);
    w.Key("type");
    w.Uint(s.reloc_type);
    String(w, "type_name", jp::plt::RelocTypeName(img.machine, s.reloc_type));
    String(w, "kind", SlotClassName(s.kind));
    String(w, "table", SlotSourceName(s.source));
    String(w, "section", s.section);
    w.Key("addend");
    w.Int64(s.addend);
    w.Key("stub");
    if (in.stub_of_slot[i] >= 0) {
      const PltStub& p = in.stubs[static_cast<size_t>(in.stub_of_slot[i])];
      w.StartObject();
      w.Key("address");
      w.Uint64(p.stub_vaddr);
      String(w, "section", p.section);
      String(w, "instruction", p.instruction);
      w.EndObject();
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("unmatched_stubs");
  w.StartArray();
  for (size_t i : in.unmatched_stubs) {
    const PltStub& p = in.stubs[i];
    w.StartObject();
    w.Key("address");
    w.Uint64(p.stub_vaddr);
    w.Key("slot");
    w.Uint64(p.slot_vaddr);
    String(w, "section", p.section);
    String(w, "instruction", p.instruction);
    w.EndObject();
  }
  w.EndArray();
  if (in.check) {
    const CheckResult& c = *in.check;
    w.Key("check");
    w.StartObject();
    w.Key("agree");
    w.Bool(c.agree());
    w.Key("libelf_slots");
    w.Uint64(c.libelf_slots);
    w.Key("engine_slots");
    w.Uint64(c.engine_slots);
    if (!c.engine_error.empty()) String(w, "engine_error", c.engine_error);
    if (!c.header_mismatch.empty()) String(w, "header_mismatch", c.header_mismatch);
    SlotKeys(w, img.machine, "only_libelf", c.only_libelf);
    SlotKeys(w, img.machine, "only_engine", c.only_engine);
    w.EndObject();
  }
  w.EndObject();
}

void JsonOutput::Finish() {
  state_->writer.EndArray();
  state_->writer.EndObject();
  std::fwrite(state_->buffer.GetString(), 1, state_->buffer.GetSize(), to_);
  std::fputc('\n', to_);
}

}  // namespace jp::elftool
