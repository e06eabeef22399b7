package mxc

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The model scripts/make_predictor_model.py writes (Bazel target
// //tests/predict:model); its numpy forward is the reference.
type scriptModel struct {
	prefix                  string
	batch, c, h, w, classes int
	x, want                 []float32
}

func runfile(rel string) string {
	ws := os.Getenv("TEST_WORKSPACE")
	if ws == "" {
		ws = "mxc"
	}
	return filepath.Join(os.Getenv("TEST_SRCDIR"), ws, rel)
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, len(raw)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return v
}

func loadScriptModel(t *testing.T) scriptModel {
	t.Helper()
	dir := runfile("tests/predict/model")
	meta, err := os.ReadFile(filepath.Join(dir, "meta.txt"))
	if err != nil {
		t.Fatalf("model files of //tests/predict:model: %v", err)
	}
	var n [5]int
	for i, f := range strings.Fields(string(meta)) {
		n[i], _ = strconv.Atoi(f)
	}
	return scriptModel{filepath.Join(dir, "model"), n[0], n[1], n[2], n[3], n[4],
		readF32(t, filepath.Join(dir, "input.f32")), readF32(t, filepath.Join(dir, "expected.f32"))}
}

func (m scriptModel) input(batch int) []Input {
	return []Input{{"data", []int64{int64(batch), int64(m.c), int64(m.h), int64(m.w)}}}
}

func (m scriptModel) image(i int) []float32 {
	n := m.c * m.h * m.w
	return m.x[i*n : (i+1)*n]
}

func closeTo(t *testing.T, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > 2e-5 {
			t.Fatalf("element %d: got %g, want %g", i, got[i], want[i])
		}
	}
}

func TestPredictorMatchesNumpyForward(t *testing.T) {
	m := loadScriptModel(t)
	p, err := LoadPredictor(m.prefix, 0, m.input(m.batch))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	y, err := p.Predict(m.x)
	if err != nil {
		t.Fatal(err)
	}
	closeTo(t, y, m.want)
	_, shape, err := p.Output(0)
	if err != nil || len(shape) != 2 || shape[0] != int64(m.batch) || shape[1] != int64(m.classes) {
		t.Fatalf("output shape %v, %v", shape, err)
	}
}

func TestPredictorBytesReshapeCloneOutputs(t *testing.T) {
	m := loadScriptModel(t)
	js, err := os.ReadFile(m.prefix + "-symbol.json")
	if err != nil {
		t.Fatal(err)
	}
	params, err := os.ReadFile(m.prefix + "-0000.params")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPredictor(string(js), params, m.input(m.batch), "fc", "softmax")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n, err := p.NumOutputs(); n != 2 || err != nil {
		t.Fatalf("NumOutputs %d, %v", n, err)
	}
	x := mustF32(t, m.x, int64(m.batch), int64(m.c), int64(m.h), int64(m.w))
	defer x.Close()
	if err := p.SetInputArray("data", x); err != nil {
		t.Fatal(err)
	}
	if err := p.Forward(); err != nil {
		t.Fatal(err)
	}
	probs, err := p.OutputArray(1)
	if err != nil {
		t.Fatal(err)
	}
	defer probs.Close()
	checkF32(t, "softmax", probs, m.want, 2e-5)
	one, err := p.Reshape(m.input(1)...)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	other, err := one.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for i := 0; i < m.batch; i++ {
		q := one
		if i%2 == 1 {
			q = other
		}
		if err := q.SetInput("data", m.image(i)); err != nil {
			t.Fatal(err)
		}
		if err := q.Forward(); err != nil {
			t.Fatal(err)
		}
		y, _, err := q.Output(1)
		if err != nil {
			t.Fatal(err)
		}
		closeTo(t, y, m.want[i*m.classes:(i+1)*m.classes])
	}
}

