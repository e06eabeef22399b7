// Command fit trains the main job's MLP (784-512-256-10, 10 epochs, goal
// >= 87.5%) or LeNet (2 epochs, goal >= 88%) on Fashion-MNIST with the
// layer API and fit() of the Go binding, as examples/fit_fashion_mnist.c:
// SGD lr 0.1 / 0.05 with momentum 0.9, a tenth of the rate for the last
// epochs, batch 128. fit() draws its progress line on a terminal; one
// line per epoch goes to stdout.
//
//	cd examples/go/fit && go run . [-model mlp|lenet] [-epochs N] [-batches N] [-data-dir DIR]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"mxc.dev/mxc"
)

// layers builds a Sequential of the given layers (each closed once added:
// the container holds its own reference).
func layers(name string, make ...func() (*mxc.Block, error)) (*mxc.Block, error) {
	net, err := mxc.NewSequential(mxc.Named(name))
	for _, m := range make {
		if err != nil {
			break
		}
		var b *mxc.Block
		if b, err = m(); err == nil {
			err = net.Add(b)
			b.Close()
		}
	}
	return net, err
}

func dense(units int, opts ...mxc.LayerOption) func() (*mxc.Block, error) {
	return func() (*mxc.Block, error) { return mxc.NewDense(units, opts...) }
}

func mlp() (*mxc.Block, error) {
	relu := mxc.WithActivation("relu")
	return layers("mlp", dense(512, relu, mxc.Named("fc1")), dense(256, relu, mxc.Named("fc2")),
		dense(10, mxc.Named("fc3")))
}

func lenet() (*mxc.Block, error) {
	conv := func(ch int) func() (*mxc.Block, error) {
		return func() (*mxc.Block, error) { return mxc.NewConv2D(ch, 5, mxc.WithActivation("tanh")) }
	}
	pool := func() (*mxc.Block, error) { return mxc.NewMaxPool2D(2) }
	flatten := func() (*mxc.Block, error) { return mxc.NewFlatten() }
	return layers("lenet", conv(20), pool, conv(50), pool, flatten,
		dense(500, mxc.WithActivation("tanh")), dense(10))
}

// idx is an iterator over part ("train" or "t10k") of dir.
func idx(dir, part string, train, flat bool) (*mxc.DataIter, error) {
	name := func(kind string) string {
		p := fmt.Sprintf("%s/%s-%s-ubyte", dir, part, kind)
		if _, err := os.Stat(p + ".gz"); err == nil {
			return p + ".gz"
		}
		return p
	}
	return mxc.NewIDXIterLayout(name("images-idx3"), name("labels-idx1"), 128, train, 1, flat, train)
}

// train runs model for epochs (at most batches per epoch; 0: all) and
// returns the test accuracy.
func train(model string, epochs, batches int, dir string) (acc float64, err error) {
	isMLP := model == "mlp"
	goalEpochs, lr, build := 2, 0.05, lenet
	if isMLP {
		goalEpochs, lr, build = 10, 0.1, mlp
	}
	err = mxc.WithScope(func() error { // frees every block, optimizer, fit and iterator
		if err := mxc.RandomSeed(1); err != nil {
			return err
		}
		net, err := build()
		if err == nil {
			err = net.Initialize("xavier", nil, false)
		}
		if err != nil {
			return err
		}
		loss, err := mxc.NewSoftmaxCrossEntropyLoss()
		if err != nil {
			return err
		}
		opt, err := mxc.NewSGD(net, lr, 0.9)
		if err != nil {
			return err
		}
		lastEpochs := 1
		if isMLP {
			lastEpochs = 2
		}
		fit, err := mxc.NewFit(net, loss, opt, mxc.WithEpochs(epochs), mxc.WithBatchesPerEpoch(batches),
			mxc.WithLRMultiFactor([]int{(goalEpochs - lastEpochs) * 468}, 0.1),
			mxc.OnEpochEnd(func(f *mxc.Fit) error {
				fmt.Printf("epoch=%d train_loss=%.4f train_accuracy=%.4f test_accuracy=%.4f\n",
					f.Epoch(), f.TrainLoss(), f.TrainAccuracy(), f.ValAccuracy())
				return nil
			}))
		if err != nil {
			return err
		}
		trainIt, err := idx(dir, "train", true, isMLP)
		if err != nil {
			return err
		}
		testIt, err := idx(dir, "t10k", false, isMLP)
		if err != nil {
			return err
		}
		if err := fit.Run(trainIt, testIt); err != nil {
			return err
		}
		acc = fit.ValAccuracy()
		return nil
	})
	return acc, err
}

func main() {
	model := flag.String("model", "mlp", "mlp or lenet")
	epochs := flag.Int("epochs", 0, "epochs (0: the goal's, 10 for the MLP, 2 for LeNet)")
	batches := flag.Int("batches", 0, "at most this many batches per epoch (0: all)")
	dir := flag.String("data-dir", "/usr/share/datasets/fashion-mnist", "Fashion-MNIST IDX files")
	flag.Parse()
	goalEpochs, goal := 10, 0.875
	if *model == "lenet" {
		goalEpochs, goal = 2, 0.88
	} else if *model != "mlp" {
		log.Fatalf("-model %q: expected mlp or lenet", *model)
	}
	if *epochs == 0 {
		*epochs = goalEpochs
	}
	acc, err := train(*model, *epochs, *batches, *dir)
	if err != nil {
		log.Fatal(err)
	}
	met := "no"
	if acc >= goal && *epochs >= goalEpochs {
		met = "yes"
	}
	fmt.Printf("final_test_accuracy=%.4f goal=%.3f goal_met=%s\n", acc, goal, met)
}
