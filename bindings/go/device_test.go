package mxc

import (
	"reflect"
	"testing"
)

// GPU cases skip when mxc sees no GPU. Bazel's go_test runs them on the
// fake plug-in (tests/gpu/fake_plugin.c: two GPUs whose memory the host
// cannot read, so a path that read device memory on the host crashes).
func needGPUs(t *testing.T, n int) {
	t.Helper()
	have, err := GPUCount()
	if err != nil {
		t.Fatal(err)
	}
	if have < n {
		t.Skipf("needs %d GPU(s); mxc sees %d", n, have)
	}
}

// must(f())(t) is f's value, or t fails with f's error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantDevice(t *testing.T, a *NDArray, want Device) {
	t.Helper()
	if got := must(a.Device())(t); got != want {
		t.Fatalf("device %v, want %v", got, want)
	}
}

func TestDeviceValues(t *testing.T) {
	if GPU(1).String() != "gpu(1)" || CPU().String() != "cpu(0)" {
		t.Fatalf("names %v %v", GPU(1), CPU())
	}
	if GPU(0) == CPU() || GPU(2) != (Device{KindGPU, 2}) {
		t.Fatal("device comparison")
	}
	a := must(ZerosOn(CPU(), Float32, 2))(t)
	defer a.Close()
	wantDevice(t, a, CPU())
}

func TestGPUCopyRoundTrip(t *testing.T) {
	needGPUs(t, 2)
	x := []float32{-2, -1.5, 0, 0.25, 3, 8.5}
	g0 := must(FromSliceOn(GPU(0), x, 2, 3))(t)
	defer g0.Close()
	g1 := must(g0.CopyToDevice(GPU(1)))(t)
	defer g1.Close()
	h := must(g1.CopyToDevice(CPU()))(t)
	defer h.Close()
	wantDevice(t, g0, GPU(0))
	wantDevice(t, g1, GPU(1))
	wantDevice(t, h, CPU())
	if got := must(ToSlice[float32](h))(t); !reflect.DeepEqual(got, x) {
		t.Fatalf("gpu(0)->gpu(1)->cpu: %v, want %v", got, x)
	}
	if got := must(ToSlice[float32](g1))(t); !reflect.DeepEqual(got, x) {
		t.Fatalf("gpu(1) read: %v, want %v", got, x)
	}
	if s := must(g1.Shape())(t); !reflect.DeepEqual(s, []int64{2, 3}) {
		t.Fatalf("shape %v", s)
	}
}

func TestGPUZerosAndEmpty(t *testing.T) {
	needGPUs(t, 1)
	z := must(ZerosOn(GPU(0), Float64, 4))(t)
	defer z.Close()
	e := must(EmptyOn(GPU(0), Float64, 4))(t)
	defer e.Close()
	if got := must(ToSlice[float64](z))(t); !reflect.DeepEqual(got, make([]float64, 4)) {
		t.Fatalf("zeros: %v", got)
	}
	src := must(FromSlice([]float64{1, 2, 3, 4}, 4))(t)
	defer src.Close()
	if err := src.CopyTo(e); err != nil {
		t.Fatal(err)
	}
	if got := must(ToSlice[float64](e))(t); !reflect.DeepEqual(got, []float64{1, 2, 3, 4}) {
		t.Fatalf("copied: %v", got)
	}
}

func TestGPUElementwiseOps(t *testing.T) {
	needGPUs(t, 1)
	a := must(FromSliceOn(GPU(0), []float32{-1.5, 0, 2, 3.25}, 4))(t)
	defer a.Close()
	b := must(FromSliceOn(GPU(0), []float32{0.5, -4, 1, 0.75}, 4))(t)
	defer b.Close()
	sum := must(must(FindOp("elemwise_add"))(t).Call(a, b))(t)
	defer sum.Close()
	r := must(must(FindOp("relu"))(t).Call(a))(t)
	defer r.Close()
	wantDevice(t, sum, GPU(0))
	// Expected values worked out by hand.
	if got := must(ToSlice[float32](sum))(t); !reflect.DeepEqual(got, []float32{-1, -4, 3, 4}) {
		t.Fatalf("add: %v", got)
	}
	if got := must(ToSlice[float32](r))(t); !reflect.DeepEqual(got, []float32{0, 0, 2, 3.25}) {
		t.Fatalf("relu: %v", got)
	}
}

func TestGPUExecutor(t *testing.T) {
	needGPUs(t, 2)
	data := must(Variable("data"))(t)
	defer data.Close()
	net := must(NewSymbol("relu", nil, "r", data))(t)
	defer net.Close()
	ex := must(net.SimpleBindOn(GPU(1), map[string][]int64{"data": {2, 3}}, GradNull))(t)
	defer ex.Close()
	d := must(ex.Arg("data"))(t)
	defer d.Close()
	wantDevice(t, d, GPU(1))
	if got := must(ToSlice[float32](d))(t); !reflect.DeepEqual(got, make([]float32, 6)) {
		t.Fatalf("simple_bind's zeros: %v", got)
	}
	if err := CopyFrom(d, []float32{-3, 1, -0.5, 2, 0, 4}); err != nil {
		t.Fatal(err)
	}
	if err := ex.Forward(false); err != nil {
		t.Fatal(err)
	}
	out := must(ex.Output(0))(t)
	defer out.Close()
	wantDevice(t, out, GPU(1))
	if got := must(ToSlice[float32](out))(t); !reflect.DeepEqual(got, []float32{0, 1, 0, 2, 0, 4}) {
		t.Fatalf("relu on gpu(1): %v", got)
	}
}

func TestUnusableGPU(t *testing.T) {
	n := must(GPUCount())(t)
	missing := GPU(n + 5)
	_, err := EmptyOn(missing, Float32, 2)
	wantErr(t, "EmptyOn(missing GPU)", err, ErrUnsupported)
	wantErr(t, "Check", missing.Check(), ErrUnsupported)
	h := must(FromSlice([]float32{1}, 1))(t)
	defer h.Close()
	_, err = h.CopyToDevice(missing)
	wantErr(t, "CopyToDevice(missing GPU)", err, ErrUnsupported)
	if n > 0 {
		if err := GPU(0).Check(); err != nil {
			t.Fatal(err)
		}
	}
}