func TestPredictorGoroutinesShareWeights(t *testing.T) {
	m := loadScriptModel(t)
	base, err := LoadPredictor(m.prefix, 0, m.input(1))
	if err != nil {
		t.Fatal(err)
	}
	ref := make([][]float32, m.batch)
	for i := range ref {
		if ref[i], err = base.Predict(m.image(i)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	bad := make([]int, 4)
	for g := 0; g < 4; g++ {
		q, err := base.Clone()
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func(g int, q *Predictor) {
			defer wg.Done()
			defer q.Close()
			for r := 0; r < 20; r++ {
				i := (g + r) % m.batch
				y, err := q.Predict(m.image(i))
				if err != nil || len(y) != len(ref[i]) {
					bad[g]++
					continue
				}
				for k := range y {
					if y[k] != ref[i][k] {
						bad[g]++
						break
					}
				}
			}
		}(g, q)
	}
	base.Close()
	wg.Wait()
	for g, b := range bad {
		if b != 0 {
			t.Errorf("goroutine %d: %d mismatches", g, b)
		}
	}
}

func TestPredictorBadInput(t *testing.T) {
	m := loadScriptModel(t)
	code := func(err error) int {
		var e *Error
		if errors.As(err, &e) {
			return e.Code
		}
		return -1
	}
	_, err := LoadPredictor(m.prefix, 0, []Input{{"image", []int64{1, 3, 6, 6}}})
	if code(err) != ErrNotFound {
		t.Errorf("unknown input: %v", err)
	}
	_, err = LoadPredictor(m.prefix, 0, []Input{{"data", []int64{1, 2, 6, 6}}})
	if code(err) != ErrShape {
		t.Errorf("wrong shape: %v", err)
	}
	_, err = LoadPredictor(m.prefix+"x", 0, m.input(1))
	if code(err) != ErrIO {
		t.Errorf("missing files: %v", err)
	}
	_, err = LoadPredictor(m.prefix, 0, nil)
	if code(err) != ErrInvalidArgument {
		t.Errorf("no inputs: %v", err)
	}
	js, _ := os.ReadFile(m.prefix + "-symbol.json")
	params, _ := os.ReadFile(m.prefix + "-0000.params")
	_, err = NewPredictor(string(js), params[:len(params)-3], m.input(1))
	if code(err) != ErrIO || !strings.Contains(err.Error(), "offset") {
		t.Errorf("truncated params: %v", err)
	}
	p, err := LoadPredictor(m.prefix, 0, m.input(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetInput("data", m.x); code(err) != ErrShape {
		t.Errorf("four images for one: %v", err)
	}
	if err := p.SetInput("label", m.image(0)); code(err) != ErrNotFound {
		t.Errorf("unknown input: %v", err)
	}
	if _, _, err := p.Output(3); code(err) != ErrInvalidArgument {
		t.Errorf("output index: %v", err)
	}
	p.Close()
	if err := p.Forward(); code(err) != ErrInvalidHandle {
		t.Errorf("after Close: %v", err)
	}
}

// The real Fashion-MNIST model of the shared mxnet-models directory
// classifies the test set at its known accuracy (86.8%).
func TestPredictorFashionMnist(t *testing.T) {
	dir := os.Getenv("MXC_MXNET_MODELS")
	if dir == "" {
		if real, err := filepath.EvalSymlinks(runfile("scripts/make_predictor_model.py")); err == nil {
			root := filepath.Dir(filepath.Dir(real))
			for _, up := range []string{"../shared", "../../shared", "shared"} {
				d := filepath.Join(root, up, "mxnet-models")
				if _, err := os.Stat(filepath.Join(d, "README.md")); err == nil {
					dir = d
					break
				}
			}
		}
	}
	data := os.Getenv("MXC_FASHION_MNIST")
	if data == "" {
		data = "/usr/share/datasets/fashion-mnist"
	}
	img := filepath.Join(data, "t10k-images-idx3-ubyte.gz")
	if _, err := os.Stat(img); dir == "" || err != nil {
		t.Skip("shared mxnet-models or Fashion-MNIST not found")
	}
	const batch = 1000
	p, err := LoadPredictor(filepath.Join(dir, "mentalblood_fashion-mnist"), 39,
		[]Input{{"data", []int64{batch, 1, 28, 28}}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	it, err := NewIDXIter(img, filepath.Join(data, "t10k-labels-idx1-ubyte.gz"), batch, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	correct, total := 0, 0
	for {
		ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		xa, _ := it.Data()
		la, _ := it.Label()
		x, _ := xa.Float32s()
		labels, _ := la.Float32s()
		xa.Close()
		la.Close()
		for i := range x {
			x[i] = (x[i] - 0.2860) / 0.3530
		}
		probs, err := p.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < batch; r++ {
			best := 0
			for k := 1; k < 10; k++ {
				if probs[r*10+k] > probs[r*10+best] {
					best = k
				}
			}
			if best == int(labels[r]) {
				correct++
			}
			total++
		}
	}
	acc := float64(correct) / float64(total)
	if total != 10000 || math.Abs(acc-0.868) > 0.005 {
		t.Errorf("%d images, accuracy %.4f; want 10000 at 0.868", total, acc)
	}
}

// 32 goroutines share a pool of 3 predictors (one copy of the weights):
// every answer equals the single-goroutine one, and closing the pool and
// the model leaves no handle behind.
func TestPredictorPoolServesManyGoroutines(t *testing.T) {
	m := loadScriptModel(t)
	before := liveHandles(t)
	base, err := LoadPredictor(m.prefix, 0, m.input(1))
	if err != nil {
		t.Fatal(err)
	}
	ref := make([][]float32, m.batch)
	for i := range ref {
		if ref[i], err = base.Predict(m.image(i)); err != nil {
			t.Fatal(err)
		}
	}
	var pool *PredictorPool
	err = WithScope(func() error { // the pool's predictors are not the scope's
		pool, err = NewPredictorPool(base, 3)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	base.Close()
	var wg sync.WaitGroup
	bad := make(chan string, 64)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for r := 0; r < 30; r++ {
				i := (g*7 + r) % m.batch
				y, err := pool.Predict(m.image(i))
				if err != nil {
					bad <- err.Error()
					return
				}
				for k := range y {
					if y[k] != ref[i][k] {
						bad <- "mismatch"
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(bad)
	for b := range bad {
		t.Error(b)
	}
	pool.Close()
	if _, err := pool.Predict(m.image(0)); err == nil {
		t.Error("Predict after Close succeeded")
	}
	if after := liveHandles(t); after != before {
		t.Errorf("live handles %d after, %d before", after, before)
	}
	if _, err := NewPredictorPool(nil, 0); err == nil {
		t.Error("a pool of size 0 was made")
	}
}
