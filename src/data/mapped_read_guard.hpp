#pragma once
// Reading a memory-mapped file that another process truncates raises SIGBUS on the first access
// past the new end, and SIGBUS kills the process: every rank of a job reading a dataset that a
// converter rewrote died without a word (issue 17 §2). Reading a shuffled row through the map
// costs about half what pread() does (0.63 against 1.15 us, bench/read_paths.sh), so the map
// stays, and a read through it runs under this guard: a SIGBUS inside the guarded range on the
// guarded thread ends the read (guarded_mapped_read returns false) instead of the process.
//
// Why process state is unavoidable here: a signal's disposition belongs to the whole process.
// This file pair holds the only such state, kept minimal: one SIGBUS handler, installed on the
// first guarded read and chained to the handler it replaced (Open MPI's, or the default action)
// for every fault that is not a guarded read, and one thread-local pointer to the read in progress
// on each thread. Nothing else in wavetrain may install a SIGBUS handler.
#include <cstddef>
#include <type_traits>

namespace wt {

// Runs fn(arg); returns false if it faulted with SIGBUS inside [base, base + bytes). `fn` is left
// by a siglongjmp in that case, so it must own nothing with a destructor (plain loops over the
// mapped bytes) and must not take locks.
bool guarded_mapped_read_call(const void* base, size_t bytes, void (*fn)(void*), void* arg);

// The same for a lambda (or any callable) under the same rules.
template <class F>
bool guarded_mapped_read(const void* base, size_t bytes, F&& fn) {
  using Fn = std::remove_reference_t<F>;
  return guarded_mapped_read_call(
      base, bytes, [](void* f) { (*static_cast<Fn*>(f))(); }, static_cast<void*>(&fn));
}

}  // namespace wt
