package mxc

import (
	"math"
	"testing"
)

// roundTrip copies data in and out as T and checks shape, dtype and values.
func roundTrip[T Element](t *testing.T, data []T, shape ...int64) {
	t.Helper()
	a, err := FromSlice(data, shape...)
	if err != nil {
		t.Fatalf("FromSlice[%T]: %v", data, err)
	}
	defer a.Close()
	if dt, err := a.DType(); err != nil || dt != DTypeOf[T]() {
		t.Fatalf("DType = %v, %v; want %v", dt, err, DTypeOf[T]())
	}
	got, err := a.Shape()
	if err != nil || len(got) != len(shape) {
		t.Fatalf("Shape = %v, %v; want %v", got, err, shape)
	}
	for i := range shape {
		if got[i] != shape[i] {
			t.Fatalf("Shape = %v; want %v", got, shape)
		}
	}
	out, err := ToSlice[T](a)
	if err != nil {
		t.Fatalf("ToSlice: %v", err)
	}
	if len(out) != len(data) {
		t.Fatalf("ToSlice: %d elements, want %d", len(out), len(data))
	}
	for i := range data {
		if out[i] != data[i] {
			t.Fatalf("element %d = %v, want %v", i, out[i], data[i])
		}
	}
}

func TestRoundTripPerDType(t *testing.T) {
	roundTrip(t, []float32{1.5, -2, 3.25, 1e-7, 6, 7}, 2, 3)
	roundTrip(t, []float64{math.Pi, -1e300, 0, 42}, 4)
	roundTrip(t, []uint8{0, 1, 255, 128}, 2, 2)
	roundTrip(t, []int32{math.MinInt32, -1, 0, math.MaxInt32}, 1, 4)
	roundTrip(t, []int8{-128, -1, 0, 127}, 4, 1)
	roundTrip(t, []int64{math.MinInt64, -1, 0, math.MaxInt64}, 2, 1, 2)
	roundTrip(t, []float32{7}) // a scalar: empty shape
}

func TestZerosReshapeSliceAt(t *testing.T) {
	z, err := Zeros(Float64, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ToSlice[float64](z); err != nil || len(v) != 6 || v[0] != 0 || v[5] != 0 {
		t.Fatalf("Zeros = %v, %v", v, err)
	}
	a, err := FromFloat32([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Reshape(3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Shape(); len(s) != 2 || s[0] != 3 || s[1] != 2 {
		t.Fatalf("Reshape shape %v", s)
	}
	rows, err := r.Slice(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rows.Float32s(); err != nil || len(v) != 4 || v[0] != 2 || v[3] != 5 {
		t.Fatalf("Slice(1,3) = %v, %v", v, err)
	}
	row, err := a.At(1)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := row.Float32s(); err != nil || len(v) != 3 || v[0] != 3 || v[2] != 5 {
		t.Fatalf("At(1) = %v, %v", v, err)
	}
	// Views share storage: writing the base shows through.
	if err := CopyFrom(a, []float32{9, 9, 9, 9, 9, 9}); err != nil {
		t.Fatal(err)
	}
	if v, _ := row.Float32s(); v[0] != 9 {
		t.Fatalf("view did not see the write: %v", v)
	}
	// Closing the base leaves the views valid.
	a.Close()
	if v, err := rows.Float32s(); err != nil || v[3] != 9 {
		t.Fatalf("view after base Close = %v, %v", v, err)
	}
	for _, x := range []*NDArray{z, r, rows, row} {
		x.Close()
	}
}

func mustF32(t *testing.T, data []float32, shape ...int64) *NDArray {
	t.Helper()
	a, err := FromFloat32(data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*(1+math.Abs(b))
}

func checkF32(t *testing.T, what string, a *NDArray, want []float32, tol float64) {
	t.Helper()
	got, err := a.Float32s()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !near(float64(got[i]), float64(want[i]), tol) {
			t.Fatalf("%s[%d] = %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

func TestOperatorsVsLoops(t *testing.T) {
	x := []float32{1, -2, 3, -4, 5, -6}
	y := []float32{0.5, 2, -1, 3, 0.25, 1}
	a, b := mustF32(t, x, 2, 3), mustF32(t, y, 2, 3)
	defer a.Close()
	defer b.Close()

	add, err := FindOp("elemwise_add")
	if err != nil {
		t.Fatal(err)
	}
	sum := make([]float32, 6)
	prod := make([]float32, 6)
	relu := make([]float32, 6)
	scaled := make([]float32, 6)
	for i := range x {
		sum[i] = x[i] + y[i]
		prod[i] = x[i] * y[i]
		relu[i] = float32(math.Max(float64(x[i]), 0))
		scaled[i] = x[i] * 2.5
	}
	out, err := add.Call(a, b)
	if err != nil {
		t.Fatal(err)
	}
	checkF32(t, "elemwise_add", out, sum, 0)
	outs, err := Invoke("elemwise_mul", []*NDArray{a, b}, nil)
	if err != nil || len(outs) != 1 {
		t.Fatalf("Invoke elemwise_mul: %v, %v", outs, err)
	}
	checkF32(t, "elemwise_mul", outs[0], prod, 0)
	r, err := Invoke("relu", []*NDArray{a}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkF32(t, "relu", r[0], relu, 0)
	mul, _ := FindOp("_mul_scalar")
	s, err := mul.CallWith(map[string]string{"scalar": "2.5"}, a)
	if err != nil {
		t.Fatal(err)
	}
	checkF32(t, "_mul_scalar", s, scaled, 1e-6)

	// Row sums with a parameter, and a matrix product.
	sumOp, _ := FindOp("sum")
	rs, err := sumOp.CallWith(map[string]string{"axis": "1"}, a)
	if err != nil {
		t.Fatal(err)
	}
	checkF32(t, "sum(axis=1)", rs, []float32{x[0] + x[1] + x[2], x[3] + x[4] + x[5]}, 1e-6)
	bt := mustF32(t, []float32{y[0], y[3], y[1], y[4], y[2], y[5]}, 3, 2) // y transposed
	dot, _ := FindOp("dot")
	d, err := dot.Call(a, bt)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, 4)
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			for k := 0; k < 3; k++ {
				want[i*2+j] += x[i*3+k] * y[j*3+k]
			}
		}
	}
	checkF32(t, "dot", d, want, 1e-6)

	// In place: w -= lr * g.
	w := mustF32(t, []float32{1, 2, 3}, 3)
	g := mustF32(t, []float32{10, 20, 30}, 3)
	sgd, _ := FindOp("sgd_update")
	if err := sgd.CallInto(w, map[string]string{"lr": "0.1"}, w, g); err != nil {
		t.Fatal(err)
	}
	checkF32(t, "sgd_update", w, []float32{0, 0, 0}, 1e-6)
}
