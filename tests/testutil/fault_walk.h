// Failure-injection walks (the SQLite faultsim idea): run a scenario with
// the n-th allocation failing, for n = 1, 2, ... until a run sees no
// injected failure. Every failing run must return MXC_ERR_OOM (or
// MXC_OK when the failure was absorbed, e.g. by a cache) and leave the
// library's live allocations and handles as they were before the walk.
#ifndef MXC_TESTS_TESTUTIL_FAULT_WALK_H_
#define MXC_TESTS_TESTUTIL_FAULT_WALK_H_

#include <functional>

namespace mxct {

// Waits for all pushed work and returns cached pool blocks, so that live
// allocation counts compare equal between runs.
void settle();

// Returns the number of runs in which an injected failure fired; adds a
// gtest failure when fewer than min_failures fired, when a failing run
// leaks or returns another error, or when the final run fails.
// warmups: runs before counting live allocations (caches that grow on
// first use, such as the operators' rotating temporary spaces, must be
// full by then).
int alloc_failure_walk(const std::function<int()> &scenario,
                       int min_failures = 1, int warmups = 1);

// The same for I/O operations (core/base/file.h): failing runs must
// return MXC_ERR_IO.
int io_failure_walk(const std::function<int()> &scenario,
                    int min_failures = 1, int warmups = 1);

}  // namespace mxct

#endif  // MXC_TESTS_TESTUTIL_FAULT_WALK_H_
