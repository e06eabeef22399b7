package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A few hundred batches: the loss falls and the test accuracy is far
// above chance (10 classes: 0.1); a working MLP is near 0.8 by then.
func TestTrainingLearns(t *testing.T) {
	dir := "/usr/share/datasets/fashion-mnist"
	if _, err := os.Stat(filepath.Join(dir, "train-images-idx3-ubyte.gz")); err != nil {
		t.Skipf("Fashion-MNIST not found in %s (Debian package dataset-fashion-mnist): %v", dir, err)
	}
	stats, err := train(config{dataDir: dir, epochs: 1, batches: 300, batch: 128, lr: 0.1, seed: 1}, os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	l := stats[0].batchLosses
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	first, last := mean(l[:30]), mean(l[len(l)-30:])
	t.Logf("mean loss of the first 30 batches %.3f, of the last 30 %.3f; test accuracy %.3f", first, last, stats[0].testAcc)
	if !(last < 0.6*first) {
		t.Errorf("loss did not fall enough: %.3f -> %.3f", first, last)
	}
	if stats[0].testAcc < 0.7 {
		t.Errorf("test accuracy %.3f < 0.7", stats[0].testAcc)
	}
}
