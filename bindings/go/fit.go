package mxc

import (
	"fmt"
	"math"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"

	"mxc.dev/mxc/internal/cmxc"
)

// Optimizer updates a block's parameters with one of the registry's
// update operators ("sgd_update", "sgd_mom_update", "adam_update", ...).
// It holds a reference to the block; used by one goroutine at a time with
// it. Close frees it (a finalizer, or the Scope it was made in, otherwise).
type Optimizer struct{ o guarded }

// NewOptimizer applies updateOp with its parameters (lr, wd, momentum,
// beta1, clip_gradient, ...; may be nil) to every parameter of net.
func NewOptimizer(net *Block, updateOp string, params map[string]string) (*Optimizer, error) {
	kv, err := packParams(params)
	if err == nil {
		err = cstr("update operator", updateOp)
	}
	if err != nil {
		return nil, err
	}
	var opt *Optimizer
	err = net.with(func(b cmxc.BlockHandle) error {
		h := cmxc.Optimizer_create(b, updateOp, kv).Swigcptr()
		if err := sentinel(h); err != nil {
			return err
		}
		opt = &Optimizer{o: guarded{h: h, kind: "Optimizer", free: func(h uintptr) {
			cmxc.Optimizer_free(cmxc.SwigcptrOptimizerHandle(h))
		}}}
		runtime.SetFinalizer(opt, (*Optimizer).Close)
		return nil
	})
	return opt, err
}

// NewSGD is SGD with momentum (plain SGD for momentum 0).
func NewSGD(net *Block, lr, momentum float64) (*Optimizer, error) {
	if momentum == 0 {
		return NewOptimizer(net, "sgd_update", map[string]string{"lr": fmt.Sprint(lr)})
	}
	return NewOptimizer(net, "sgd_mom_update",
		map[string]string{"lr": fmt.Sprint(lr), "momentum": fmt.Sprint(momentum)})
}

// Close frees the optimizer. Idempotent.
func (opt *Optimizer) Close() error {
	if opt != nil {
		opt.o.close()
		runtime.SetFinalizer(opt, nil)
	}
	return nil
}

// Keep moves the optimizer to the enclosing Scope.
func (opt *Optimizer) Keep() error { return opt.o.keep() }

func (opt *Optimizer) with(fn func(cmxc.OptimizerHandle) error) error {
	if opt == nil {
		return newError(ErrInvalidHandle, "nil Optimizer")
	}
	defer runtime.KeepAlive(opt)
	return opt.o.with(func(h uintptr) error { return fn(cmxc.SwigcptrOptimizerHandle(h)) })
}

// Step updates every parameter from its gradient (batchSize >= 1).
func (opt *Optimizer) Step(batchSize int64) error {
	return opt.with(func(h cmxc.OptimizerHandle) error {
		cmxc.Optimizer_step(h, batchSize)
		return lastError()
	})
}

// LR is the learning rate of the next steps.
func (opt *Optimizer) LR() (float64, error) {
	lr := math.NaN()
	err := opt.with(func(h cmxc.OptimizerHandle) error {
		lr = cmxc.Optimizer_get_lr(h)
		return lastError()
	})
	return lr, err
}

// SetLR sets the learning rate (finite, >= 0).
func (opt *Optimizer) SetLR(lr float64) error {
	return opt.with(func(h cmxc.OptimizerHandle) error {
		cmxc.Optimizer_set_lr(h, lr)
		return lastError()
	})
}

// FitEvent says when a listener is called.
type FitEvent int

// Listener events (MXC_FIT_*).
const (
	BatchEnd FitEvent = FitEvent(cmxc.MXC_FIT_BATCH_END) // after each training batch
	EpochEnd FitEvent = FitEvent(cmxc.MXC_FIT_EPOCH_END) // after each epoch (evaluation, checkpoint, log)
	TrainEnd FitEvent = FitEvent(cmxc.MXC_FIT_TRAIN_END) // when a run ends without error
)

// Listener is told about a fit's progress on the goroutine running Run,
// with the fit lent for the call (read values, Stop). A non-nil error, or
// a panic (recovered: it never crosses the C frames), ends the run, whose
// Run then returns it (a panic as an *Error with Code ErrInternal).
type Listener func(event FitEvent, f *Fit) error

// FitOption configures NewFit: the keys of mxc_fit_create, and listeners.
type FitOption func(*fitConfig)

type fitConfig struct {
	kv        map[string]string
	listeners []Listener
	store     *KVStore // WithKVStore
	storeType string   // WithKVStoreType
}

// WithFitKey sets any key of mxc_fit_create (see mxc.h).
func WithFitKey(key string, value any) FitOption {
	return func(c *fitConfig) { c.kv[key] = fmt.Sprint(value) }
}

