package main

import (
	"os"
	"testing"
)

// 100 batches of each model: far above chance (10 classes: 0.1); the
// full runs (go run .) reach the goals. LeNet's evaluation of 10000
// images is left out under -short and the sanitizers (minutes there).
func TestBothModelsLearn(t *testing.T) {
	dir := "/usr/share/datasets/fashion-mnist"
	if _, err := os.Stat(dir + "/train-images-idx3-ubyte.gz"); err != nil {
		t.Skipf("Fashion-MNIST not found in %s (Debian package dataset-fashion-mnist): %v", dir, err)
	}
	models := []string{"mlp", "lenet"}
	if testing.Short() || os.Getenv("MXC_SANITIZER") != "" {
		models = models[:1]
	}
	for _, model := range models {
		acc, err := train(model, 1, 100, dir)
		if err != nil {
			t.Fatal(model, err)
		}
		t.Logf("%s: test accuracy %.3f after 100 batches", model, acc)
		if acc < 0.7 {
			t.Errorf("%s: test accuracy %.3f < 0.7", model, acc)
		}
	}
}
