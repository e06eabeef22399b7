package mxc

import (
	"encoding/json"
	"testing"
)

// The trace parses as JSON and holds the run's operator calls, scope and
// marker; the statistics count the calls.
func TestProfilerTraceParses(t *testing.T) {
	defer ProfilerSetState(ProfilerStop)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(ProfilerSetState(ProfilerStop))
	must(ProfilerSetConfig("profile_all", "1"))
	must(ProfilerSetConfig("profile_engine", "0"))
	must(ProfilerSetState(ProfilerRun))
	if s, err := ProfilerGetState(); err != nil || s != ProfilerRun {
		t.Fatalf("state %v, %v; want running", s, err)
	}
	a, err := FromSlice([]float32{-1, 2, -3, 4}, 2, 2)
	must(err)
	defer a.Close()
	relu, err := FindOp("relu")
	must(err)
	must(ProfilerScope("go scope", func() error {
		for i := 0; i < 3; i++ {
			r, err := relu.Call(a)
			if err != nil {
				return err
			}
			r.Close()
		}
		return nil
	}))
	must(ProfilerMark("go mark"))
	must(WaitAll())
	text, err := ProfilerDumps()
	must(err)
	var trace struct {
		TraceEvents []struct {
			Name string `json:"name"`
			Cat  string `json:"cat"`
			Ph   string `json:"ph"`
		} `json:"traceEvents"`
	}
	must(json.Unmarshal([]byte(text), &trace))
	count := map[string]int{}
	for _, e := range trace.TraceEvents {
		count[e.Cat+"/"+e.Name]++
	}
	if count["operator/relu"] != 3 || count["user/go scope"] != 1 || count["user/go mark"] != 1 {
		t.Fatalf("events %v; want 3 relu, 1 scope, 1 mark", count)
	}
	st, err := ProfilerStats(true, true)
	must(err)
	var stats struct {
		Spans map[string]map[string]struct {
			Calls int `json:"calls"`
		} `json:"spans"`
	}
	must(json.Unmarshal([]byte(st), &stats))
	if got := stats.Spans["operator"]["relu"].Calls; got != 3 {
		t.Fatalf("relu calls %d; want 3 (%s)", got, st)
	}
}

func TestProfilerBadConfig(t *testing.T) {
	wantErr(t, "unknown key", ProfilerSetConfig("no_such_key", "1"),
		ErrInvalidArgument, "no_such_key")
	wantErr(t, "bad state", ProfilerSetState(7), ErrInvalidArgument, "7")
}
