// Where the ring lives: anonymous memory, or a MAP_SHARED file that keeps the records of a killed process
// (the page cache holds every store the process made before SIGKILL). Also reading such a file back.
// Power loss is not covered: nothing is msync'ed, appends must stay memory-speed.
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "hook/clock.h"
#include "hook/timeline.h"
#include "hook/timeline_codec.h"

namespace jp::hook {
namespace layout {

namespace {
bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
}  // namespace

bool ComputeLayout(uint32_t capacity, uint32_t intern_slots, uint32_t arena_bytes, RegionLayout* out,
                   std::string* error) {
  if (!IsPowerOfTwo(capacity) || capacity < kMinCapacity || capacity > kMaxCapacity) {
    *error = "timeline capacity " + std::to_string(capacity) + " is not a power of two in [" +
             std::to_string(kMinCapacity) + ", " + std::to_string(kMaxCapacity) + "]";
    return false;
  }
  if (!IsPowerOfTwo(intern_slots) || intern_slots < kMinInternSlots || intern_slots > kMaxInternSlots) {
    *error = "string table size " + std::to_string(intern_slots) + " is not a power of two in [" +
             std::to_string(kMinInternSlots) + ", " + std::to_string(kMaxInternSlots) + "]";
    return false;
  }
  if (arena_bytes < kMinArenaBytes || arena_bytes > kMaxArenaBytes) {
    *error = "string arena size " + std::to_string(arena_bytes) + " is outside [" +
             std::to_string(kMinArenaBytes) + ", " + std::to_string(kMaxArenaBytes) + "]";
    return false;
  }
  out->intern_offset = sizeof(Header);
  out->arena_offset = out->intern_offset + uint64_t{intern_slots} * sizeof(uint64_t);
  out->ring_offset = AlignUp(out->arena_offset + arena_bytes, 64);
  out->total = out->ring_offset + uint64_t{capacity} * sizeof(Record);
  return true;
}

}  // namespace layout

namespace {

std::string Errno(const std::string& what) { return what + ": " + strerror(errno); }

// A header for a fresh region; the magic is left for last (see Header).
void InitHeader(layout::Header* h, const layout::RegionLayout& l, const Timeline::Options& o) {
  h->version = layout::kVersion;
  h->header_size = sizeof(layout::Header);
  h->record_size = sizeof(layout::Record);
  h->capacity = o.capacity;
  h->intern_slots = o.intern_slots;
  h->arena_bytes = o.arena_bytes;
  h->region_size = l.total;
  h->intern_offset = l.intern_offset;
  h->arena_offset = l.arena_offset;
  h->ring_offset = l.ring_offset;
  h->pid = static_cast<int32_t>(getpid());
  h->start_monotonic_ns = MonotonicNs();
  h->start_realtime_ns = RealtimeNs();
  __atomic_thread_fence(__ATOMIC_RELEASE);
  memcpy(h->magic, layout::kMagic, sizeof h->magic);
}

// Checks a header against the bytes it came with; the reason for the first mismatch goes to *error.
bool ValidateHeader(const layout::Header& h, uint64_t size, layout::RegionLayout* l, std::string* error) {
  if (memcmp(h.magic, layout::kMagic, sizeof h.magic) != 0) {
    *error = "not a jankprobe timeline (bad magic)";
    return false;
  }
  if (h.version != layout::kVersion) {
    // An older jankprobe's file must not be misread: its records' checksums (and possibly more) follow
    // other rules, so even intact records would look torn, or worse, damaged ones intact.
    *error = "timeline format version " + std::to_string(h.version) + ", this build reads version " +
             std::to_string(layout::kVersion) +
             (h.version < layout::kVersion ? " (written by an older jankprobe; its records are not read)"
                                           : " (written by a newer jankprobe; its records are not read)");
    return false;
  }
  if (h.header_size != sizeof(layout::Header) || h.record_size != sizeof(layout::Record)) {
    *error = "header/record size " + std::to_string(h.header_size) + "/" + std::to_string(h.record_size) +
             ", expected " + std::to_string(sizeof(layout::Header)) + "/" + std::to_string(sizeof(layout::Record));
    return false;
  }
  std::string why;
  if (!layout::ComputeLayout(h.capacity, h.intern_slots, h.arena_bytes, l, &why)) {
    *error = "corrupt header: " + why;
    return false;
  }
  if (h.region_size != l->total || h.intern_offset != l->intern_offset || h.arena_offset != l->arena_offset ||
      h.ring_offset != l->ring_offset) {
    *error = "corrupt header: offsets do not match its sizes";
    return false;
  }
  if (size != l->total) {
    *error = "file is " + std::to_string(size) + " bytes, its header describes " + std::to_string(l->total);
    return false;
  }
  return true;
}

// Decodes a whole timeline image (a private copy, so a concurrent writer or a corrupt file cannot move
// anything under us).
void DecodeImage(const std::vector<unsigned char>& bytes, RecoveredTimeline* out) {
  layout::Header h;
  if (bytes.size() < sizeof h) {
    out->error = "file is " + std::to_string(bytes.size()) + " bytes, too small for a timeline header";
    return;
  }
  memcpy(&h, bytes.data(), sizeof h);
  layout::RegionLayout l;
  if (!ValidateHeader(h, bytes.size(), &l, &out->error)) return;
  out->valid = true;
  out->pid = h.pid;
  out->capacity = h.capacity;
  out->start_monotonic_ns = h.start_monotonic_ns;
  out->start_realtime_ns = h.start_realtime_ns;
  out->head = h.head;
  out->dropped = h.dropped;

  const char* arena = reinterpret_cast<const char*>(bytes.data() + l.arena_offset);
  out->strings.assign(h.intern_slots + 1, std::string());
  for (uint32_t i = 0; i < h.intern_slots; ++i) {
    uint64_t slot;
    memcpy(&slot, bytes.data() + l.intern_offset + i * sizeof slot, sizeof slot);
    std::string_view text;
    if (slot != 0 && StringTable::ReadArena(arena, h.arena_bytes, static_cast<uint32_t>(slot), &text)) {
      out->strings[i + 1] = std::string(text);
    }
  }

  const uint64_t mask = h.capacity - 1;
  for (uint64_t i = 0; i < h.capacity; ++i) {
    layout::Record r;
    memcpy(&r, bytes.data() + l.ring_offset + i * sizeof r, sizeof r);
    if (r.seq == 0) continue;  // never written
    const uint64_t ticket = r.seq / 2 - 1;
    const RecordWords w = LoadRecordWords(r);
    // Misplaced, beyond head or odd: corrupt. Else the checksum decides.
    if (r.seq % 2 != 0 || (ticket & mask) != i || ticket >= h.head) {
      ++out->torn;
      continue;
    }
    // The next lap's ticket of this slot was taken: its writer (killed mid-record: writers do not mark a
    // slot before writing it, the head says they own it) may have overwritten part of this record. Kept
    // never, counted torn when the check shows damage (an intact one was merely overwritten-in-waiting,
    // behind a skipped ticket, and a lap old like any overwritten record).
    if (ticket + h.capacity < h.head) {
      if (!ChecksumMatches(w, ticket)) ++out->torn;
      continue;
    }
    if (!ChecksumMatches(w, ticket)) {
      ++out->torn;
      continue;
    }
    out->events.push_back(DecodeEvent(w, ticket));
  }
  std::sort(out->events.begin(), out->events.end(),
            [](const Event& a, const Event& b) { return a.ticket < b.ticket; });
  out->recovered = out->events.size();
}

// Reads the whole file (never maps it: a file truncated under a mapping raises SIGBUS).
bool ReadWholeFile(int fd, std::vector<unsigned char>* bytes, std::string* error) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = Errno("fstat");
    return false;
  }
  // Sized by the largest layout we could have written; anything bigger is not ours.
  constexpr uint64_t kMaxFile = sizeof(layout::Header) + uint64_t{layout::kMaxInternSlots} * 8 +
                                layout::kMaxArenaBytes + 64 + uint64_t{layout::kMaxCapacity} * sizeof(layout::Record);
  if (static_cast<uint64_t>(st.st_size) > kMaxFile) {
    *error = "file is " + std::to_string(st.st_size) + " bytes, larger than any timeline";
    return false;
  }
  bytes->resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes->size()) {
    ssize_t n = pread(fd, bytes->data() + done, bytes->size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = Errno("read");
      return false;
    }
    if (n == 0) break;  // shrank meanwhile: decode what we have, the size check will reject it
    done += static_cast<size_t>(n);
  }
  bytes->resize(done);
  return true;
}