// WithEpochs sets the epochs to reach (counting a resumed checkpoint's).
func WithEpochs(n int) FitOption { return WithFitKey("epochs", n) }

// WithBatchesPerEpoch trains at most n batches per epoch (0: all).
func WithBatchesPerEpoch(n int) FitOption { return WithFitKey("batches_per_epoch", n) }

// WithProgress is "auto" (a progress line only on a terminal; the
// default), "1" or "0".
func WithProgress(mode string) FitOption { return WithFitKey("progress", mode) }

// WithLRFactor multiplies the rate by factor every step updates.
func WithLRFactor(step int, factor float64) FitOption {
	return func(c *fitConfig) {
		c.kv["lr_scheduler"], c.kv["step"], c.kv["factor"] = "factor", fmt.Sprint(step), fmt.Sprint(factor)
	}
}

// WithLRMultiFactor multiplies the rate by factor at each of steps.
func WithLRMultiFactor(steps []int, factor float64) FitOption {
	return func(c *fitConfig) {
		s := "("
		for i, v := range steps {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprint(v)
		}
		c.kv["lr_scheduler"], c.kv["steps"], c.kv["factor"] = "multifactor", s+")", fmt.Sprint(factor)
	}
}

// WithLRCosine decays the rate to finalLR over maxUpdate updates.
func WithLRCosine(maxUpdate int, finalLR float64) FitOption {
	return func(c *fitConfig) {
		c.kv["lr_scheduler"], c.kv["max_update"], c.kv["final_lr"] = "cosine", fmt.Sprint(maxUpdate), fmt.Sprint(finalLR)
	}
}

// WithEarlyStopping stops after patience epochs without monitor
// ("val_loss", "val_accuracy", ...) improving by more than minDelta.
func WithEarlyStopping(patience int, minDelta float64, monitor string) FitOption {
	return func(c *fitConfig) {
		c.kv["early_stopping_patience"] = fmt.Sprint(patience)
		c.kv["early_stopping_min_delta"], c.kv["monitor"] = fmt.Sprint(minDelta), monitor
	}
}

// WithCSV writes a CSV row per epoch to path.
func WithCSV(path string) FitOption { return WithFitKey("csv", path) }

// WithTensorBoard writes TensorBoard event files into dir.
func WithTensorBoard(dir string) FitOption { return WithFitKey("tensorboard", dir) }

// WithCheckpoint writes PREFIX-EEEE.fit after every period-th epoch.
func WithCheckpoint(prefix string, period int) FitOption {
	return func(c *fitConfig) { c.kv["checkpoint_prefix"], c.kv["checkpoint_period"] = prefix, fmt.Sprint(period) }
}

// WithResume loads a checkpoint when Run starts.
func WithResume(path string) FitOption { return WithFitKey("resume", path) }

// WithKVStore trains data-parallel through kv (mxc_fit_set_kvstore):
// under mpirun -np N with a "dist_sync" store every worker trains on its
// part of the training data, gradients are summed over the workers and
// every worker keeps the same parameters; files and progress come from
// rank 0. A "local" store trains as without one. The fit holds its own
// reference to the store: kv may be closed once NewFit returns.
func WithKVStore(kv *KVStore) FitOption {
	return func(c *fitConfig) { c.store, c.storeType = kv, "" }
}

// WithKVStoreType is WithKVStore with a new store of kind ("local",
// "dist_sync").
func WithKVStoreType(kind string) FitOption {
	return func(c *fitConfig) { c.store, c.storeType = nil, kind }
}

// WithListener adds a listener (called in the order added).
func WithListener(l Listener) FitOption {
	return func(c *fitConfig) { c.listeners = append(c.listeners, l) }
}

// OnEpochEnd adds a listener of epoch ends only.
func OnEpochEnd(fn func(f *Fit) error) FitOption { return onEvent(EpochEnd, fn) }

// OnBatchEnd adds a listener of batch ends only.
func OnBatchEnd(fn func(f *Fit) error) FitOption { return onEvent(BatchEnd, fn) }

func onEvent(want FitEvent, fn func(f *Fit) error) FitOption {
	return WithListener(func(e FitEvent, f *Fit) error {
		if e != want {
			return nil
		}
		return fn(f)
	})
}

// Fit trains a block with a loss and an optimizer over data iterators
// (mxc_fit_* of the C library, which does the loop, the progress line,
// evaluation, checkpoints with exact resume, early stopping, learning-rate
// schedules, CSV and TensorBoard logs):
//
//	fit, err := mxc.NewFit(net, loss, opt, mxc.WithEpochs(10),
//		mxc.OnEpochEnd(func(f *mxc.Fit) error {
//			fmt.Println(f.Epoch(), f.ValAccuracy())
//			return nil
//		}))
//	if err != nil { ... }
//	defer fit.Close()
//	err = fit.Run(train, test)
//
// A fit is used by one goroutine at a time. Close frees it (a finalizer,
// or the Scope it was made in, otherwise).
type Fit struct {
	o       guarded
	state   *fitState
	running atomic.Bool // Run in progress: Close and Run refuse
}

