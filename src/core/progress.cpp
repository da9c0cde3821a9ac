#include "core/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace llmesh {

namespace {
std::string amount(uint64_t n, const std::string& unit) {
  if (unit == "B") {
    if (n >= (1ull << 30)) return fmt::format("{:.2f} GiB", double(n) / (1ull << 30));
    return fmt::format("{:.1f} MiB", double(n) / (1ull << 20));
  }
  return fmt::format("{}{}", n, unit.empty() ? "" : " " + unit);
}
}  // namespace

ProgressBar::ProgressBar(std::string label, uint64_t total, std::string unit)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total),
      enabled_(::isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(uint64_t done) {
  done_ = done;
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(false);
}

void ProgressBar::finish() {
  if (finished_) return;
  finished_ = true;
  if (enabled_) draw(true);
}

void ProgressBar::draw(bool final) {
  constexpr int kWidth = 30;
  double frac = total_ ? double(done_) / double(total_) : 1.0;
  if (frac > 1) frac = 1;
  int filled = int(frac * kWidth);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  fmt::print(stderr, "\r{} [{}] {:3.0f}% {} / {} {:.1f}s{}", label_, bar, frac * 100,
             amount(done_, unit_), amount(total_, unit_), secs, final ? "\n" : "");
  std::fflush(stderr);
}

}  // namespace llmesh
