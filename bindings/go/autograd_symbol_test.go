package mxc

import "testing"

// f(x) = sum(dot(x, w)^2) for x (2x3), w (3x2); df/dx = 2 dot(x,w) w^T.
func TestAutogradVsAnalyticAndFiniteDifferences(t *testing.T) {
	xv := []float32{0.5, -1, 2, 1.5, 0.25, -0.75}
	wv := []float32{1, -0.5, 0.25, 2, -1, 0.5}
	f := func(x []float32) float64 { // naive forward in float64
		s := 0.0
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				d := 0.0
				for k := 0; k < 3; k++ {
					d += float64(x[i*3+k]) * float64(wv[k*2+j])
				}
				s += d * d
			}
		}
		return s
	}
	x := mustF32(t, xv, 2, 3)
	w := mustF32(t, wv, 3, 2)
	defer x.Close()
	defer w.Close()
	if err := x.AttachGrad(GradWrite); err != nil {
		t.Fatal(err)
	}
	dot, _ := FindOp("dot")
	sq, _ := FindOp("square")
	sum, _ := FindOp("sum")
	var loss *NDArray
	err := Record(func() error {
		d, err := dot.Call(x, w)
		if err != nil {
			return err
		}
		s, err := sq.Call(d)
		if err != nil {
			return err
		}
		loss, err = sum.Call(s)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := loss.Float32s(); err != nil || !near(float64(v[0]), f(xv), 1e-5) {
		t.Fatalf("loss = %v, %v; want %v", v, err, f(xv))
	}
	if err := Backward(loss); err != nil {
		t.Fatal(err)
	}
	g, err := x.Grad()
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		for k := 0; k < 3; k++ {
			analytic := 0.0
			for j := 0; j < 2; j++ {
				d := 0.0
				for m := 0; m < 3; m++ {
					d += float64(xv[i*3+m]) * float64(wv[m*2+j])
				}
				analytic += 2 * d * float64(wv[k*2+j])
			}
			// Central differences in float64 on the naive forward.
			const eps = 1e-3
			xp := append([]float32(nil), xv...)
			xm := append([]float32(nil), xv...)
			xp[i*3+k] += eps
			xm[i*3+k] -= eps
			fd := (f(xp) - f(xm)) / (2 * eps)
			if !near(float64(got[i*3+k]), analytic, 1e-5) || !near(analytic, fd, 1e-2) {
				t.Fatalf("grad[%d,%d] = %v, analytic %v, finite differences %v", i, k, got[i*3+k], analytic, fd)
			}
		}
	}
	// Recording is off again outside Record: no history, Backward fails.
	d, _ := dot.Call(x, w)
	if err := Backward(d); err == nil {
		t.Fatal("Backward of an unrecorded result succeeded")
	}
}

// FullyConnected: out = data . weight^T + bias, compared with loops, and
// a JSON round trip.
func TestSymbolExecutorVsLoops(t *testing.T) {
	data, _ := Variable("data")
	fc, err := NewSymbol("FullyConnected", map[string]string{"num_hidden": "4"}, "fc", data)
	if err != nil {
		t.Fatal(err)
	}
	args, err := fc.Arguments()
	if err != nil || len(args) != 3 || args[0] != "data" || args[1] != "fc_weight" || args[2] != "fc_bias" {
		t.Fatalf("Arguments = %v, %v", args, err)
	}
	js, err := fc.JSON()
	if err != nil {
		t.Fatal(err)
	}
	back, err := SymbolFromJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	if outs, err := back.Outputs(); err != nil || len(outs) != 1 {
		t.Fatalf("Outputs after JSON round trip = %v, %v", outs, err)
	}
	exe, err := back.SimpleBind(map[string][]int64{"data": {2, 3}}, GradWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	xv := []float32{1, 2, 3, -1, 0.5, 2}
	wv := make([]float32, 12)
	bv := []float32{0.1, -0.2, 0.3, 0}
	for i := range wv {
		wv[i] = float32(i%5) - 1.5
	}
	for name, v := range map[string][]float32{"data": xv, "fc_weight": wv, "fc_bias": bv} {
		a, err := exe.Arg(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := CopyFrom(a, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a.Close()
	}
	if err := exe.Forward(true); err != nil {
		t.Fatal(err)
	}
	if n, err := exe.NumOutputs(); err != nil || n != 1 {
		t.Fatalf("NumOutputs = %d, %v", n, err)
	}
	out, err := exe.Output(0)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, 8)
	for i := 0; i < 2; i++ {
		for j := 0; j < 4; j++ {
			s := bv[j]
			for k := 0; k < 3; k++ {
				s += xv[i*3+k] * wv[j*3+k]
			}
			want[i*4+j] = s
		}
	}
	checkF32(t, "FullyConnected", out, want, 1e-5)
	// Head gradient ones: d/dbias = number of rows.
	if err := exe.Backward(); err != nil {
		t.Fatal(err)
	}
	gb, err := exe.Grad("fc_bias")
	if err != nil {
		t.Fatal(err)
	}
	checkF32(t, "fc_bias gradient", gb, []float32{2, 2, 2, 2}, 1e-6)
}

// BatchNorm's moving mean after one training forward, vs the formula.
func TestExecutorAuxiliaryStates(t *testing.T) {
	data, _ := Variable("data")
	defer data.Close()
	bn, err := NewSymbol("BatchNorm", map[string]string{"momentum": "0.25"}, "bn", data)
	if err != nil {
		t.Fatal(err)
	}
	defer bn.Close()
	exe, err := bn.SimpleBind(map[string][]int64{"data": {4, 3}}, GradNull)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12} // (4, 3): 3 channels
	for name, v := range map[string][]float32{"data": x, "bn_gamma": {1, 1, 1}} {
		a, err := exe.Arg(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := CopyFrom(a, v); err != nil {
			t.Fatal(err)
		}
		a.Close()
	}
	if err := exe.Forward(true); err != nil {
		t.Fatal(err)
	}
	moving, err := exe.Aux("bn_moving_mean")
	if err != nil {
		t.Fatal(err)
	}
	defer moving.Close()
	got, err := moving.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	for c := 0; c < 3; c++ {
		var mean float32
		for i := 0; i < 4; i++ {
			mean += x[i*3+c] / 4
		}
		want := 0*0.25 + mean*(1-0.25) // moving starts at 0
		if d := got[c] - want; d > 1e-5 || d < -1e-5 {
			t.Fatalf("moving mean[%d] = %v, want %v", c, got[c], want)
		}
	}
	if _, err := exe.Aux("bn_no_such_state"); err == nil {
		t.Fatal("unknown auxiliary state: no error")
	} else if e, ok := err.(*Error); !ok || e.Code != ErrNotFound {
		t.Fatalf("unknown auxiliary state: %v", err)
	}
}
