#include "plan/burst_planner.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace wt {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

void check_costs(const BurstCosts& c) {
  const size_t n = c.counts.size(), units = c.comp.size();
  if (n == 0 || units == 0) throw std::invalid_argument("burst planner: no units or no counts");
  for (size_t k = 0; k < n; ++k)
    if (c.counts[k] < 1 || (k > 0 && c.counts[k] <= c.counts[k - 1]))
      throw std::invalid_argument("burst planner: counts must be positive and ascending");
  if (c.sync.size() != units || c.comm.size() != units)
    throw std::invalid_argument("burst planner: comp, sync and comm disagree on the unit count");
  for (size_t u = 0; u < units; ++u) {
    if (c.comp[u].size() != n || c.sync[u].size() != n || c.comm[u].size() != n)
      throw std::invalid_argument("burst planner: unit " + std::to_string(u) +
                                  " does not have one cost per count");
    for (const auto& row : c.comm[u])
      if (row.size() != n)
        throw std::invalid_argument("burst planner: unit " + std::to_string(u) +
                                    "'s comm is not counts x counts");
  }
  if (!c.layer_own.empty() && c.layer_own.size() != units)
    throw std::invalid_argument("burst planner: layer_own disagrees on the unit count");
  for (size_t u = 0; u < c.layer_own.size(); ++u) {
    if (c.layer_own[u].empty())
      throw std::invalid_argument("burst planner: unit " + std::to_string(u) + " has no layers");
    for (const auto& layer : c.layer_own[u])
      if (layer.size() != n)
        throw std::invalid_argument("burst planner: a layer of unit " + std::to_string(u) +
                                    " does not have one time per count");
  }
}

// The dynamic program's tables, [unit][count index].
struct Tables {
  std::vector<std::vector<double>> S, T, amp;
  std::vector<std::vector<int>> pred;         // count index of the predecessor unit
  std::vector<std::vector<int>> seg_begin;    // segment_sync: first unit of the path's segment
  std::vector<std::vector<double>> seg_sync;  // segment_sync: that segment's sync so far
};

// The sync unit u adds at count index k: its own (table), or with segment_sync what it adds to
// the segment [begin, u] it closes on the path (begin = u: a new segment).
double unit_sync(const BurstCosts& c, int u, size_t k, int begin, double segment_so_far) {
  if (!c.segment_sync) return c.sync[size_t(u)][k];
  return c.segment_sync(begin, u + 1, k) - (begin == u ? 0.0 : segment_so_far);
}

// Amp(u, g): GPU-seconds at g over the single-rank time, per layer when the table lists them
// (the unit's worst layer); 1 for exempt (tiny) layers. `comm` and `sync` are the unit's
// incoming transfer and its (segment) sync on the path; `t` its whole time.
double amplification(const BurstCosts& c, const BurstOptions& o, int u, size_t k, double comm,
                     double sync, double t) {
  if (c.counts[0] != 1) return 1.0;
  const double g = c.counts[k];
  if (c.layer_own.empty()) {
    const double single = c.comp[size_t(u)][0] + unit_sync(c, u, 0, u, 0.0);
    if (single <= o.amp_exempt_s || single <= 0 || t <= 0) return 1.0;
    return t * g / single;
  }
  const double extra = comm + (c.segment_sync ? sync : 0.0);  // else in the layers' own times
  double worst = -1;                                          // the worst layer that is not exempt
  const auto& layers = c.layer_own[size_t(u)];
  for (size_t l = 0; l < layers.size(); ++l) {
    const double single =
        layers[l][0] + (l == 0 && c.segment_sync ? c.segment_sync(u, u + 1, 0) : 0.0);
    const double time = layers[l][k] + (l == 0 ? extra : 0.0);
    if (single <= o.amp_exempt_s || single <= 0 || time <= 0) continue;  // exempt: 1
    worst = std::max(worst, time * g / single);
  }
  return worst < 0 ? 1.0 : worst;
}

