// Command mlp trains a 784-128-10 perceptron on Fashion-MNIST with the Go
// binding of mxc: a symbolic graph bound to an executor, SGD with
// momentum, batches of 128 from the IDX files. It prints the loss and
// accuracy of each epoch and the test accuracy.
//
//	cd examples/go/mlp && go run . [-epochs 2] [-batches 0] [-data-dir DIR]
//
// (with mxc installed, or after `source bindings/test_prefix.sh ...`).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"

	"mxc.dev/mxc"
)

type config struct {
	dataDir string
	epochs  int
	batches int // per epoch, 0: all
	batch   int64
	lr      float64
	seed    int64
}

type epochStats struct {
	loss, trainAcc, testAcc float64
	batchLosses             []float64
}

// mlp is data -> FullyConnected(128) -> relu -> FullyConnected(10) ->
// SoftmaxOutput (whose backward is the cross-entropy gradient).
func mlp() (*mxc.Symbol, error) {
	data, err := mxc.Variable("data")
	if err != nil {
		return nil, err
	}
	label, err := mxc.Variable("softmax_label")
	if err != nil {
		return nil, err
	}
	fc1, err := mxc.NewSymbol("FullyConnected", map[string]string{"num_hidden": "128"}, "fc1", data)
	if err != nil {
		return nil, err
	}
	act, err := mxc.NewSymbol("Activation", map[string]string{"act_type": "relu"}, "relu1", fc1)
	if err != nil {
		return nil, err
	}
	fc2, err := mxc.NewSymbol("FullyConnected", map[string]string{"num_hidden": "10"}, "fc2", act)
	if err != nil {
		return nil, err
	}
	return mxc.NewSymbol("SoftmaxOutput", nil, "softmax", fc2, label)
}

// batchLoss is the mean cross-entropy of the predicted probabilities.
func batchLoss(prob, label *mxc.NDArray) (float64, error) {
	p, err := prob.Float32s()
	if err != nil {
		return 0, err
	}
	l, err := label.Float32s()
	if err != nil {
		return 0, err
	}
	k := len(p) / len(l)
	s := 0.0
	for i, c := range l {
		s -= math.Log(math.Max(float64(p[i*k+int(c)]), 1e-12))
	}
	return s / float64(len(l)), nil
}

