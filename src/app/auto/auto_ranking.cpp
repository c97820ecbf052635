#include "app/auto/auto_ranking.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "app/text_format.hpp"
#include "io/checked_file.hpp"
#include "job/run_preflight.hpp"
#include "job/simulated_run.hpp"
#include "util/input_error.hpp"

namespace wt {

namespace {

// An InputError's message without its "file: key: " prefix: the candidate's name says where.
std::string reason_of(const std::exception& e) {
  const auto* input = dynamic_cast<const InputError*>(&e);
  std::string what = e.what();
  if (!input) return what;
  const std::string prefix = InputError::format(input->file(), input->line(), input->key(), "");
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

RankedCandidate price(const AutoCandidate& c, int index, const Graph& graph,
                      const DeviceModel& device, const LayerProfile* profile, int ranks,
                      int64_t memory_limit, double memory_margin) {
  RankedCandidate row;
  row.index = index;
  row.name = c.name;
  row.overrides = overrides(schedule_choice(c.config));
  row.lossy = c.lossy;
  try {
    const SimulatedRun run = simulated_run(c.config, graph, device, profile, ranks);
    check_program_batches(c.config, run.program);  // as a run refuses it
    const SimResult r = simulate(run.program, run.costs, run.options);
    row.step_s = r.step_s;
    row.samples_per_s = r.samples_per_s();
    row.samples_per_step = r.samples_per_step;
    row.peak_bytes = *std::max_element(r.peak_bytes.begin(), r.peak_bytes.end());
    row.fits = memory_limit <= 0 || double(row.peak_bytes) * memory_margin <= double(memory_limit);
  } catch (const std::exception& e) {  // a schedule these ranks or this model cannot run
    row.impossible = reason_of(e);
  }
  return row;
}

// Fitting rows fastest first, then the ones that do not fit (fastest first), then the impossible.
int rank_class(const RankedCandidate& r) { return !r.impossible.empty() ? 2 : r.fits ? 0 : 1; }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch == '\n' ? ' ' : ch);
  return q + "\"";
}

}  // namespace

AutoRanking rank_auto_candidates(const std::vector<AutoCandidate>& candidates, const Graph& graph,
                                 const DeviceModel& device, const LayerProfile* profile, int ranks,
                                 int64_t memory_limit, double memory_margin) {
  AutoRanking ranking;
  ranking.ranks = ranks;
  ranking.device = device.name;
  ranking.memory_limit = memory_limit;
  ranking.memory_margin = memory_margin;
  ranking.layer_times = profile ? "measured profile" : "roofline";
  for (size_t i = 0; i < candidates.size(); ++i)
    ranking.rows.push_back(
        price(candidates[i], int(i), graph, device, profile, ranks, memory_limit, memory_margin));
  std::stable_sort(ranking.rows.begin(), ranking.rows.end(),
                   [](const RankedCandidate& a, const RankedCandidate& b) {
                     if (rank_class(a) != rank_class(b)) return rank_class(a) < rank_class(b);
                     return a.samples_per_s > b.samples_per_s;
                   });
  return ranking;
}

int auto_pick(const AutoRanking& ranking, bool lossy_allowed) {
  int pick = -1;
  for (size_t i = 0; i < ranking.rows.size(); ++i) {
    const RankedCandidate& r = ranking.rows[i];
    if (rank_class(r) != 0 || (r.lossy && !lossy_allowed)) continue;
    if (pick < 0) pick = int(i);
    if (r.measured_step_s > 0 &&
        (ranking.rows[pick].measured_step_s <= 0 ||
         r.measured_samples_per_s() > ranking.rows[pick].measured_samples_per_s()))
      pick = int(i);
  }
  return pick;
}

