package mxc

import (
	"runtime"
	"sync"
	"sync/atomic"

	"mxc.dev/mxc/internal/cmxc"
)

// PredictorPool serves one model from many goroutines: a bounded pool of
// predictors sharing one copy of the weights (clones of the model given,
// which stays the caller's). A predictor runs one request at a time, so a
// request takes one, waiting while all are busy, and gives it back:
//
//	pool, err := mxc.NewPredictorPool(model, 4)
//	defer pool.Close()
//	// from any number of goroutines:
//	probs, err := pool.Predict(image)
//	err = pool.Do(func(p *mxc.Predictor) error { ... })
//
// Memory: the weights once, plus inputs, outputs and intermediate arrays
// per predictor; the size bounds both memory and the requests running at
// once. The pool's predictors belong to no Scope: Close frees them, and
// must not overlap requests.
type PredictorPool struct {
	idle   chan *Predictor // never closed: a late Do must not panic
	all    []*Predictor
	once   sync.Once
	closed atomic.Bool
}

// NewPredictorPool makes size (>= 1) clones of model.
func NewPredictorPool(model *Predictor, size int) (*PredictorPool, error) {
	if size < 1 {
		return nil, newError(ErrInvalidArgument, "NewPredictorPool: size %d; expected >= 1", size)
	}
	pp := &PredictorPool{idle: make(chan *Predictor, size)}
	for i := 0; i < size; i++ {
		p, err := model.Clone()
		if err == nil {
			err = p.detachFromScope()
		}
		if err != nil {
			pp.Close()
			return nil, err
		}
		pp.all = append(pp.all, p)
		pp.idle <- p
	}
	return pp, nil
}

func (p *Predictor) detachFromScope() error {
	h, err := p.typed()
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(p)
	return call(func() { cmxc.Scope_keep(int64(h.Swigcptr()), 1) })
}

// Size is the number of predictors.
func (pp *PredictorPool) Size() int { return len(pp.all) }

// Do runs fn with a predictor of the pool, waiting for a free one.
func (pp *PredictorPool) Do(fn func(*Predictor) error) error {
	if pp.closed.Load() {
		return newError(ErrInvalidHandle, "PredictorPool used after Close")
	}
	p := <-pp.idle
	defer func() { pp.idle <- p }()
	return fn(p)
}

// Predict is Predictor.Predict on a pooled predictor.
func (pp *PredictorPool) Predict(data []float32) (out []float32, err error) {
	err = pp.Do(func(p *Predictor) error {
		out, err = p.Predict(data)
		return err
	})
	return out, err
}

// Close frees the pool's predictors (not the model). Idempotent.
func (pp *PredictorPool) Close() error {
	pp.once.Do(func() {
		pp.closed.Store(true)
		for _, p := range pp.all {
			p.Close()
		}
	})
	return nil
}