// train runs cfg.epochs epochs, writing a line per epoch to w.
func train(cfg config, w io.Writer) ([]epochStats, error) {
	if err := mxc.RandomSeed(cfg.seed); err != nil {
		return nil, err
	}
	net, err := mlp()
	if err != nil {
		return nil, err
	}
	defer net.Close()
	exe, err := net.SimpleBind(map[string][]int64{
		"data": {cfg.batch, 784}, "softmax_label": {cfg.batch}}, mxc.GradWrite)
	if err != nil {
		return nil, err
	}
	defer exe.Close()
	args, err := net.Arguments()
	if err != nil {
		return nil, err
	}
	// Parameters: every argument but the inputs, with a momentum buffer.
	type param struct{ w, g, mom *mxc.NDArray }
	var params []param
	for _, name := range args {
		if name == "data" || name == "softmax_label" {
			continue
		}
		p := param{}
		if p.w, err = exe.Arg(name); err != nil {
			return nil, err
		}
		if p.g, err = exe.Grad(name); err != nil {
			return nil, err
		}
		shape, err := p.w.Shape()
		if err != nil {
			return nil, err
		}
		if p.mom, err = mxc.Zeros(mxc.Float32, shape...); err != nil {
			return nil, err
		}
		if len(shape) == 2 {
			err = p.w.Init("xavier", map[string]string{"rnd_type": "uniform", "factor_type": "avg", "magnitude": "3"})
		} else {
			err = p.w.Init("zeros", nil)
		}
		if err != nil {
			return nil, err
		}
		params = append(params, p)
	}
	update, err := mxc.FindOp("sgd_mom_update")
	if err != nil {
		return nil, err
	}
	hyper := map[string]string{"lr": fmt.Sprint(cfg.lr), "momentum": "0.9",
		"rescale_grad": fmt.Sprint(1 / float64(cfg.batch))}
	dataArg, err := exe.Arg("data")
	if err != nil {
		return nil, err
	}
	labelArg, err := exe.Arg("softmax_label")
	if err != nil {
		return nil, err
	}
	prob, err := exe.Output(0)
	if err != nil {
		return nil, err
	}

	// run feeds up to limit batches of it through the executor (training
	// when train is set) and returns the mean loss, the accuracy and the
	// loss of each batch.
	run := func(it *mxc.DataIter, limit int, training bool) (float64, float64, []float64, error) {
		var losses []float64
		correct, seen := int64(0), int64(0)
		if err := it.Reset(); err != nil {
			return 0, 0, nil, err
		}
		for b := 0; limit == 0 || b < limit; b++ {
			ok, err := it.Next()
			if err != nil || !ok {
				if err != nil {
					return 0, 0, nil, err
				}
				break
			}
			data, err := it.Data()
			if err != nil {
				return 0, 0, nil, err
			}
			label, err := it.Label()
			if err != nil {
				return 0, 0, nil, err
			}
			if err := data.CopyTo(dataArg); err != nil {
				return 0, 0, nil, err
			}
			if err := label.CopyTo(labelArg); err != nil {
				return 0, 0, nil, err
			}
			if err := exe.Forward(training); err != nil {
				return 0, 0, nil, err
			}
			if training {
				if err := exe.Backward(); err != nil {
					return 0, 0, nil, err
				}
				for _, p := range params {
					if err := update.CallInto(p.w, hyper, p.w, p.g, p.mom); err != nil {
						return 0, 0, nil, err
					}
				}
			}
			loss, err := batchLoss(prob, label)
			if err != nil {
				return 0, 0, nil, err
			}
			n, err := mxc.Accuracy(prob, label)
			if err != nil {
				return 0, 0, nil, err
			}
			losses = append(losses, loss)
			correct += n
			seen += cfg.batch
			data.Close()
			label.Close()
		}
		mean := 0.0
		for _, l := range losses {
			mean += l
		}
		return mean / float64(len(losses)), float64(correct) / float64(seen), losses, nil
	}

	path := func(name string) string { return filepath.Join(cfg.dataDir, name) }
	trainIt, err := mxc.NewIDXIter(path("train-images-idx3-ubyte.gz"), path("train-labels-idx1-ubyte.gz"), cfg.batch, true, cfg.seed)
	if err != nil {
		return nil, err
	}
	defer trainIt.Close()
	testIt, err := mxc.NewIDXIter(path("t10k-images-idx3-ubyte.gz"), path("t10k-labels-idx1-ubyte.gz"), cfg.batch, false, 0)
	if err != nil {
		return nil, err
	}
	defer testIt.Close()

	var stats []epochStats
	for e := 0; e < cfg.epochs; e++ {
		loss, acc, losses, err := run(trainIt, cfg.batches, true)
		if err != nil {
			return nil, err
		}
		_, testAcc, _, err := run(testIt, 0, false)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "epoch %d: loss %.4f, train accuracy %.4f, test accuracy %.4f\n", e+1, loss, acc, testAcc)
		stats = append(stats, epochStats{loss: loss, trainAcc: acc, testAcc: testAcc, batchLosses: losses})
	}
	return stats, nil
}

func main() {
	cfg := config{batch: 128, seed: 1}
	flag.StringVar(&cfg.dataDir, "data-dir", "/usr/share/datasets/fashion-mnist", "directory of the Fashion-MNIST IDX files")
	flag.IntVar(&cfg.epochs, "epochs", 2, "epochs")
	flag.IntVar(&cfg.batches, "batches", 0, "batches per epoch (0: all)")
	flag.Float64Var(&cfg.lr, "lr", 0.1, "learning rate")
	flag.Parse()
	if _, err := train(cfg, os.Stdout); err != nil {
		log.Fatal(err)
	}
}
