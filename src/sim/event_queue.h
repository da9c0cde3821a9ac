// Time-ordered events with deterministic tie-breaking: (time, kind, insertion
// order). Kinds are ordered so that at one instant finished steps and
// arrivals are seen before a scheduler decides what to run next.
#pragma once

#include <cstdint>
#include <limits>
#include <queue>
#include <vector>

namespace llmesh::sim {

enum class EventKind : int {
  StepEnd = 0,       // target = group
  TransferDone = 1,  // target = request (disaggregated P -> D)
  TurnIssue = 2,     // target = session
  Wake = 3,          // target = group: look for work
};

struct Event {
  double time_s = 0;
  EventKind kind = EventKind::Wake;
  uint64_t sequence = 0;
  int target = 0;
};

class EventQueue {
 public:
  void push(double time_s, EventKind kind, int target) { heap_.push({time_s, kind, next_sequence_++, target}); }
  bool empty() const { return heap_.empty(); }
  double next_time_s() const { return heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.top().time_s; }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time_s != b.time_s) return a.time_s > b.time_s;
      if (a.kind != b.kind) return static_cast<int>(a.kind) > static_cast<int>(b.kind);
      return a.sequence > b.sequence;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace llmesh::sim
