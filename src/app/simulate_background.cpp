#include "app/simulate_background.hpp"

#include <algorithm>

#include "app/background/background_training.hpp"
#include "app/text_format.hpp"
#include "deck/deck_parser.hpp"

namespace wt {

void print_simulated_background(const RunConfig& config, const DeviceModel& device,
                                const SimulatedRun& run, const SimResult& alone,
                                const std::function<SimulatedRun(int)>& at_ranks,
                                std::ostream& out) {
  const RunConfig bg = parse_deck(config.background.deck);
  check_background_deck(bg);
  const Graph bg_graph = Graph::load(bg.model.file);
  const SimulatedRun bg_run = simulated_run(bg, bg_graph, device, nullptr, 1);
  const SimResult bg_alone = simulate(bg_run.program, bg_run.costs, bg_run.options);
  const double bg_rate = bg_alone.samples_per_s();  // per second of one rank's compute

  SimOptions options = run.options;
  // A tasklet is a run of whole nodes: never more than the background step itself.
  options.background_tasklet_s = std::min(config.background.tasklet_ms * 1e-3, bg_alone.step_s);
  options.background_holds_for_allreduce = config.background.block_during_allreduce;
  const SimResult with = simulate(run.program, run.costs, options);
  const int ranks = run.program.world_size;
  double background_s = 0;
  for (double s : with.background_s) background_s += s;
  const double fg = with.samples_per_s(), bg_samples = background_s / with.step_s * bg_rate;
  out << "  background: " << bg_graph.name << ", batch " << bg.train.global_batch << " ("
      << format_number("%.3f", bg_alone.step_s * 1e3)
      << " ms a step alone on one rank), tasklets of "
      << format_number("%g", config.background.tasklet_ms) << " ms\n";
  out << "    multiplexed: foreground " << format_number("%.1f", fg) << " samples/s (slowdown "
      << format_number("%.3f", with.step_s / alone.step_s) << "), background "
      << format_number("%.1f", bg_samples) << " samples/s in "
      << format_number("%.1f%%", 100 * background_s / (with.step_s * ranks))
      << " of the ranks' time; cluster " << format_number("%.1f", fg + bg_samples) << " samples/s ("
      << format_number("%.2f", (fg + bg_samples) / alone.samples_per_s())
      << "x the foreground alone)\n";
  if (ranks < 2) return;
  const SimulatedRun fewer = at_ranks(ranks - 1);
  const double partitioned = simulate(fewer.program, fewer.costs, fewer.options).samples_per_s();
  out << "    static partition: foreground on " << ranks - 1 << " rank"
      << (ranks - 1 > 1 ? "s " : " ") << format_number("%.1f", partitioned)
      << " samples/s + background alone on 1 rank " << format_number("%.1f", bg_rate)
      << " samples/s = " << format_number("%.1f", partitioned + bg_rate) << " samples/s\n";
}

}  // namespace wt