// fitState is what the C listener reaches through a cgo.Handle: the Go
// listeners and the failure of the last call. It does not refer to the
// Fit, so an unclosed Fit stays collectable.
type fitState struct {
	mu        sync.Mutex
	listeners []Listener
	failure   error
}

// NewFit makes a fit of net with loss (a two-input block) and opt (an
// optimizer of net). Unknown keys and bad values are ErrInvalidArgument.
func NewFit(net, loss *Block, opt *Optimizer, opts ...FitOption) (*Fit, error) {
	c := fitConfig{kv: map[string]string{}}
	for _, o := range opts {
		o(&c)
	}
	kv, err := packParams(c.kv)
	if err != nil {
		return nil, err
	}
	if net == loss {
		return nil, newError(ErrInvalidArgument, "NewFit: the loss must be another block than net")
	}
	var h uintptr
	err = net.with(func(n cmxc.BlockHandle) error {
		return loss.with(func(l cmxc.BlockHandle) error {
			return opt.with(func(o cmxc.OptimizerHandle) error {
				h = cmxc.Fit_create(n, l, o, kv).Swigcptr()
				return sentinel(h)
			})
		})
	})
	if err != nil {
		return nil, err
	}
	f := &Fit{o: guarded{h: h, kind: "Fit", free: freeFit}, state: &fitState{}}
	runtime.SetFinalizer(f, (*Fit).Close)
	if len(c.listeners) > 0 {
		if err := f.listen(c.listeners); err != nil {
			f.Close()
			return nil, err
		}
	}
	if err := f.useStore(&c); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// useStore sets the store of WithKVStore or WithKVStoreType, if any.
func (f *Fit) useStore(c *fitConfig) error {
	if c.store != nil {
		return f.SetKVStore(c.store)
	}
	if c.storeType == "" {
		return nil
	}
	kv, err := NewKVStore(c.storeType)
	if err != nil {
		return err
	}
	defer kv.Close() // the fit holds its own reference
	return f.SetKVStore(kv)
}

// SetKVStore trains through kv from the next Run on (see WithKVStore);
// nil trains alone again.
func (f *Fit) SetKVStore(kv *KVStore) error {
	return f.with(func(fh cmxc.FitHandle) error {
		if kv == nil {
			return call(func() { cmxc.Fit_set_kvstore(fh, cmxc.SwigcptrKVStoreHandle(0)) })
		}
		return kv.with(func(k cmxc.KVStoreHandle) { cmxc.Fit_set_kvstore(fh, k) })
	})
}

func freeFit(h uintptr) { cmxc.Fit_free(cmxc.SwigcptrFitHandle(h)) }

// listen registers the fit's one C listener: a cgo.Handle on the state,
// deleted by C when the fit is freed (also when registering fails).
func (f *Fit) listen(ls []Listener) error {
	f.state.listeners = ls
	h := cgo.NewHandle(f.state)
	return f.with(func(fh cmxc.FitHandle) error {
		cmxc.Go_fit_add_listener(uint64(fh.Swigcptr()), uint64(h))
		return lastError()
	})
}

// dispatch runs the listeners for a C event on the lent fit handle and
// returns an MXC_ERR_* code; it recovers panics, which must not unwind
// through C.
func (s *fitState) dispatch(event int, lent uintptr) (code int) {
	view := &Fit{o: guarded{h: lent, kind: "Fit (lent to a listener)"}, state: s}
	defer func() {
		view.o.h = 0 // the lent handle ends with the call
		if r := recover(); r != nil {
			s.setFailure(newError(ErrInternal, "a fit listener panicked: %v", r))
			code = ErrInternal
		}
	}()
	for _, l := range s.listeners {
		if err := l(FitEvent(event), view); err != nil {
			s.setFailure(err)
			return ErrInternal
		}
	}
	return 0
}

func (s *fitState) setFailure(err error) {
	s.mu.Lock()
	s.failure = err
	s.mu.Unlock()
}

func (s *fitState) takeFailure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.failure
	s.failure = nil
	return err
}

func init() {
	cmxc.SetFitDispatch(func(h uintptr, event int, fit uintptr) int {
		return cgo.Handle(h).Value().(*fitState).dispatch(event, fit)
	})
}

// Close frees the fit. Idempotent; a listener's lent fit is not freed.
// While Run runs (from a listener, say) it is ErrInvalidArgument: C would
// free what the run is using.
func (f *Fit) Close() error {
	if f != nil && f.running.Load() {
		return newError(ErrInvalidArgument, "Fit.Close: the fit is running; close it after Run returns")
	}
	if f != nil {
		f.o.close()
		runtime.SetFinalizer(f, nil)
	}
	return nil
}