RecoveredTimeline RecoverFromFd(int fd) {
  RecoveredTimeline out;
  std::vector<unsigned char> bytes;
  if (!ReadWholeFile(fd, &bytes, &out.error)) {
    out.found = true;
    return out;
  }
  if (bytes.empty()) return out;  // a new file: nothing to recover
  out.found = true;
  DecodeImage(bytes, &out);
  return out;
}

}  // namespace

std::string_view RecoveredTimeline::StringFor(uint16_t id) const {
  if (id == StringTable::kOverflow) return "<overflow>";
  return id < strings.size() ? std::string_view(strings[id]) : std::string_view();
}

RecoveredTimeline RecoverPrevious(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    RecoveredTimeline out;
    if (errno != ENOENT) {
      out.found = true;
      out.error = Errno("open " + path);
    }
    return out;
  }
  RecoveredTimeline out = RecoverFromFd(fd);
  close(fd);
  return out;
}

bool Timeline::Map(void* base, uint64_t size, const layout::RegionLayout& l, const Options& o) {
  auto* bytes = static_cast<unsigned char*>(base);
  header_ = static_cast<layout::Header*>(base);
  ring_ = reinterpret_cast<layout::Record*>(bytes + l.ring_offset);
  mask_ = o.capacity - 1;
  region_size_ = size;
  void* counts = mmap(nullptr, uint64_t{o.capacity} * sizeof(std::atomic<uint32_t>), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (counts == MAP_FAILED) return false;
  skip_counts_ = static_cast<std::atomic<uint32_t>*>(counts);  // zero-filled: no skips yet
  StringTableStorage s;
  s.slots = reinterpret_cast<uint64_t*>(bytes + l.intern_offset);
  s.slot_count = o.intern_slots;
  s.arena = reinterpret_cast<char*>(bytes + l.arena_offset);
  s.arena_bytes = o.arena_bytes;
  s.arena_used = &header_->arena_used;
  s.used = &header_->intern_used;
  s.overflow = &header_->intern_overflow;
  s.wasted_bytes = &header_->intern_wasted_bytes;
  strings_ = StringTable(s);
  InitHeader(header_, l, o);
  return true;
}

std::unique_ptr<Timeline> Timeline::Create(const Options& options, std::string* error) {
  layout::RegionLayout l;
  if (!layout::ComputeLayout(options.capacity, options.intern_slots, options.arena_bytes, &l, error)) {
    return nullptr;
  }
  std::unique_ptr<Timeline> t(new (std::nothrow) Timeline());
  if (!t) {
    *error = "out of memory";
    return nullptr;
  }
  void* base = mmap(nullptr, l.total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    *error = Errno("mmap " + std::to_string(l.total) + " bytes for the timeline");
    return nullptr;
  }
  if (!t->Map(base, l.total, l, options)) {
    *error = Errno("mmap the timeline's skip counts");
    return nullptr;
  }
  return t;
}

std::unique_ptr<Timeline> Timeline::Open(const std::string& path, const Options& options, std::string* error) {
  layout::RegionLayout l;
  if (!layout::ComputeLayout(options.capacity, options.intern_slots, options.arena_bytes, &l, error)) {
    return nullptr;
  }
  std::unique_ptr<Timeline> t(new (std::nothrow) Timeline());
  if (!t) {
    *error = "out of memory";
    return nullptr;
  }
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    *error = Errno("open timeline file " + path);
    return nullptr;
  }
  // flock is released by the kernel when the holder dies, so a killed run never leaves the file locked.
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    *error = errno == EWOULDBLOCK ? "timeline file " + path + " is in use by another live process"
                                  : Errno("flock " + path);
    close(fd);
    return nullptr;
  }
  t->previous_ = RecoverFromFd(fd);
  // Truncating to zero first drops every old byte: the fresh ring starts all-zero whatever was there.
  if (ftruncate(fd, 0) != 0 || ftruncate(fd, static_cast<off_t>(l.total)) != 0) {
    *error = Errno("resize timeline file " + path);
    close(fd);
    return nullptr;
  }
  // Reserve the blocks now: a full disk then fails here with a reason instead of as SIGBUS in an append.
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(l.total));
  if (rc != 0 && rc != EOPNOTSUPP && rc != EINVAL) {
    errno = rc;
    *error = Errno("reserve " + std::to_string(l.total) + " bytes for timeline file " + path);
    close(fd);
    return nullptr;
  }
  void* base = mmap(nullptr, l.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    *error = Errno("mmap timeline file " + path);
    close(fd);
    return nullptr;
  }
  t->fd_ = fd;
  t->path_ = path;
  if (!t->Map(base, l.total, l, options)) {
    *error = Errno("mmap the timeline's skip counts");
    return nullptr;
  }
  return t;
}

Timeline::~Timeline() {
  if (header_ != nullptr) munmap(header_, region_size_);
  if (skip_counts_ != nullptr) munmap(skip_counts_, (uint64_t{mask_} + 1) * sizeof(std::atomic<uint32_t>));
  if (fd_ >= 0) close(fd_);
}

}  // namespace jp::hook
