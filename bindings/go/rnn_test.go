package mxc

import (
	"math"
	"testing"
)

// NewLSTM and NewGRU against a case small enough to compute by hand: one
// feature, one unit, every weight 1 and every bias 0 (the default bias
// initializer), so each gate's pre-activation is x_t + h_{t-1}.

func sigm(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// handLSTM: gates i, f, g, o all see p = x + h.
func handLSTM(xs []float64) []float64 {
	h, c, out := 0.0, 0.0, []float64{}
	for _, x := range xs {
		p := x + h
		c = sigm(p)*c + sigm(p)*math.Tanh(p)
		h = sigm(p) * math.Tanh(c)
		out = append(out, h)
	}
	return out
}

// handGRU: r = z = sigm(x + h), n = tanh(x + r*h), h' = (1-z) n + z h.
func handGRU(xs []float64) []float64 {
	h, out := 0.0, []float64{}
	for _, x := range xs {
		r := sigm(x + h)
		n := math.Tanh(x + r*h)
		h = (1-r)*n + r*h
		out = append(out, h)
	}
	return out
}

func TestLSTMAndGRUMatchHandComputedSteps(t *testing.T) {
	// Layout NTC: two sequences of three steps.
	seqs := [][]float64{{0.5, -1, 2}, {1, 0.2, -0.3}}
	x := []float32{0.5, -1, 2, 1, 0.2, -0.3}
	cases := []struct {
		name string
		make func(int, ...LayerOption) (*Block, error)
		hand func([]float64) []float64
	}{{"lstm", NewLSTM, handLSTM}, {"gru", NewGRU, handGRU}}
	for _, c := range cases {
		err := WithScope(func() error {
			b := ok(c.make(1, WithKey("layout", "NTC"), Named("r")))
			if err := b.Initialize("ones", nil, false); err != nil {
				return err
			}
			y := ok(b.Forward(ok(FromFloat32(x, 2, 3, 1))))
			if s := ok(y.Shape()); len(s) != 3 || s[0] != 2 || s[1] != 3 || s[2] != 1 {
				t.Fatalf("%s: shape %v, want [2 3 1]", c.name, s)
			}
			got := ok(y.Float32s())
			for n, xs := range seqs {
				for i, want := range c.hand(xs) {
					if math.Abs(float64(got[n*3+i])-want) > 1e-5 {
						t.Errorf("%s[%d,%d] = %v, by hand %v", c.name, n, i, got[n*3+i], want)
					}
				}
			}
			names := ok(b.ParamNames())
			if len(names) != 4 || names[0] != "r_l0_i2h_weight" || names[3] != "r_l0_h2h_bias" {
				t.Errorf("%s: parameters %v", c.name, names)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewLSTM(0); err == nil {
		t.Fatal("NewLSTM(0) succeeded")
	}
}
