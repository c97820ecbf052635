#include "device/race_detector.hpp"

#include <algorithm>
#include <iterator>

namespace wt {

void RaceDetector::begin_work(const Clock& issued_knowing) {
  suspended_host_.push_back(host_);
  host_ = issued_knowing;
}

void RaceDetector::end_work() {
  if (suspended_host_.empty()) return;
  join(host_, suspended_host_.back());  // what was observed while it ran is known now
  suspended_host_.pop_back();
}

void RaceDetector::set_instruction(const std::string& what) { instruction_ = intern(what); }

int RaceDetector::intern(const std::string& text) {
  auto it = text_ids_.find(text);
  if (it != text_ids_.end()) return it->second;
  texts_.push_back(text);
  text_ids_.emplace(text, int(texts_.size()) - 1);
  return int(texts_.size()) - 1;
}

void RaceDetector::name_memory(const void* ptr, size_t bytes, const std::string& name) {
  const auto begin = reinterpret_cast<uintptr_t>(ptr);
  // A label names a tensor already allocated (keeps its extent); an allocation names new memory.
  const bool label = bytes == 0;
  auto it = names_.find(begin);
  if (label) {
    if (it == names_.end()) return;
    bytes = it->second.first - begin;
  }
  const std::string by =
      !label && instruction_ >= 0 ? " by " + texts_[size_t(instruction_)] : std::string();
  names_[begin] = {begin + bytes, intern(name + by)};
}

void RaceDetector::forget_memory(const void* ptr) {
  names_.erase(reinterpret_cast<uintptr_t>(ptr));
}

size_t RaceDetector::bytes_to_end(const void* ptr) const {
  const auto address = reinterpret_cast<uintptr_t>(ptr);
  auto it = names_.upper_bound(address);
  if (it == names_.begin()) return 0;
  --it;
  return address < it->second.first ? it->second.first - address : 0;
}

std::string RaceDetector::instruction() const {
  return instruction_ >= 0 ? texts_[size_t(instruction_)] : "host code";
}

std::string RaceDetector::write_between(int stream, uint64_t after, uint64_t upto) const {
  if (size_t(stream) >= stream_agent_.size() || stream_agent_[size_t(stream)] < 0) return "";
  const int agent = stream_agent_[size_t(stream)];
  for (const auto& [begin, r] : ranges_)
    if (r.written && r.last_write.agent == agent && r.last_write.epoch > after &&
        r.last_write.epoch <= upto)
      return memory_name(begin) + ", written by " + texts_[size_t(r.last_write.what)];
  return "";
}

std::string RaceDetector::memory_name(uintptr_t address) const {
  auto it = names_.upper_bound(address);
  if (it == names_.begin()) return "device memory";
  --it;
  if (address >= it->second.first) return "device memory";
  return texts_[size_t(it->second.second)];
}

int RaceDetector::agent_of_stream(int stream) {
  if (size_t(stream) >= stream_agent_.size()) stream_agent_.resize(size_t(stream) + 1, -1);
  int& agent = stream_agent_[size_t(stream)];
  if (agent < 0) {
    agent = int(clocks_.size());
    clocks_.emplace_back();
    agent_stream_.push_back(stream);
    agent_event_.push_back(-1);
    waits_.emplace_back();
  }
  return agent;
}

int RaceDetector::agent_of_event(int event) {
  if (size_t(event) >= event_agent_.size()) {
    event_agent_.resize(size_t(event) + 1, -1);
    event_clock_.resize(size_t(event) + 1);
  }
  int& agent = event_agent_[size_t(event)];
  if (agent < 0) {
    agent = int(clocks_.size());
    clocks_.emplace_back();
    agent_stream_.push_back(-1);
    agent_event_.push_back(event);
    waits_.emplace_back();
  }
  return agent;
}

RaceDetector::Clock& RaceDetector::clock(int agent) { return clocks_[size_t(agent)]; }

uint64_t& RaceDetector::at(Clock& c, int agent) {
  if (size_t(agent) >= c.size()) c.resize(size_t(agent) + 1, 0);
  return c[size_t(agent)];
}

void RaceDetector::join(Clock& into, const Clock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

void RaceDetector::inherit_host(int agent) { join(clock(agent), host_); }

void RaceDetector::access(int stream, uint64_t sequence, const void* ptr, size_t bytes, bool write,
                          const char* kernel, bool freeing) {
  if (bytes == 0 || !ptr) return;
  const int agent = agent_of_stream(stream);
  inherit_host(agent);
  // Work issued later on the stream may have declared its accesses already (the host issues
  // ahead of the device): the stream's clock never goes back.
  at(clock(agent), agent) = std::max(at(clock(agent), agent), sequence);
  const auto begin = reinterpret_cast<uintptr_t>(ptr);
  const std::string instruction = instruction_ >= 0 ? texts_[size_t(instruction_)] : "host code";
  Access mine{agent, sequence,
              intern(std::string(kernel) + " of " + instruction + " (" + memory_name(begin) + ")")};
  if (!freeing || suspended_host_.empty())
    return check_and_record(agent, mine, begin, begin + bytes, write);
  // A free by running work happens now: it knows what the host has seen finish by now, not only
  // what it knew when the work was issued (a send's buffer held until the send was seen done).
  Clock knowing = clock(agent);
  join(knowing, suspended_host_.back());
  check_and_record(agent, mine, begin, begin + bytes, write, &knowing);
}

void RaceDetector::comm_begin(int event, int stream) {
  const int from = agent_of_stream(stream);
  const int agent = agent_of_event(event);
  inherit_host(from);
  const uint64_t epoch = at(clock(agent), agent) + 1;
  Clock c = clock(from);
  at(c, agent) = epoch;
  clock(agent) = c;
  event_clock_[size_t(event)] = c;
}

void RaceDetector::comm_access(int event, const void* ptr, size_t bytes, bool write,
                               const char* what) {
  if (bytes == 0 || !ptr) return;
  const int agent = agent_of_event(event);
  const auto begin = reinterpret_cast<uintptr_t>(ptr);
  const std::string instruction = instruction_ >= 0 ? texts_[size_t(instruction_)] : "host code";
  Access mine{agent, at(clock(agent), agent),
              intern(std::string(what) + " of " + instruction + " (" + memory_name(begin) + ")")};
  check_and_record(agent, mine, begin, begin + bytes, write);
}

void RaceDetector::record_event(int event, int stream, uint64_t sequence) {
  const int agent = agent_of_stream(stream);
  agent_of_event(event);
  inherit_host(agent);
  at(clock(agent), agent) = std::max(at(clock(agent), agent), sequence);
  event_clock_[size_t(event)] = clock(agent);
}

void RaceDetector::wait_event(int stream, int event, uint64_t sequence) {
  const int agent = agent_of_stream(stream);
  agent_of_event(event);
  inherit_host(agent);
  join(clock(agent), event_clock_[size_t(event)]);
  waits_[size_t(agent)].emplace_back(sequence, clock(agent));
}

void RaceDetector::host_saw_event(int event) {
  if (size_t(event) < event_clock_.size()) join(host_, event_clock_[size_t(event)]);
}

void RaceDetector::host_saw_stream(int stream, uint64_t sequence) {
  const int agent = agent_of_stream(stream);
  uint64_t& seen = at(host_, agent);
  if (seen >= sequence) return;
  seen = sequence;
  // What the stream had waited for by then has finished too.
  auto& waits = waits_[size_t(agent)];
  auto last = std::find_if(waits.rbegin(), waits.rend(),
                           [&](const auto& w) { return w.first <= sequence; });
  if (last == waits.rend()) return;
  join(host_, last->second);
  waits.erase(waits.begin(), last.base());
}

void RaceDetector::synchronized() {
  for (size_t a = 0; a < clocks_.size(); ++a)
    if (agent_stream_[a] >= 0)
      host_saw_stream(agent_stream_[a], clocks_[a].size() > a ? clocks_[a][a] : 0);
}

void RaceDetector::host_write(const void* ptr, size_t bytes, const char* what) {
  if (bytes == 0 || !ptr) return;
  const auto begin = reinterpret_cast<uintptr_t>(ptr), end = begin + bytes;
  split_at(begin);
  split_at(end);
  for (auto it = ranges_.lower_bound(begin); it != ranges_.end() && it->first < end;) {
    Range& r = it->second;
    auto unordered = [&](const Access& a) { return at(host_, a.agent) < a.epoch; };
    Access host{kHost, 0, intern(std::string(what) + " (" + memory_name(begin) + ")")};
    if (r.written && unordered(r.last_write)) report(host, r.last_write, true, true, it->first);
    for (const Access& a : r.reads)
      if (unordered(a)) report(host, a, true, false, it->first);
    it = ranges_.erase(it);  // every access so far is over; later work is issued after this
  }
}

void RaceDetector::host_read(const void* ptr, size_t bytes, const char* what) {
  if (bytes == 0 || !ptr) return;
  const auto begin = reinterpret_cast<uintptr_t>(ptr), end = begin + bytes;
  split_at(begin);
  split_at(end);
  for (auto it = ranges_.lower_bound(begin); it != ranges_.end() && it->first < end; ++it) {
    const Range& r = it->second;
    if (r.written && at(host_, r.last_write.agent) < r.last_write.epoch) {
      Access host{kHost, 0, intern(std::string(what) + " (" + memory_name(it->first) + ")")};
      report(host, r.last_write, false, true, it->first);
    }
  }
}

void RaceDetector::split_at(uintptr_t address) {
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return;
  --it;
  if (it->first == address || it->second.end <= address) return;
  Range tail = it->second;
  it->second.end = address;
  ranges_.emplace(address, std::move(tail));
}

void RaceDetector::check_and_record(int agent, const Access& mine, uintptr_t begin, uintptr_t end,
                                    bool write, const Clock* knowing) {
  split_at(begin);
  split_at(end);
  const Clock& mine_clock = knowing ? *knowing : clock(agent);
  auto unordered = [&](const Access& a) {
    const uint64_t known = size_t(a.agent) < mine_clock.size() ? mine_clock[size_t(a.agent)] : 0;
    return a.agent != agent && known < a.epoch;
  };
  uintptr_t cur = begin;
  auto it = ranges_.lower_bound(begin);
  while (cur < end) {
    if (it == ranges_.end() || it->first > cur) {  // never accessed: a fresh range
      const uintptr_t stop = it == ranges_.end() ? end : std::min(end, it->first);
      it = ranges_.emplace_hint(it, cur, Range{stop, {}, false, {}});
    }
    Range& r = it->second;
    if (r.written && unordered(r.last_write)) report(mine, r.last_write, write, true, it->first);
    if (write) {
      for (const Access& a : r.reads)
        if (unordered(a)) report(mine, a, true, false, it->first);
      r.reads.clear();
      r.last_write = mine;
      r.written = true;
    } else {
      auto same = std::find_if(r.reads.begin(), r.reads.end(),
                               [&](const Access& a) { return a.agent == agent; });
      if (same == r.reads.end())
        r.reads.push_back(mine);
      else
        *same = mine;
    }
    cur = r.end;
    ++it;
  }
}

std::string RaceDetector::agent_name(int agent) const {
  if (agent == kHost) return "the host";
  if (agent_stream_[size_t(agent)] >= 0)
    return "stream " + std::to_string(agent_stream_[size_t(agent)]);
  return "the communication of event " + std::to_string(agent_event_[size_t(agent)]);
}

void RaceDetector::report(const Access& mine, const Access& theirs, bool mine_writes,
                          bool theirs_writes, uintptr_t address) const {
  throw OrderingError(
      "strict device: unordered access to " + memory_name(address) + ": " +
      texts_[size_t(mine.what)] + " on " + agent_name(mine.agent) +
      (mine_writes ? " writes it" : " reads it") + " while " + texts_[size_t(theirs.what)] +
      " on " + agent_name(theirs.agent) +
      (theirs_writes ? " may still be writing it" : " may still be reading it") +
      "; nothing orders the two (a Wait on an event after the earlier access, a record_use on "
      "its stream before the free, or a synchronisation)");
}

}  // namespace wt