std::string auto_reason(const AutoRanking& ranking, int pick) {
  const RankedCandidate& chosen = ranking.rows[pick];
  std::string why = "schedule.kind = \"auto\" chose " + chosen.name + ": predicted " +
                    format_number("%.0f", chosen.samples_per_s) + " samples/s (" +
                    human_seconds(chosen.step_s) + " per step, " +
                    human_bytes(double(chosen.peak_bytes)) + " peak per rank)";
  if (chosen.measured_step_s > 0)
    why += ", measured " + format_number("%.0f", chosen.measured_samples_per_s()) + " samples/s";
  for (size_t i = 0; i < ranking.rows.size(); ++i) {
    const RankedCandidate& r = ranking.rows[i];
    if (int(i) == pick || rank_class(r) != 0 || (r.lossy && !chosen.lossy)) continue;
    why += "; runner-up " + r.name + " at " +
           format_number("%.2fx", r.samples_per_s / chosen.samples_per_s) + " its throughput";
    if (r.measured_step_s > 0)
      why += format_number(" (measured %.2fx)",
                           r.measured_samples_per_s() / chosen.measured_samples_per_s());
    break;
  }
  int too_big = 0;
  for (const RankedCandidate& r : ranking.rows) too_big += rank_class(r) == 1;
  if (too_big > 0)
    why += "; " + std::to_string(too_big) + " candidate(s) do not fit the memory limit of " +
           human_bytes(double(ranking.memory_limit));
  if (chosen.index != ranking.rows.front().index)
    why += "; faster: " + ranking.rows.front().name +
           (ranking.rows.front().lossy ? " (lossy: auto.lossy = false)" : "");
  return why;
}

void write_auto_csv(const std::string& path, const AutoRanking& ranking) {
  std::ostringstream out;
  out << "candidate,predicted_step_s,predicted_samples_per_s,peak_bytes_per_rank,fits,lossy,"
         "measured_step_s,measured_samples_per_s,set,why_not\n";
  for (const RankedCandidate& r : ranking.rows) {
    out << csv_field(r.name) << ',';
    if (r.impossible.empty())
      out << format_number("%.6g", r.step_s) << ',' << format_number("%.6g", r.samples_per_s) << ','
          << r.peak_bytes << ',' << (r.fits ? "yes" : "no");
    else
      out << ",,,no";
    out << ',' << (r.lossy ? "yes" : "no") << ','
        << (r.measured_step_s > 0 ? format_number("%.6g", r.measured_step_s) : "") << ','
        << (r.measured_step_s > 0 ? format_number("%.6g", r.measured_samples_per_s()) : "") << ','
        << r.overrides << ',' << csv_field(r.impossible) << '\n';
  }
  write_file_atomically(path, out.str());
}

void print_auto_ranking(std::ostream& out, const AutoRanking& ranking, int pick) {
  out << "auto: " << ranking.rows.size() << " candidates on " << ranking.ranks << " rank(s) of "
      << ranking.device << ", layer times from the " << ranking.layer_times << ", memory limit "
      << (ranking.memory_limit > 0
              ? human_bytes(double(ranking.memory_limit)) + " per rank (fits: peak x " +
                    format_number("%g", ranking.memory_margin) + " within it)"
              : std::string("none"))
      << "\n";
  out << "      candidate                        step    samples/s   peak/rank  fits\n";
  for (size_t i = 0; i < ranking.rows.size(); ++i) {
    const RankedCandidate& r = ranking.rows[i];
    std::string name = r.name + (r.lossy ? " (lossy)" : "");
    name.resize(std::max<size_t>(name.size(), 30), ' ');
    out << (int(i) == pick ? "  >>  " : "      ") << name;
    if (!r.impossible.empty()) {
      out << "  cannot run: " << r.impossible << "\n";
      continue;
    }
    std::string step = human_seconds(r.step_s);
    out << std::string(std::max<size_t>(1, 10 - step.size()), ' ') << step
        << format_number("%13.1f", r.samples_per_s);
    const std::string peak = human_bytes(double(r.peak_bytes));
    out << std::string(std::max<size_t>(1, 12 - peak.size()), ' ') << peak << "  "
        << (r.fits ? "yes" : "no");
    if (r.measured_step_s > 0)
      out << "  measured " << format_number("%.1f", r.measured_samples_per_s()) << " samples/s";
    out << "\n";
  }
  if (pick < 0)
    out << "auto: no candidate fits the memory limit: each row's peak/rank is its need\n";
}

}  // namespace wt
