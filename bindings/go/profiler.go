package mxc

import (
	"runtime"

	"mxc.dev/mxc/internal/cmxc"
)

// ProfilerState is the profiler's state (MXC_PROFILER_*).
type ProfilerState int

const (
	ProfilerStop  ProfilerState = 0 // not recording; a run starts afresh
	ProfilerRun   ProfilerState = 1 // recording
	ProfilerPause ProfilerState = 2 // not recording; a run continues
)

// ProfilerSetConfig sets a profiler configuration key (filename,
// profile_all, profile_imperative, profile_symbolic, profile_engine,
// profile_wait, profile_copy, profile_memory, profile_io, profile_user;
// booleans as "1"/"0").
func ProfilerSetConfig(key, value string) error {
	return call(func() { cmxc.Profiler_set_config(key, value) })
}

// ProfilerSetState starts (ProfilerRun), pauses or stops the profiler.
func ProfilerSetState(s ProfilerState) error {
	return call(func() { cmxc.Profiler_set_state(int(s)) })
}

// ProfilerGetState returns the profiler's state.
func ProfilerGetState() (ProfilerState, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := cmxc.Profiler_get_state()
	if s < 0 {
		return 0, lastError()
	}
	return ProfilerState(s), nil
}

// ProfilerDump writes the trace to the configured file; finished also
// stops the profiler and discards the events.
func ProfilerDump(finished bool) error {
	f := 0
	if finished {
		f = 1
	}
	return call(func() { cmxc.Profiler_dump(f) })
}

// ProfilerDumps returns the trace (Chrome trace event JSON: open it in
// ui.perfetto.dev or chrome://tracing).
func ProfilerDumps() (string, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	js := cmxc.Profiler_dumps()
	return js, lastError()
}

// ProfilerStats returns per-operator statistics as a table, or as JSON
// when asJSON; reset discards the events afterwards.
func ProfilerStats(asJSON, reset bool) (string, error) {
	format, r := 0, 0
	if asJSON {
		format = 1
	}
	if reset {
		r = 1
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s := cmxc.Profiler_stats(format, r)
	return s, lastError()
}

// ProfilerScope runs fn inside a named range of the calling thread's
// track. Ranges are per OS thread in C, so the goroutine is pinned for
// the duration. Returns fn's error, or the failure to open the range.
func ProfilerScope(name string, fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmxc.Profiler_range_begin(name)
	if err := lastError(); err != nil {
		return err
	}
	defer cmxc.Profiler_range_end()
	return fn()
}

// ProfilerMark records an instant marker on the calling thread's track.
func ProfilerMark(name string) error {
	return call(func() { cmxc.Profiler_mark(name) })
}

// ProfilerCounter records a value of the counter track name.
func ProfilerCounter(name string, value int64) error {
	return call(func() { cmxc.Profiler_counter(name, value) })
}
