package mxc

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The layer API and fit() from Go on a small synthetic problem: three
// Gaussian blobs in 4-D (separable), written as CSV for the C library's
// CSV iterator. Checked against independent facts: accuracy on held-out
// data, bit-equal parameters of a resumed and an uninterrupted run, the
// imperative forward pass against the hybridized one and the Predictor
// loading the export, live-handle counts.

// blobs writes n examples of 3 classes, centers 3 apart on the first
// three axes, as data and label CSV files in dir.
func blobs(t *testing.T, dir, name string, n int, seed int64) (string, string) {
	r := rand.New(rand.NewSource(seed))
	var d, l strings.Builder
	for i := 0; i < n; i++ {
		c := i % 3
		for j := 0; j < 4; j++ {
			v := r.NormFloat64() * 0.7
			if j == c {
				v += 3
			}
			if j > 0 {
				d.WriteByte(',')
			}
			fmt.Fprint(&d, v)
		}
		d.WriteByte('\n')
		fmt.Fprintf(&l, "%d\n", c)
	}
	data, labels := filepath.Join(dir, name+".csv"), filepath.Join(dir, name+"_labels.csv")
	if err := os.WriteFile(data, []byte(d.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(labels, []byte(l.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return data, labels
}

type fitData struct{ train, trainLabels, val, valLabels string }

func writeFitData(t *testing.T) fitData {
	dir := t.TempDir()
	var d fitData
	d.train, d.trainLabels = blobs(t, dir, "train", 240, 1)
	d.val, d.valLabels = blobs(t, dir, "val", 120, 2)
	return d
}

// mlp is 4-16-3 with named layers (checkpoints find parameters by name).
func mlp(t *testing.T) *Block {
	net := ok(NewSequential(Named("mlp")))
	fc1 := ok(NewDense(16, WithActivation("relu"), Named("fc1")))
	fc2 := ok(NewDense(3, Named("fc2")))
	defer fc1.Close()
	defer fc2.Close()
	if err := net.Add(fc1, fc2); err != nil {
		t.Fatal(err)
	}
	if err := net.Initialize("xavier", nil, false); err != nil {
		t.Fatal(err)
	}
	return net
}

// newRun is a fresh MLP and a fit of it with SGD + momentum.
func newRun(t *testing.T, opts ...FitOption) (*Block, *Fit) {
	net := mlp(t)
	loss := ok(NewSoftmaxCrossEntropyLoss())
	opt := ok(NewSGD(net, 0.1, 0.9))
	fit := ok(NewFit(net, loss, opt, append(opts, WithProgress("0"))...))
	return net, fit
}

func iter(t *testing.T, data, labels string, batch int64) *DataIter {
	return ok(NewCSVIter(data, labels, batch))
}

func TestFitReachesAccuracyAndTellsListeners(t *testing.T) {
	d := writeFitData(t)
	err := WithScope(func() error {
		epochs, batches := 0, 0
		var accs []float64
		_, fit := newRun(t, WithEpochs(4),
			OnEpochEnd(func(f *Fit) error { accs = append(accs, f.ValAccuracy()); return nil }),
			OnBatchEnd(func(*Fit) error { batches++; return nil }),
			WithListener(func(e FitEvent, f *Fit) error {
				if e == EpochEnd {
					epochs++
				}
				return nil
			}))
		if err := fit.Run(iter(t, d.train, d.trainLabels, 16), iter(t, d.val, d.valLabels, 16)); err != nil {
			return err
		}
		if epochs != 4 || batches != 4*240/16 || fit.Epoch() != 4 {
			t.Errorf("epochs %d, batches %d, Epoch() %d", epochs, batches, fit.Epoch())
		}
		if acc := fit.ValAccuracy(); acc < 0.95 || acc != accs[3] {
			t.Errorf("val accuracy %v (listener saw %v)", acc, accs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestScopeFreesEveryBlockOptimizerAndFit(t *testing.T) {
	d := writeFitData(t)
	before := liveHandles(t)
	var kept *Block
	err := WithScope(func() error {
		_, fit := newRun(t, WithEpochs(1), OnEpochEnd(func(f *Fit) error { return nil }))
		if err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
			return err
		}
		kept = ok(NewDense(2))
		return kept.Keep()
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := liveHandles(t); got != before+1 {
		t.Fatalf("live handles %d after the scope, want %d + the kept block", got, before)
	}
	kept.Close()
	if got := liveHandles(t); got != before {
		t.Fatalf("live handles %d, want %d", got, before)
	}
}

func params(t *testing.T, net *Block) map[string][]float32 {
	m := map[string][]float32{}
	for _, n := range ok(net.ParamNames()) {
		a := ok(net.Param(n))
		m[n] = ok(a.Float32s())
		a.Close()
	}
	return m
}

func TestResumedRunEqualsUninterruptedBitForBit(t *testing.T) {
	d := writeFitData(t)
	prefix := filepath.Join(t.TempDir(), "ck")
	var whole, resumed map[string][]float32
	err := WithScope(func() error {
		noErr(RandomSeed(11))
		net, a := newRun(t, WithEpochs(4), WithLRFactor(20, 0.5))
		if err := a.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
			return err
		}
		whole = params(t, net)
		noErr(RandomSeed(11))
		_, first := newRun(t, WithEpochs(2), WithLRFactor(20, 0.5), WithCheckpoint(prefix, 1))
		if err := first.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
			return err
		}
		noErr(RandomSeed(999)) // the checkpoint restores the random stream
		net2, b := newRun(t, WithEpochs(4), WithLRFactor(20, 0.5), WithResume(prefix+"-0002.fit"))
		if err := b.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
			return err
		}
		resumed = params(t, net2)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(whole))
	for n := range whole {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) != len(resumed) || len(names) != 4 {
		t.Fatalf("parameters %v vs %d resumed", names, len(resumed))
	}
	for _, n := range names {
		w, r := whole[n], resumed[n]
		for i := range w {
			if math.Float32bits(w[i]) != math.Float32bits(r[i]) {
				t.Fatalf("%s[%d]: %v uninterrupted, %v resumed", n, i, w[i], r[i])
			}
		}
	}
}

// A "local" store of one worker trains as without a store (mxc.h): the
// same seeded run gives the same parameter bits, whether the store comes
// by type or as a KVStore closed before the run (the fit holds its own
// reference). A store that changed the updates would differ.
func TestLocalKVStoreTrainsAsWithout(t *testing.T) {
	d := writeFitData(t)
	var runs []map[string][]float32
	for i := 0; i < 3; i++ {
		err := WithScope(func() error {
			noErr(RandomSeed(5))
			opts := []FitOption{WithEpochs(2)}
			if i == 1 {
				opts = append(opts, WithKVStoreType("local"))
			}
			if i == 2 {
				kv := ok(NewKVStore("local"))
				defer kv.Close()
				opts = append(opts, WithKVStore(kv))
			}
			net, fit := newRun(t, opts...)
			if err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
				return err
			}
			if n, r := fit.value("num_workers"), fit.value("rank"); n != 1 || r != 0 {
				t.Errorf("run %d: num_workers %v, rank %v", i, n, r)
			}
			runs = append(runs, params(t, net))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, other := range runs[1:] {
		for n, w := range runs[0] {
			o := other[n]
			if len(o) != len(w) {
				t.Fatalf("run %d: %s has %d values, want %d", i+1, n, len(o), len(w))
			}
			for j := range w {
				if math.Float32bits(w[j]) != math.Float32bits(o[j]) {
					t.Fatalf("run %d: %s[%d] = %v, without a store %v", i+1, n, j, o[j], w[j])
				}
			}
		}
	}
	err := WithScope(func() error {
		net := mlp(t)
		_, err := NewFit(net, ok(NewSoftmaxCrossEntropyLoss()), ok(NewSGD(net, 0.1, 0)),
			WithKVStoreType("no_such_store"))
		if err == nil || !strings.Contains(err.Error(), "no_such_store") {
			t.Errorf("an unknown store type: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestHybridizedEqualsImperativeAndExportLoads(t *testing.T) {
	d := writeFitData(t)
	prefix := filepath.Join(t.TempDir(), "exported")
	err := WithScope(func() error {
		net, fit := newRun(t, WithEpochs(1))
		if err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
			return err
		}
		it := iter(t, d.val, d.valLabels, 8)
		ok(it.Next())
		x := ok(it.Data())
		imperative := ok(ok(net.Forward(x)).Float32s())
		if err := net.Hybridize(true); err != nil {
			return err
		}
		hybrid := ok(ok(net.Forward(x)).Float32s())
		nearAll(t, "hybridized", imperative, hybrid)
		if err := net.Export(prefix, 0); err != nil {
			return err
		}
		p := ok(LoadPredictor(prefix, 0, []Input{{Name: "data", Shape: []int64{8, 4}}}))
		defer p.Close()
		nearAll(t, "predictor", imperative, ok(p.Predict(ok(x.Float32s()))))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func nearAll(t *testing.T, what string, want, got []float32) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(want[i]-got[i])) > 1e-5 {
			t.Fatalf("%s[%d] = %v, imperative %v", what, i, got[i], want[i])
		}
	}
}

func TestListenerErrorsAndPanicsEndTheRunCleanly(t *testing.T) {
	d := writeFitData(t)
	before := liveHandles(t)
	sentinel := errors.New("listener failed on purpose")
	for _, panics := range []bool{false, true} {
		err := WithScope(func() error {
			calls := 0
			_, fit := newRun(t, WithEpochs(3), OnEpochEnd(func(*Fit) error {
				calls++
				if panics {
					panic("listener panicked on purpose")
				}
				return sentinel
			}))
			err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil)
			if panics {
				wantErr(t, "panic", err, ErrInternal, "panicked on purpose")
			} else if !errors.Is(err, sentinel) {
				t.Fatalf("Run: %v, want the listener's error", err)
			}
			if calls != 1 || fit.Epoch() != 1 {
				t.Fatalf("%d calls, %d epochs: the run should end at the first", calls, fit.Epoch())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := liveHandles(t); got != before {
		t.Fatalf("live handles %d, want %d", got, before)
	}
}

func TestFitCannotBeClosedOrRunAgainFromItsListener(t *testing.T) {
	d := writeFitData(t)
	err := WithScope(func() error {
		var fit *Fit
		var errs []error
		_, fit = newRun(t, WithEpochs(2), OnEpochEnd(func(*Fit) error {
			errs = append(errs, fit.Close(), fit.Run(iter(t, d.train, d.trainLabels, 16), nil))
			return nil
		}))
		if err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
			return err
		}
		if len(errs) != 4 {
			t.Fatalf("%d errors, want 4", len(errs))
		}
		for _, e := range errs {
			wantErr(t, "inside Run", e, ErrInvalidArgument, "running")
		}
		if fit.Epoch() != 2 {
			t.Fatalf("epoch %d, want 2", fit.Epoch())
		}
		return fit.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The options reach C's fit: schedule, early stopping, CSV and
// TensorBoard logs.
func TestFitOptionsReachTheCFit(t *testing.T) {
	d := writeFitData(t)
	out := t.TempDir()
	csv, tb := filepath.Join(out, "log.csv"), filepath.Join(out, "tb")
	err := WithScope(func() error {
		_, fit := newRun(t, WithEpochs(5), WithLRCosine(15, 0.001),
			WithEarlyStopping(1, 1e9, "train_loss"), WithCSV(csv), WithTensorBoard(tb))
		if err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
			return err
		}
		if fit.Epoch() != 2 { // epoch 2 cannot improve by 1e9: stop
			t.Errorf("early stopping: %d epochs, want 2", fit.Epoch())
		}
		if lr := ok(fit.Value("lr")); math.Abs(lr-0.001) > 1e-12 {
			t.Errorf("lr %v past max_update, want final_lr 0.001", lr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(string(ok(os.ReadFile(csv)))), "\n")
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "epoch,train_loss") {
		t.Errorf("CSV rows %q", rows)
	}
	files := ok(os.ReadDir(tb))
	if len(files) != 1 || !strings.HasPrefix(files[0].Name(), "events.out.tfevents.") {
		t.Errorf("TensorBoard files %v", files)
	}
}

func TestListenerStopsTheRun(t *testing.T) {
	d := writeFitData(t)
	err := WithScope(func() error {
		_, fit := newRun(t, WithEpochs(5), OnEpochEnd(func(f *Fit) error {
			if f.Epoch() == 2 {
				return f.Stop()
			}
			return nil
		}))
		if err := fit.Run(iter(t, d.train, d.trainLabels, 16), iter(t, d.val, d.valLabels, 16)); err != nil {
			return err
		}
		if fit.Epoch() != 2 {
			t.Fatalf("stopped at epoch %d, want 2", fit.Epoch())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLayerAPIBadArguments(t *testing.T) {
	err := WithScope(func() error {
		_, err := NewBlock("no_such_layer")
		wantErr(t, "kind", err, ErrInvalidArgument, "no_such_layer")
		_, err = NewDense(4, WithActivation("no_such_activation"))
		wantErr(t, "activation", err, ErrInvalidArgument)
		_, err = NewDense(4, WithKey("bogus", 1))
		wantErr(t, "key", err, ErrInvalidArgument, "bogus")
		net := mlp(t)
		_, err = net.Param("fc1_weight")
		wantErr(t, "param before forward", err, ErrInvalidArgument)
		_, err = net.Param("nope")
		wantErr(t, "param name", err, ErrNotFound, "nope")
		wantErr(t, "self add", net.Add(net), ErrInvalidArgument)
		_, err = NewOptimizer(net, "no_such_update", nil)
		if err == nil {
			t.Fatal("unknown update operator accepted")
		}
		opt := ok(NewSGD(net, 0.1, 0))
		loss := ok(NewL2Loss())
		_, err = NewFit(net, loss, opt, WithFitKey("bogus", 1))
		wantErr(t, "fit key", err, ErrInvalidArgument, "bogus")
		_, err = NewFit(net, loss, opt, WithEpochs(-1))
		wantErr(t, "epochs", err, ErrInvalidArgument)
		fit := ok(NewFit(net, loss, opt))
		_, err = fit.Value("nope")
		wantErr(t, "value", err, ErrNotFound, "nope")
		if err := fit.LoadCheckpoint(filepath.Join(t.TempDir(), "none.fit")); err == nil {
			t.Fatal("missing checkpoint loaded")
		}
		fit.Close()
		wantErr(t, "closed fit", fit.Run(nil, nil), ErrInvalidHandle)
		d := ok(NewDense(3))
		d.Close()
		_, err = d.Forward(ok(Zeros(Float32, 2, 4)))
		wantErr(t, "closed block", err, ErrInvalidHandle)
		var nilBlock *Block
		_, err = NewSGD(nilBlock, 0.1, 0)
		wantErr(t, "nil block", err, ErrInvalidHandle)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func noErr(err error) {
	if err != nil {
		panic(err)
	}
}

// A fit pushes from C, so the store's Go updater may be replaced from
// another goroutine while it trains: the store deletes each replaced
// cgo.Handle only after its last call (a deleted handle would panic in
// the updater, a freed one be a use after free under ASan, a race under
// TSan). The fit refuses a store with an updater when it sets up its keys
// (the first step), so the replacing starts after the first batch, which
// waits for the first replacement: every later push runs some updater.
// Each stores the plain sum (grad copied into weight), as a store without
// one does, so the parameters must be the same bits as a run without a
// store, and every handle must be released at the end.
func TestReplacingTheUpdaterWhileTheFitPushesIsSafe(t *testing.T) {
	d := writeFitData(t)
	before := numUpdaters()
	var calls, replaced atomic.Int64
	copyUpdater := func(_ Key, grad, weight *NDArray) error {
		calls.Add(1)
		return grad.CopyTo(weight)
	}
	train := func(kv *KVStore, l Listener) map[string][]float32 {
		var out map[string][]float32
		noErr(WithScope(func() error {
			noErr(RandomSeed(5))
			opts := []FitOption{WithEpochs(2)}
			if kv != nil {
				opts = append(opts, WithKVStore(kv), WithListener(l))
			}
			net, fit := newRun(t, opts...)
			if err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
				return err
			}
			out = params(t, net)
			return nil
		}))
		return out
	}
	alone := train(nil, nil)

	kv := ok(NewKVStore("local"))
	firstBatch, firstUpdater := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var done atomic.Bool
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-firstBatch
		for i := 0; !done.Load() || i < 200; i++ {
			// A new handle each time.
			noErr(kv.SetUpdater(func(k Key, g, w *NDArray) error { return copyUpdater(k, g, w) }))
			replaced.Add(1)
			if i == 0 {
				close(firstUpdater)
			}
		}
	}()
	withStore := train(kv, func(FitEvent, *Fit) error {
		once.Do(func() {
			close(firstBatch)
			<-firstUpdater
		})
		return nil
	})
	done.Store(true)
	<-stopped
	kv.Close()
	if calls.Load() == 0 || replaced.Load() < 200 {
		t.Fatalf("%d updater calls, %d replacements", calls.Load(), replaced.Load())
	}
	for n, w := range alone {
		o := withStore[n]
		if len(o) != len(w) {
			t.Fatalf("%s has %d values, want %d", n, len(o), len(w))
		}
		for j := range w {
			if math.Float32bits(w[j]) != math.Float32bits(o[j]) {
				t.Fatalf("%s[%d] = %v, without a store %v", n, j, o[j], w[j])
			}
		}
	}
	if got := numUpdaters(); got != before {
		t.Fatalf("%d updaters held after the fit and Close, want %d", got, before)
	}
}