// Keep moves the fit to the enclosing Scope.
func (f *Fit) Keep() error { return f.o.keep() }

func (f *Fit) with(fn func(cmxc.FitHandle) error) error {
	if f == nil {
		return newError(ErrInvalidHandle, "nil Fit")
	}
	defer runtime.KeepAlive(f)
	return f.o.with(func(h uintptr) error { return fn(cmxc.SwigcptrFitHandle(h)) })
}

// Run trains on train (reset each epoch) and evaluates on val (nil: none)
// until the epochs are reached, early stopping or Stop. A listener's
// error is returned wrapped (errors.Is/As see it). The iterators are
// locked during the run: a listener must not use or close them.
func (f *Fit) Run(train, val *DataIter) error {
	if train == val && train != nil {
		return newError(ErrInvalidArgument, "Fit.Run: train and val must be different iterators")
	}
	if f == nil || !f.running.CompareAndSwap(false, true) {
		return newError(ErrInvalidArgument, "Fit.Run: nil fit, or already running")
	}
	defer f.running.Store(false)
	err := train.with(func(t cmxc.DataIterHandle) error {
		if val == nil {
			return f.run(t, cmxc.SwigcptrDataIterHandle(0))
		}
		return val.with(func(v cmxc.DataIterHandle) error { return f.run(t, v) })
	})
	if lerr := f.state.takeFailure(); lerr != nil && err != nil {
		return fmt.Errorf("mxc: Fit.Run stopped by a listener: %w", lerr)
	}
	return err
}

func (f *Fit) run(t, v cmxc.DataIterHandle) error {
	// Not under f's mutex: listeners read values through their lent handle.
	f.o.mu.Lock()
	h := f.o.h
	f.o.mu.Unlock()
	if h == 0 {
		return newError(ErrInvalidHandle, "Fit used after Close")
	}
	defer runtime.KeepAlive(f)
	cmxc.Fit_run(cmxc.SwigcptrFitHandle(h), t, v)
	return lastError()
}

// Value is a value of the run by name: epoch, batch, num_update, lr,
// train_loss, train_accuracy, val_loss, val_accuracy (NaN before an
// evaluation), samples_per_sec, best, epochs, rank, num_workers (else
// ErrNotFound).
func (f *Fit) Value(name string) (float64, error) {
	v := math.NaN()
	if err := cstr("value name", name); err != nil {
		return v, err
	}
	err := f.with(func(h cmxc.FitHandle) error {
		v = cmxc.Fit_value(h, name)
		return lastError()
	})
	return v, err
}

// value is Value with NaN for an error (the accessors below).
func (f *Fit) value(name string) float64 {
	v, err := f.Value(name)
	if err != nil {
		return math.NaN()
	}
	return v
}

// Epoch is the number of epochs done (-1 when the fit is closed).
func (f *Fit) Epoch() int {
	v := f.value("epoch")
	if math.IsNaN(v) {
		return -1
	}
	return int(v)
}

// TrainLoss is the mean training loss of the current epoch so far (NaN
// when the fit is closed; so are the accessors below).
func (f *Fit) TrainLoss() float64 { return f.value("train_loss") }

// TrainAccuracy is the training accuracy of the current epoch so far.
func (f *Fit) TrainAccuracy() float64 { return f.value("train_accuracy") }

// ValLoss is the validation loss of the last evaluation.
func (f *Fit) ValLoss() float64 { return f.value("val_loss") }

// ValAccuracy is the validation accuracy of the last evaluation.
func (f *Fit) ValAccuracy() float64 { return f.value("val_accuracy") }

// Stop ends the run after the current batch (from a listener).
func (f *Fit) Stop() error {
	return f.with(func(h cmxc.FitHandle) error {
		cmxc.Fit_stop(h)
		return lastError()
	})
}

// SaveCheckpoint writes parameters, optimizer states, progress and the
// random stream's position: a run resumed from it equals an
// uninterrupted one, bit for bit.
func (f *Fit) SaveCheckpoint(path string) error {
	if err := cstr("path", path); err != nil {
		return err
	}
	return f.with(func(h cmxc.FitHandle) error {
		cmxc.Fit_save_checkpoint(h, path)
		return lastError()
	})
}

// LoadCheckpoint reads a checkpoint: the next Run continues from it.
func (f *Fit) LoadCheckpoint(path string) error {
	if err := cstr("path", path); err != nil {
		return err
	}
	return f.with(func(h cmxc.FitHandle) error {
		cmxc.Fit_load_checkpoint(h, path)
		return lastError()
	})
}
