package mxc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The KVStore: "local" sums against loops here in list order, an
// optimizer against calling its operator directly, errors, "dist_sync"
// outside an MPI job; TestKVStoreDist runs across the ranks of an MPI job
// (run_tests.sh starts it with mpirun -np 2 when Open MPI is installed).

func mustKV(t *testing.T, kind string) *KVStore {
	t.Helper()
	kv, err := NewKVStore(kind)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return kv
}

// ok returns v, or panics with err (which fails the test): Go cannot
// pass f()'s two results next to another argument.
func ok[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func randomFloats(seed int64, n int) []float32 {
	r := rand.New(rand.NewSource(seed))
	out := make([]float32, n)
	for i := range out {
		out[i] = r.Float32()*4 - 2
	}
	return out
}

func TestKVStoreLocalSumsInListOrder(t *testing.T) {
	kv := mustKV(t, "local")
	if r := ok(kv.Rank()); r != 0 {
		t.Fatalf("rank %d", r)
	}
	if n := ok(kv.NumWorkers()); n != 1 {
		t.Fatalf("workers %d", n)
	}
	if k := ok(kv.Type()); k != "local" {
		t.Fatalf("type %q", k)
	}
	const n = 50
	if err := kv.Init([]string{"w"}, ok(Zeros(Float32, n))); err != nil {
		t.Fatal(err)
	}
	vals := [][]float32{randomFloats(1, n), randomFloats(2, n), randomFloats(3, n)}
	var arrays []*NDArray
	for _, v := range vals {
		arrays = append(arrays, ok(FromFloat32(v, n)))
	}
	if err := kv.Push([]string{"w", "w", "w"}, 0, arrays...); err != nil {
		t.Fatal(err)
	}
	out := ok(Zeros(Float32, n))
	if err := kv.Pull([]string{"w"}, 0, out); err != nil {
		t.Fatal(err)
	}
	got := ok(out.Float32s())
	for i := range got {
		want := vals[0][i]
		want += vals[1][i]
		want += vals[2][i]
		if got[i] != want {
			t.Fatalf("element %d: %v, want %v", i, got[i], want)
		}
	}
}

func TestKVStoreOptimizerMatchesItsOperator(t *testing.T) {
	kv := mustKV(t, "local")
	params := map[string]string{"lr": "0.1", "momentum": "0.9", "wd": "0.01"}
	if err := kv.SetOptimizer("sgd_mom_update", params); err != nil {
		t.Fatal(err)
	}
	w0, g := randomFloats(4, 20), randomFloats(5, 20)
	if err := kv.Init([]string{"w"}, ok(FromFloat32(w0, 20))); err != nil {
		t.Fatal(err)
	}
	ref := ok(FromFloat32(w0, 20))
	mom := ok(Zeros(Float32, 20))
	sgd := ok(FindOp("sgd_mom_update"))
	for step := 0; step < 3; step++ {
		ga := ok(FromFloat32(g, 20))
		if err := kv.Push([]string{"w"}, 0, ga); err != nil {
			t.Fatal(err)
		}
		if err := sgd.CallInto(ref, params, ref, ga, mom); err != nil {
			t.Fatal(err)
		}
	}
	out := ok(Zeros(Float32, 20))
	if err := kv.Pull([]string{"w"}, 0, out); err != nil {
		t.Fatal(err)
	}
	got, want := ok(out.Float32s()), ok(ref.Float32s())
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("element %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestKVStoreErrors(t *testing.T) {
	kv := mustKV(t, "local")
	a := ok(Zeros(Float32, 3))
	wantErr(t, "push before init", kv.Push([]string{"nope"}, 0, a), ErrNotFound, "key 'nope'")
	if err := kv.Init([]string{"w"}, a); err != nil {
		t.Fatal(err)
	}
	b := ok(Zeros(Float32, 4))
	wantErr(t, "other shape", kv.Push([]string{"w"}, 0, b), ErrShape, "key 'w'")
	wantErr(t, "keys and arrays", kv.Push([]string{"w", "w"}, 0, a), ErrInvalidArgument, "2 keys for 1 arrays")
	wantErr(t, "bad optimizer", kv.SetOptimizer("relu", nil), ErrInvalidArgument, "not an update operator")
	_, err := NewKVStore("dist_sync")
	wantErr(t, "dist_sync alone", err, ErrUnsupported, "MPI launcher")
	kv.Close()
	wantErr(t, "closed", kv.Barrier(), ErrInvalidHandle)
}

// The same bytes on every rank: each writes its own, rank 0 compares.
func sameOnEveryRank(t *testing.T, kv *KVStore, rank, n int, mine []float32) {
	t.Helper()
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, mine)
	base := filepath.Join(os.Getenv("TEST_TMPDIR"), "go_kv_")
	if err := os.WriteFile(base+strconv.Itoa(rank), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := kv.Barrier(); err != nil {
		t.Fatal(err)
	}
	if rank == 0 {
		for r := 1; r < n; r++ {
			theirs, err := os.ReadFile(base + strconv.Itoa(r))
			if err != nil || !bytes.Equal(theirs, buf.Bytes()) {
				t.Fatalf("rank %d holds other bytes than rank 0 (%v)", r, err)
			}
		}
	}
	if err := kv.Barrier(); err != nil {
		t.Fatal(err)
	}
}

func TestKVStoreDist(t *testing.T) {
	np := os.Getenv("MXC_TEST_NP")
	if np == "" {
		t.Skip("runs under mpirun (run_tests.sh sets MXC_TEST_NP)")
	}
	kv := mustKV(t, "dist_sync")
	rank, n := ok(kv.Rank()), ok(kv.NumWorkers())
	if strconv.Itoa(n) != np {
		t.Fatalf("%d workers, want %s", n, np)
	}
	// init: rank 0's value everywhere; pushpull: the sum over the ranks.
	w := ok(FromFloat32([]float32{float32(rank + 1), 5}, 2))
	if err := kv.Init([]string{"w"}, w); err != nil {
		t.Fatal(err)
	}
	if err := kv.PushPull([]string{"w"}, 0, w); err != nil {
		t.Fatal(err)
	}
	got := ok(w.Float32s())
	wantFirst := float32(n * (n + 1) / 2)
	if got[0] != wantFirst || got[1] != float32(5*n) {
		t.Fatalf("pushpull gave %v, want [%v %v]", got, wantFirst, 5*n)
	}
	// Adam steps from rank-specific gradients: the same bits everywhere.
	p := ok(FromFloat32(randomFloats(int64(10+rank), 500), 500))
	if err := kv.SetOptimizer("adam_update", map[string]string{"lr": "0.01"}); err != nil {
		t.Fatal(err)
	}
	if err := kv.Init([]string{"p"}, p); err != nil {
		t.Fatal(err)
	}
	for step := 0; step < 20; step++ {
		g := ok(FromFloat32(randomFloats(int64(100*step+rank), 500), 500))
		if err := kv.Push([]string{"p"}, 0, g); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Pull([]string{"p"}, 0, p); err != nil {
		t.Fatal(err)
	}
	sameOnEveryRank(t, kv, rank, n, ok(p.Float32s()))
	// An int key through a Go updater (w -= 0.5 g by a loop): rank 0's
	// initial value minus half the sum over the ranks, on every rank.
	if err := kv.SetUpdater(sgdByHand(0.5, nil)); err != nil {
		t.Fatal(err)
	}
	q := ok(FromFloat32([]float32{float32(10 * (rank + 1)), 3}, 2))
	if err := kv.InitInt([]int64{7}, q); err != nil {
		t.Fatal(err)
	}
	g := ok(FromFloat32([]float32{float32(rank + 1), 2}, 2))
	if err := kv.PushInt([]int64{7}, 0, g); err != nil {
		t.Fatal(err)
	}
	if err := kv.PullInt([]int64{7}, 0, q); err != nil {
		t.Fatal(err)
	}
	got = ok(q.Float32s())
	if want := 10 - 0.5*wantFirst; got[0] != want || got[1] != 3-float32(n) {
		t.Fatalf("int key through the Go updater: %v, want [%v %v]", got, want, 3-n)
	}
}

func TestKVStoreIntKeysSumLikeStringKeys(t *testing.T) {
	kv := mustKV(t, "local")
	const n = 30
	// 3 and "3" are two keys: different values, both summed.
	if err := kv.InitInt([]int64{3, 9}, ok(Zeros(Float32, n)), ok(Zeros(Float32, n))); err != nil {
		t.Fatal(err)
	}
	if err := kv.Init([]string{"3"}, ok(FromFloat32(randomFloats(20, n), n))); err != nil {
		t.Fatal(err)
	}
	vals := [][]float32{randomFloats(21, n), randomFloats(22, n), randomFloats(23, n)}
	var arrays []*NDArray
	for _, v := range vals {
		arrays = append(arrays, ok(FromFloat32(v, n)))
	}
	if err := kv.PushInt([]int64{3, 3, 3}, 0, arrays...); err != nil {
		t.Fatal(err)
	}
	if err := kv.Push([]string{"3", "3", "3"}, 0, arrays...); err != nil {
		t.Fatal(err)
	}
	byInt, byStr := ok(Zeros(Float32, n)), ok(Zeros(Float32, n))
	if err := kv.PullInt([]int64{3}, 0, byInt); err != nil {
		t.Fatal(err)
	}
	if err := kv.Pull([]string{"3"}, 0, byStr); err != nil {
		t.Fatal(err)
	}
	gi, gs := ok(byInt.Float32s()), ok(byStr.Float32s())
	for i := range gi {
		want := vals[0][i]
		want += vals[1][i]
		want += vals[2][i]
		if gi[i] != want || gs[i] != want {
			t.Fatalf("element %d: int key %v, string key %v, want %v", i, gi[i], gs[i], want)
		}
	}
	// pushpull in place; key 9 was never pushed: still zeros before.
	a := ok(FromFloat32(vals[0], n))
	if err := kv.PushPullInt([]int64{9}, 0, a); err != nil {
		t.Fatal(err)
	}
	for i, v := range ok(a.Float32s()) {
		if v != vals[0][i] {
			t.Fatalf("pushpull element %d: %v, want %v", i, v, vals[0][i])
		}
	}
	wantErr(t, "unknown int key", kv.PullInt([]int64{4}, 0, a), ErrNotFound, "4")
	wantErr(t, "int keys and arrays", kv.PushInt([]int64{3, 3}, 0, a), ErrInvalidArgument, "2 keys for 1 arrays")
}

// sgdByHand is a Go updater w -= lr * g over host copies: a loop, not an
// operator.
func sgdByHand(lr float32, seen *[]Key) Updater {
	return func(key Key, grad, weight *NDArray) error {
		if seen != nil {
			*seen = append(*seen, key)
		}
		g, err := grad.Float32s()
		if err != nil {
			return err
		}
		w, err := weight.Float32s()
		if err != nil {
			return err
		}
		for i := range w {
			w[i] -= lr * g[i]
		}
		return CopyFrom(weight, w)
	}
}

func TestKVStoreGoUpdaterEqualsSGDOptimizer(t *testing.T) {
	const n = 40
	byGo, byOp := mustKV(t, "local"), mustKV(t, "local")
	var seen []Key
	if err := byGo.SetUpdater(sgdByHand(0.25, &seen)); err != nil {
		t.Fatal(err)
	}
	if err := byOp.SetOptimizer("sgd_update", map[string]string{"lr": "0.25"}); err != nil {
		t.Fatal(err)
	}
	w0 := randomFloats(30, n)
	for _, kv := range []*KVStore{byGo, byOp} {
		if err := kv.InitInt([]int64{5}, ok(FromFloat32(w0, n))); err != nil {
			t.Fatal(err)
		}
		if err := kv.Init([]string{"w"}, ok(FromFloat32(w0, n))); err != nil {
			t.Fatal(err)
		}
	}
	for step := 0; step < 4; step++ {
		g1, g2 := randomFloats(int64(40+step), n), randomFloats(int64(50+step), n)
		for _, kv := range []*KVStore{byGo, byOp} {
			if err := kv.PushInt([]int64{5, 5}, 0, ok(FromFloat32(g1, n)), ok(FromFloat32(g2, n))); err != nil {
				t.Fatal(err)
			}
			if err := kv.Push([]string{"w"}, 0, ok(FromFloat32(g1, n))); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, key := range []int64{5} {
		a, b := ok(Zeros(Float32, n)), ok(Zeros(Float32, n))
		if err := byGo.PullInt([]int64{key}, 0, a); err != nil {
			t.Fatal(err)
		}
		if err := byOp.PullInt([]int64{key}, 0, b); err != nil {
			t.Fatal(err)
		}
		got, want := ok(a.Float32s()), ok(b.Float32s())
		for i := range got {
			if math.Abs(float64(got[i]-want[i])) > 1e-6 {
				t.Fatalf("key %d element %d: Go updater %v, sgd_update %v", key, i, got[i], want[i])
			}
		}
	}
	if len(seen) != 8 || seen[0] != (Key{Int: 5}) || seen[1] != (Key{Str: "w", IsStr: true}) {
		t.Fatalf("the updater saw keys %v, want 5 and 'w' once per push", seen)
	}
}

func TestKVStoreUpdaterErrorsAndRelease(t *testing.T) {
	before := numUpdaters()
	kv := mustKV(t, "local")
	sentinel := errors.New("updater failed on purpose")
	mode := ""
	if err := kv.SetUpdater(func(Key, *NDArray, *NDArray) error {
		switch mode {
		case "error":
			return sentinel
		case "panic":
			panic("updater panicked on purpose")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	a := ok(Zeros(Float32, 3))
	if err := kv.InitInt([]int64{7}, a); err != nil {
		t.Fatal(err)
	}
	mode = "error"
	err := kv.PushInt([]int64{7}, 0, a)
	wantErr(t, "updater error", err, ErrOperator, "key 7", "failed on purpose")
	if !errors.Is(err, sentinel) {
		t.Fatalf("errors.Is does not reach the updater's error: %v", err)
	}
	mode = "panic"
	wantErr(t, "updater panic", kv.PushPullInt([]int64{7}, 0, a), ErrInternal, "key 7", "panicked on purpose")
	mode = ""
	if err := kv.PushPullInt([]int64{7}, 0, a); err != nil {
		t.Fatalf("the store after an updater failure: %v", err)
	}
	// Each replacement drops the previous registration.
	if got := numUpdaters(); got != before+1 {
		t.Fatalf("%d updaters registered, want %d", got, before+1)
	}
	for i := 0; i < 3; i++ {
		if err := kv.SetUpdater(sgdByHand(0.1, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if got := numUpdaters(); got != before+1 {
		t.Fatalf("after replacing: %d updaters registered, want %d", got, before+1)
	}
	if err := kv.SetOptimizer("sgd_update", map[string]string{"lr": "0.1"}); err != nil {
		t.Fatal(err)
	}
	if got := numUpdaters(); got != before {
		t.Fatalf("after SetOptimizer: %d updaters, want %d", got, before)
	}
	if err := kv.SetUpdater(sgdByHand(0.1, nil)); err != nil {
		t.Fatal(err)
	}
	if err := kv.SetUpdater(nil); err != nil {
		t.Fatal(err)
	}
	if got := numUpdaters(); got != before {
		t.Fatalf("after SetUpdater(nil): %d updaters, want %d", got, before)
	}
	if err := kv.SetUpdater(sgdByHand(0.1, nil)); err != nil {
		t.Fatal(err)
	}
	kv.Close()
	if got := numUpdaters(); got != before {
		t.Fatalf("after Close: %d updaters, want %d", got, before)
	}
	wantErr(t, "closed", kv.SetUpdater(nil), ErrInvalidHandle)
}
