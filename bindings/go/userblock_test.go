package mxc

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// User blocks (NewUserBlock): the forward pass against a loop over the
// children's parameters, fit() learning through one, hybridized against
// imperative, errors and panics of the Go function, many goroutines.

// residual is x + fc(x) with fc a Dense(4) child named fc, reached
// through self.Child (so the Go function captures nothing); calls counts
// the forward function's runs.
func residual(t *testing.T, name string, calls *int) *Block {
	t.Helper()
	add := ok(FindOp("elemwise_add"))
	b, err := NewUserBlock(func(self *Block, in []*NDArray) (*NDArray, error) {
		if calls != nil {
			*calls++
		}
		fc, err := self.Child(0)
		if err != nil {
			return nil, err
		}
		defer fc.Close()
		y, err := fc.Forward(in[0])
		if err != nil {
			return nil, err
		}
		defer y.Close()
		return add.Call(y, in[0])
	}, Named(name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	fc := ok(NewDense(4, Named(name+"fc")))
	defer fc.Close() // the user block keeps its own reference
	if err := b.Add(fc); err != nil {
		t.Fatal(err)
	}
	if err := b.Initialize("uniform", map[string]string{"scale": "0.5"}, false); err != nil {
		t.Fatal(err)
	}
	return b
}

// residualByHand is x + x W^T + bias for rows of 4, in float64.
func residualByHand(x, w, bias []float32) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x)/4; r++ {
		for j := 0; j < 4; j++ {
			s := float64(bias[j])
			for k := 0; k < 4; k++ {
				s += float64(x[4*r+k]) * float64(w[4*j+k])
			}
			out[4*r+j] = s + float64(x[4*r+j])
		}
	}
	return out
}

func nearByHand(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %v, by hand %v", what, i, got[i], want[i])
		}
	}
}

func TestUserBlockForwardMatchesHandComputation(t *testing.T) {
	calls := 0
	b := residual(t, "res", &calls)
	xs := randomFloats(7, 12)
	y := ok(b.Forward(ok(FromFloat32(xs, 3, 4))))
	if n := ok(b.NumChildren()); n != 1 {
		t.Fatalf("%d children", n)
	}
	names := ok(b.ParamNames())
	if fmt.Sprint(names) != "[resfc_weight resfc_bias]" {
		t.Fatalf("parameters %v: the child's are the user block's", names)
	}
	w, bias := ok(ok(b.Param("resfc_weight")).Float32s()), ok(ok(b.Param("resfc_bias")).Float32s())
	nearByHand(t, "forward", ok(y.Float32s()), residualByHand(xs, w, bias))
	if calls != 1 {
		t.Fatalf("forward function ran %d times, want 1", calls)
	}
	if got := ok(y.Shape()); fmt.Sprint(got) != "[3 4]" {
		t.Fatalf("shape %v", got)
	}
}

func TestUserBlockHybridizedEqualsImperative(t *testing.T) {
	calls := 0
	b := residual(t, "hres", &calls)
	xs := randomFloats(8, 20)
	x := ok(FromFloat32(xs, 5, 4))
	imperative := ok(ok(b.Forward(x)).Float32s())
	if err := b.Hybridize(true); err != nil {
		t.Fatal(err)
	}
	first := ok(ok(b.Forward(x)).Float32s()) // traced: the function runs
	traced := calls
	second := ok(ok(b.Forward(x)).Float32s()) // the bound graph
	nearAll(t, "hybridized (trace)", imperative, first)
	nearAll(t, "hybridized", imperative, second)
	if calls != traced || traced < 2 {
		t.Fatalf("forward ran %d times then %d: a hybridized pass must run the graph, not Go", traced, calls)
	}
	w, bias := ok(ok(b.Param("hresfc_weight")).Float32s()), ok(ok(b.Param("hresfc_bias")).Float32s())
	nearByHand(t, "hybridized", second, residualByHand(xs, w, bias))
}

// classifier is fc2(relu(fc1(x))) for the blobs problem, children
// captured by the Go function.
func classifier(t *testing.T, failAt int) *Block {
	fc1 := ok(NewDense(16, WithActivation("relu"), Named("ufc1")))
	fc2 := ok(NewDense(3, Named("ufc2")))
	n := 0
	net := ok(NewUserBlock(func(_ *Block, in []*NDArray) (*NDArray, error) {
		if n++; n == failAt {
			return nil, fmt.Errorf("forward failed on purpose at call %d", n)
		}
		h, err := fc1.Forward(in[0])
		if err != nil {
			return nil, err
		}
		defer h.Close()
		return fc2.Forward(h)
	}, Named("unet")))
	if err := net.Add(fc1, fc2); err != nil {
		t.Fatal(err)
	}
	if err := net.Initialize("xavier", nil, false); err != nil {
		t.Fatal(err)
	}
	return net
}

func TestUserBlockFitLearns(t *testing.T) {
	d := writeFitData(t)
	net := classifier(t, 0)
	defer net.Close()
	loss := ok(NewSoftmaxCrossEntropyLoss())
	opt := ok(NewSGD(net, 0.1, 0.9))
	fit := ok(NewFit(net, loss, opt, WithEpochs(4), WithProgress("0")))
	defer fit.Close()
	if err := fit.Run(iter(t, d.train, d.trainLabels, 16), iter(t, d.val, d.valLabels, 16)); err != nil {
		t.Fatal(err)
	}
	if acc := fit.ValAccuracy(); acc < 0.95 {
		t.Fatalf("val accuracy %v, want >= 0.95", acc)
	}
}

