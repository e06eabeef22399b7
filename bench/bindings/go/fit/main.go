// Command fit prints seconds per Fashion-MNIST epoch (60000 images) of
// fit() from Go on the main job's MLP (784-512-256-10, batch 128, SGD
// momentum 0.9): a fit of 5 batches first, then a fit of -batches timed
// and scaled, without validation (fit_epoch_s_go=). The network is
// hybridized, as a user after speed would run it, so that it runs through
// the executor like the C path it is compared with and the difference is
// what Go and fit() add; -imperative runs it through autograd instead.
// bench/bindings/fit_bench.sh compares it with the C executor path
// (bench/train) and Java.
//
//	go run ./fit [-batches 100] [-data-dir DIR] [-imperative]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"mxc.dev/mxc"
)

const warmup = 5

func file(dir, name string) string {
	p := dir + "/" + name
	if _, err := os.Stat(p + ".gz"); err == nil {
		return p + ".gz"
	}
	return p
}

func mlp() (*mxc.Block, error) {
	net, err := mxc.NewSequential(mxc.Named("mlp"))
	for i, units := range []int{512, 256, 10} {
		if err != nil {
			break
		}
		opts := []mxc.LayerOption{mxc.Named(fmt.Sprintf("fc%d", i+1))}
		if units != 10 {
			opts = append(opts, mxc.WithActivation("relu"))
		}
		var d *mxc.Block
		if d, err = mxc.NewDense(units, opts...); err == nil {
			err = net.Add(d)
			d.Close()
		}
	}
	if err == nil {
		err = net.Initialize("xavier", nil, false)
	}
	return net, err
}

// timeFit is the seconds of one fit of batches batches.
func timeFit(net, loss *mxc.Block, opt *mxc.Optimizer, it *mxc.DataIter, batches int) (float64, error) {
	fit, err := mxc.NewFit(net, loss, opt, mxc.WithEpochs(1), mxc.WithBatchesPerEpoch(batches),
		mxc.WithProgress("0"))
	if err != nil {
		return 0, err
	}
	defer fit.Close()
	t0 := time.Now()
	err = fit.Run(it, nil)
	return time.Since(t0).Seconds(), err
}

func run(batches int, dir string, imperative bool) (float64, error) {
	var sec float64
	err := mxc.WithScope(func() error {
		net, err := mlp()
		if err == nil && !imperative {
			err = net.Hybridize(true)
		}
		if err != nil {
			return err
		}
		loss, err := mxc.NewSoftmaxCrossEntropyLoss()
		if err != nil {
			return err
		}
		opt, err := mxc.NewSGD(net, 0.1, 0.9)
		if err != nil {
			return err
		}
		it, err := mxc.NewIDXIterLayout(file(dir, "train-images-idx3-ubyte"),
			file(dir, "train-labels-idx1-ubyte"), 128, true, 1, true, true)
		if err != nil {
			return err
		}
		if _, err := timeFit(net, loss, opt, it, warmup); err != nil {
			return err
		}
		sec, err = timeFit(net, loss, opt, it, batches)
		return err
	})
	return sec, err
}

func main() {
	batches := flag.Int("batches", 100, "timed batches")
	dir := flag.String("data-dir", "/usr/share/datasets/fashion-mnist", "Fashion-MNIST IDX files")
	imperative := flag.Bool("imperative", false,
		"run the network imperatively (autograd each batch) instead of hybridized")
	flag.Parse()
	sec, err := run(*batches, *dir, *imperative)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("fit_epoch_s_go=%.4f\n", sec*60000/(float64(*batches)*128))
}