// Whether predecessor amplification `amp` with candidate time `cand` is admitted over the best
// so far; updates best_amp when it is.
bool admit(const BurstOptions& o, double amp, double cand, double best_s, double& best_amp) {
  if (o.admission == BurstOptions::Admission::DeepPoolCode) {
    if (!(cand < best_s && (amp < o.amp_limit || amp < best_amp))) return false;
    best_amp = amp;
    return true;
  }
  if (!(amp <= std::max(best_amp, o.amp_limit) && cand <= best_s)) return false;
  best_amp = std::min(best_amp, amp);
  return true;
}

Tables search_linear(const BurstCosts& c, const BurstOptions& o) {
  const int units = c.units();
  const size_t n = c.counts.size();
  Tables t;
  t.S.assign(size_t(units), std::vector<double>(n, kInf));
  t.T = t.S;
  t.amp = t.S;
  t.seg_sync = t.S;
  t.pred.assign(size_t(units), std::vector<int>(n, -1));
  t.seg_begin = t.pred;
  // DeepPool's code starts bestAmplification at 999999, the paper at infinity.
  const double no_amp = o.admission == BurstOptions::Admission::DeepPoolCode ? 999999.0 : kInf;
  for (int u = 0; u < units; ++u)
    for (size_t g = 0; g < n; ++g) {
      double best_s = kInf, best_comm = 0, best_sync = 0, best_amp = no_amp;
      int best_begin = u;
      for (size_t h = 0; h < n; ++h) {  // ascending: the rule depends on this order
        const bool continues = u > 0 && h == g;
        const int begin = continues ? t.seg_begin[size_t(u - 1)][g] : u;
        const double sync =
            unit_sync(c, u, g, begin, continues ? t.seg_sync[size_t(u - 1)][g] : 0.0);
        const double prev_s = u == 0 ? 0.0 : t.S[size_t(u - 1)][h];
        const double prev_amp = u == 0 ? 1.0 : t.amp[size_t(u - 1)][h];
        const double comm = u == 0 ? 0.0 : c.comm[size_t(u)][h][g];
        const double cand = prev_s + comm + sync;
        if (!admit(o, prev_amp, cand, best_s, best_amp)) continue;
        best_s = cand;
        best_comm = comm;
        best_sync = sync;
        best_begin = begin;
        t.pred[size_t(u)][g] = static_cast<int>(h);
      }
      const double comp = c.comp[size_t(u)][g];
      t.S[size_t(u)][g] = best_s + comp;
      t.T[size_t(u)][g] = best_comm + comp + best_sync;
      t.seg_begin[size_t(u)][g] = best_begin;
      t.seg_sync[size_t(u)][g] = best_sync + (best_begin == u ? 0.0 : t.seg_sync[size_t(u - 1)][g]);
      t.amp[size_t(u)][g] = amplification(c, o, u, g, best_comm, best_sync, t.T[size_t(u)][g]);
    }
  return t;
}

}  // namespace

namespace {

// The plan that runs unit u on counts[chosen[u]] ranks, priced along its own path.
BurstPlan price_plan(const BurstCosts& costs, const BurstOptions& options,
                     const std::vector<size_t>& chosen) {
  BurstPlan plan;
  int widest = 1, begin = 0;
  double segment_so_far = 0;
  for (int u = 0; u < costs.units(); ++u) {
    const size_t k = chosen[size_t(u)];
    if (u > 0 && chosen[size_t(u - 1)] != k) begin = u;
    BurstUnitPlan p;
    p.count = costs.counts[k];
    p.comp_s = costs.comp[size_t(u)][k];
    p.sync_s = unit_sync(costs, u, k, begin, segment_so_far);
    segment_so_far = (begin == u ? 0.0 : segment_so_far) + p.sync_s;
    p.comm_s = u == 0 ? 0.0 : costs.comm[size_t(u)][chosen[size_t(u - 1)]][k];
    const double unit_s = p.comm_s + p.comp_s + p.sync_s;
    p.cumulative_s = (u == 0 ? 0.0 : plan.units.back().cumulative_s) + unit_s;
    p.amplification = amplification(costs, options, u, k, p.comm_s, p.sync_s, unit_s);
    plan.gpu_seconds += p.count * unit_s;
    widest = std::max(widest, p.count);
    plan.units.push_back(p);
  }
  plan.step_s = plan.units.back().cumulative_s;
  plan.optimizer_step_s = costs.optimizer_step_s;
  plan.idle_s.assign(size_t(widest), plan.step_s);
  for (const BurstUnitPlan& p : plan.units)
    for (int r = 0; r < p.count; ++r) plan.idle_s[size_t(r)] -= p.comm_s + p.comp_s + p.sync_s;
  for (double& idle : plan.idle_s) idle = std::max(0.0, idle);  // rounding on the busiest rank
  return plan;
}

}  // namespace

