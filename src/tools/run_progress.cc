// `hflow run` progress on stderr (see run_progress.h).
//
// Thread-safety: single-threaded (the fetch loop).
#include "tools/run_progress.h"

#include <cstdio>

namespace hflow::tools {
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(250);
constexpr auto kLineEvery = std::chrono::seconds(5);

}  // namespace

RunProgress::RunProgress(std::ostream* err, bool redraw, int64_t total)
    : err_(err), redraw_(redraw), total_(total) {}

void RunProgress::Say(const std::string& what) {
  Finish();
  *err_ << "hflow run: " << what << "\n";
  err_->flush();
}

void RunProgress::Start() {
  start_ = Clock::now();
  next_ = start_ + (redraw_ ? kRedrawEvery : kLineEvery);
}

std::string RunProgress::Text(int64_t fetched, int64_t total, double seconds) {
  double rate = seconds > 0 ? fetched / seconds : 0;
  char buf[160];
  int n = std::snprintf(buf, sizeof(buf), "fetched %lld", (long long)fetched);
  if (total >= 0)
    n += std::snprintf(buf + n, sizeof(buf) - n, "/%lld", (long long)total);
  n += std::snprintf(buf + n, sizeof(buf) - n, ", %.1f msgs/s", rate);
  if (total >= 0 && rate > 0 && fetched < total) {
    std::snprintf(buf + n, sizeof(buf) - n, ", ETA %.0f s",
                  (total - fetched) / rate);
  }
  return buf;
}

void RunProgress::Update(int64_t fetched) {
  auto now = Clock::now();
  if (now < next_) return;
  next_ = now + (redraw_ ? kRedrawEvery : kLineEvery);
  std::string text = Text(fetched, total_,
                          std::chrono::duration<double>(now - start_).count());
  if (redraw_) {
    // \x1b[K clears what a longer previous line left.
    *err_ << "\rhflow run: " << text << "\x1b[K";
    drawn_ = true;
  } else {
    *err_ << "hflow run: " << text << "\n";
  }
  err_->flush();
}

void RunProgress::Finish() {
  if (!drawn_) return;
  *err_ << "\n";
  drawn_ = false;
}

}  // namespace hflow::tools