func TestUserBlockErrorsAndPanics(t *testing.T) {
	x := ok(FromFloat32(randomFloats(9, 8), 2, 4))
	sentinel := errors.New("forward failed on purpose")
	mode := ""
	b := ok(NewUserBlock(func(_ *Block, in []*NDArray) (*NDArray, error) {
		switch mode {
		case "error":
			return nil, sentinel
		case "panic":
			panic("forward panicked on purpose")
		case "input":
			return in[0], nil
		case "nil":
			return nil, nil
		case "mxc":
			return ok(FindOp("elemwise_add")).Call(in[0], ok(Zeros(Float32, 3)))
		}
		return ok(FindOp("elemwise_add")).Call(in[0], in[0])
	}, Named("failing")))
	defer b.Close()
	cases := []struct {
		mode  string
		code  int
		frags []string
	}{
		{"error", ErrOperator, []string{"user block 'failing'", "failed on purpose"}},
		{"panic", ErrInternal, []string{"user block 'failing'", "panicked on purpose"}},
		{"input", ErrInvalidArgument, []string{"lent to it"}},
		{"nil", ErrInvalidArgument, []string{"nil NDArray"}},
		{"mxc", ErrShape, []string{"user block 'failing'"}},
	}
	for _, c := range cases {
		mode = c.mode
		_, err := b.Forward(x)
		wantErr(t, c.mode, err, c.code, c.frags...)
		if c.mode == "error" && !errors.Is(err, sentinel) {
			t.Fatalf("errors.Is does not reach the forward function's error: %v", err)
		}
		// The block works afterwards, and no stale message stays behind.
		mode = ""
		y := ok(b.Forward(x))
		xs, ys := ok(x.Float32s()), ok(y.Float32s())
		for i := range xs {
			if ys[i] != 2*xs[i] {
				t.Fatalf("after %s: %v, want 2 x %v", c.mode, ys, xs)
			}
		}
		if _, err := FindOp("no_such_operator"); err == nil || strings.Contains(err.Error(), "on purpose") {
			t.Fatalf("a later failure carries the callback's message: %v", err)
		}
	}
}

func TestUserBlockErrorEndsFit(t *testing.T) {
	d := writeFitData(t)
	net := classifier(t, 5)
	defer net.Close()
	loss := ok(NewSoftmaxCrossEntropyLoss())
	opt := ok(NewSGD(net, 0.1, 0))
	fit := ok(NewFit(net, loss, opt, WithEpochs(2), WithProgress("0")))
	defer fit.Close()
	err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil)
	wantErr(t, "fit", err, ErrOperator, "user block 'unet'", "failed on purpose at call 5")
	// The net still trains afterwards (the failing call was the 5th only).
	if err := fit.Run(iter(t, d.train, d.trainLabels, 16), nil); err != nil {
		t.Fatal(err)
	}
}

func TestUserBlockFromManyGoroutines(t *testing.T) {
	b := residual(t, "gres", nil)
	ok(b.Forward(ok(Zeros(Float32, 1, 4)))) // makes the parameters
	w, bias := ok(ok(b.Param("gresfc_weight")).Float32s()), ok(ok(b.Param("gresfc_bias")).Float32s())
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				xs := randomFloats(int64(100*g+i), 8)
				y, err := b.Forward(ok(FromFloat32(xs, 2, 4)))
				if err != nil {
					errs <- err
					return
				}
				got := ok(y.Float32s())
				y.Close()
				want := residualByHand(xs, w, bias)
				for k := range got {
					if math.Abs(float64(got[k])-want[k]) > 1e-5*(1+math.Abs(want[k])) {
						errs <- fmt.Errorf("goroutine %d call %d [%d]: %v, want %v", g, i, k, got[k], want[k])
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestUserBlockBadArguments(t *testing.T) {
	_, err := NewUserBlock(nil)
	wantErr(t, "nil forward", err, ErrInvalidArgument, "forward is nil")
	_, err = NewUserBlock(func(*Block, []*NDArray) (*NDArray, error) { return nil, nil }, WithKey("units", 3))
	wantErr(t, "keys", err, ErrInvalidArgument, "only Named")
	b := residual(t, "bad", nil)
	_, err = b.Child(3)
	wantErr(t, "child out of range", err, ErrInvalidArgument)
}

// waitReleased waits for a user block's Go state to be released. Not at
// once: C runs a freed block's destructor when no other thread is inside
// an mxc call that could still see it (core/base/handle.h), so while other
// goroutines (the finalizers' too) are in mxc it runs a moment later, on
// the last of them to leave. Only a state never released is a leak.
func waitReleased(t *testing.T, st *userBlock, what string) {
	t.Helper()
	for i := 0; i < 500 && !st.released.Load(); i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if !st.released.Load() {
		t.Fatalf("%s, but its Go state (cgo.Handle) was not released within 5 s", what)
	}
}

func TestUserBlockStateIsReleasedWithTheBlock(t *testing.T) {
	fwd := func(_ *Block, in []*NDArray) (*NDArray, error) {
		return ok(FindOp("elemwise_add")).Call(in[0], in[0])
	}
	b := ok(NewUserBlock(fwd))
	st := b.user
	if st.released.Load() {
		t.Fatal("released while the block lives")
	}
	b.Close()
	waitReleased(t, st, "Close freed the block")
	// A container keeps its child (and so the Go state) alive.
	seq := ok(NewSequential())
	c := ok(NewUserBlock(fwd))
	st = c.user
	if err := seq.Add(c); err != nil {
		t.Fatal(err)
	}
	c.Close()
	x := ok(FromFloat32([]float32{1, 2}, 2))
	if got := ok(ok(seq.Forward(x)).Float32s()); got[0] != 2 || got[1] != 4 {
		t.Fatalf("forward through the container: %v", got)
	}
	if st.released.Load() {
		t.Fatal("the child's Go state was released while its container lives")
	}
	seq.Close()
	waitReleased(t, st, "the container was freed")
}