BurstOptions::Admission burst_admission(const std::string& cost_model) {
  return cost_model == "deeppool" ? BurstOptions::Admission::DeepPoolCode
                                  : BurstOptions::Admission::Paper;
}

BurstPlan plan_burst(const BurstCosts& costs, const BurstOptions& options) {
  check_costs(costs);
  const Tables t = search_linear(costs, options);
  const int units = costs.units();
  const auto& last = t.S.back();
  size_t g = size_t(std::min_element(last.begin(), last.end()) - last.begin());  // first minimum
  std::vector<size_t> chosen(static_cast<size_t>(units));
  for (int u = units - 1; u >= 0; --u) {
    chosen[size_t(u)] = g;
    if (u > 0) g = size_t(t.pred[size_t(u)][g]);
  }
  return price_plan(costs, options, chosen);
}

BurstPlan price_burst_plan(const BurstCosts& costs, const BurstOptions& options,
                           const std::vector<int>& unit_counts) {
  check_costs(costs);
  if (static_cast<int>(unit_counts.size()) != costs.units())
    throw std::invalid_argument("a forced plan needs one rank count per unit (" +
                                std::to_string(costs.units()) + "), got " +
                                std::to_string(unit_counts.size()));
  std::vector<size_t> chosen;
  for (int count : unit_counts) {
    auto it = std::find(costs.counts.begin(), costs.counts.end(), count);
    if (it == costs.counts.end())
      throw std::invalid_argument(std::to_string(count) + " is not a candidate rank count");
    chosen.push_back(size_t(it - costs.counts.begin()));
  }
  return price_plan(costs, options, chosen);
}

std::vector<BurstPlan::Segment> BurstPlan::segments() const {
  std::vector<Segment> out;
  for (int u = 0; u < static_cast<int>(units.size()); ++u) {
    if (!out.empty() && out.back().count == units[size_t(u)].count)
      out.back().unit_end = u + 1;
    else
      out.push_back({u, u + 1, units[size_t(u)].count});
  }
  return out;
}

std::string burst_plan_table(const BurstPlan& plan, const std::vector<std::string>& unit_names) {
  std::string out =
      "unit                     ranks    comp ms    comm ms    sync ms  cumul ms    amp\n";
  char line[160];
  for (size_t u = 0; u < plan.units.size(); ++u) {
    const BurstUnitPlan& p = plan.units[u];
    const std::string name = u < unit_names.size() ? unit_names[u] : std::to_string(u);
    std::snprintf(line, sizeof line, "%-24s %6d %10.3f %10.3f %10.3f %9.3f %6.2f\n",
                  name.substr(0, 24).c_str(), p.count, p.comp_s * 1e3, p.comm_s * 1e3,
                  p.sync_s * 1e3, p.cumulative_s * 1e3, p.amplification);
    out += line;
  }
  std::snprintf(line, sizeof line,
                "predicted step %.3f ms, %.3f GPU-ms, idle per rank (ms):", plan.step_s * 1e3,
                plan.gpu_seconds * 1e3);
  out += line;
  for (double idle : plan.idle_s) {
    std::snprintf(line, sizeof line, " %.3f", idle * 1e3);
    out += line;
  }
  out += "\n";
  if (plan.optimizer_step_s > 0) {
    std::snprintf(line, sizeof line,
                  "optimizer step %.3f ms after it, the same in every plan (the simulator adds "
                  "it: %.3f ms)\n",
                  plan.optimizer_step_s * 1e3, (plan.step_s + plan.optimizer_step_s) * 1e3);
    out += line;
  }
  return out;
}

}  // namespace wt
