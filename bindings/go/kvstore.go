package mxc

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"sync/atomic"

	"mxc.dev/mxc/internal/cmxc"
)

// KVStore is mxc's key-value store for parameter synchronisation
// (docs/kvstore.md): "local" sums within the process, "dist_sync" sums
// across the processes of an MPI job (mpirun -np N), so every worker
// applies the same update. Keys are strings (Init, Push, ...) or int64
// (InitInt, PushInt, ...): two separate name spaces, as in C (3 and "3"
// are two keys).
//
// Push sums the arrays given for each key (in order; a key may repeat)
// and stores the sum, or updates the stored array with the optimizer of
// SetOptimizer; Pull copies the stored arrays out; PushPull does both in
// place. Calls return at once: the work runs on mxc's engine in order
// with all other work on the arrays (read results with CopyTo, or
// WaitAll). With "dist_sync" every worker must make the same calls in the
// same order.
//
// Ownership: Close frees the store (a finalizer does otherwise); the
// arrays stay the caller's. Thread-safety: methods may be called from any
// goroutine.
type KVStore struct {
	mu sync.Mutex
	h  uintptr // the mxc_kvstore; 0 once closed
}

// NewKVStore makes a store of type "local" or "dist_sync". A process not
// started by an MPI launcher, or without the MPI plug-in, gets
// ErrUnsupported for "dist_sync", saying why.
func NewKVStore(kind string) (*KVStore, error) {
	if err := cstr("kvstore type", kind); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := cmxc.Kvstore_create(kind)
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	kv := &KVStore{h: h.Swigcptr()}
	runtime.SetFinalizer(kv, (*KVStore).Close)
	return kv, nil
}

// Close frees the store. Idempotent.
func (kv *KVStore) Close() error {
	if kv == nil {
		return nil
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.h != 0 {
		cmxc.Kvstore_free(cmxc.SwigcptrKVStoreHandle(kv.h))
		kv.h = 0
		runtime.SetFinalizer(kv, nil)
	}
	return nil
}

// with runs fn on the live handle, pinned to the OS thread (the failure
// flag and message are per thread).
func (kv *KVStore) with(fn func(cmxc.KVStoreHandle)) error {
	if kv == nil {
		return newError(ErrInvalidHandle, "nil KVStore")
	}
	kv.mu.Lock()
	h := kv.h
	kv.mu.Unlock()
	if h == 0 {
		return newError(ErrInvalidHandle, "the KVStore is closed")
	}
	defer runtime.KeepAlive(kv)
	return call(func() { fn(cmxc.SwigcptrKVStoreHandle(h)) })
}

// Type is "local" or "dist_sync".
func (kv *KVStore) Type() (string, error) {
	var t string
	err := kv.with(func(h cmxc.KVStoreHandle) { t = cmxc.Kvstore_type(h) })
	return t, err
}

// Rank is this worker's rank, 0 .. NumWorkers-1.
func (kv *KVStore) Rank() (int, error) {
	r := -1
	err := kv.with(func(h cmxc.KVStoreHandle) { r = cmxc.Kvstore_rank(h) })
	return r, err
}

// NumWorkers is the number of workers (1 for "local").
func (kv *KVStore) NumWorkers() (int, error) {
	n := -1
	err := kv.with(func(h cmxc.KVStoreHandle) { n = cmxc.Kvstore_num_workers(h) })
	return n, err
}

// Barrier returns once every worker called it.
func (kv *KVStore) Barrier() error {
	return kv.with(func(h cmxc.KVStoreHandle) { cmxc.Kvstore_barrier(h) })
}

// keysAndHandles packs one key per array for the low level.
func keysAndHandles(keys []string, arrays []*NDArray) (string, []uintptr, error) {
	if len(keys) != len(arrays) {
		return "", nil, newError(ErrInvalidArgument,
			"%d keys for %d arrays; expected one key per array", len(keys), len(arrays))
	}
	packed, err := packStrings("key", keys...)
	if err != nil {
		return "", nil, err
	}
	hs, err := handles(arrays)
	return packed, hs, err
}

type kvCall func(h cmxc.KVStoreHandle, keys string, hs []uintptr)

func (kv *KVStore) arrays(keys []string, arrays []*NDArray, fn kvCall) error {
	packed, hs, err := keysAndHandles(keys, arrays)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(arrays)
	return kv.with(func(h cmxc.KVStoreHandle) { fn(h, packed, hs) })
}

// Init stores a copy of arrays[i] under keys[i] (new, distinct keys). In
// a "dist_sync" job every worker then holds rank 0's values.
func (kv *KVStore) Init(keys []string, arrays ...*NDArray) error {
	return kv.arrays(keys, arrays, func(h cmxc.KVStoreHandle, k string, hs []uintptr) {
		cmxc.Kvstore_init(h, k, hs)
	})
}

// Push sums arrays[i] for keys[i] over the list and the workers; higher
// priority runs earlier among ready work.
func (kv *KVStore) Push(keys []string, priority int, arrays ...*NDArray) error {
	return kv.arrays(keys, arrays, func(h cmxc.KVStoreHandle, k string, hs []uintptr) {
		cmxc.Kvstore_push(h, k, hs, priority)
	})
}

// Pull copies the stored array of keys[i] into arrays[i].
func (kv *KVStore) Pull(keys []string, priority int, arrays ...*NDArray) error {
	return kv.arrays(keys, arrays, func(h cmxc.KVStoreHandle, k string, hs []uintptr) {
		cmxc.Kvstore_pull(h, k, hs, priority)
	})
}

// PushPull pushes the arrays and pulls the result back into them.
func (kv *KVStore) PushPull(keys []string, priority int, arrays ...*NDArray) error {
	return kv.arrays(keys, arrays, func(h cmxc.KVStoreHandle, k string, hs []uintptr) {
		cmxc.Kvstore_pushpull(h, k, hs, priority)
	})
}

// SetOptimizer makes the update operator name ("sgd_update",
// "sgd_mom_update", "adam_update", ...) with params ("lr": "0.1", ...)
// the store's updater: a push then updates the stored array from the sum.
// Replaces an updater of SetUpdater.
func (kv *KVStore) SetOptimizer(name string, params map[string]string) error {
	if err := cstr("optimizer", name); err != nil {
		return err
	}
	packed, err := packParams(params)
	if err != nil {
		return err
	}
	return kv.with(func(h cmxc.KVStoreHandle) { cmxc.Kvstore_set_optimizer(h, name, packed) })
}

// ---- int keys ----

// intKeys runs op (0 init, 1 push, 2 pull, 3 pushpull) with int keys.
func (kv *KVStore) intKeys(op int, keys []int64, priority int, arrays []*NDArray) error {
	if len(keys) != len(arrays) {
		return newError(ErrInvalidArgument,
			"%d keys for %d arrays; expected one key per array", len(keys), len(arrays))
	}
	hs, err := handles(arrays)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(arrays)
	return kv.with(func(h cmxc.KVStoreHandle) {
		cmxc.Go_kvstore_int(uint64(h.Swigcptr()), op, keys, hs, priority)
	})
}

// InitInt is Init with int keys.
func (kv *KVStore) InitInt(keys []int64, arrays ...*NDArray) error {
	return kv.intKeys(0, keys, 0, arrays)
}

// PushInt is Push with int keys.
func (kv *KVStore) PushInt(keys []int64, priority int, arrays ...*NDArray) error {
	return kv.intKeys(1, keys, priority, arrays)
}

// PullInt is Pull with int keys.
func (kv *KVStore) PullInt(keys []int64, priority int, arrays ...*NDArray) error {
	return kv.intKeys(2, keys, priority, arrays)
}

// PushPullInt is PushPull with int keys.
func (kv *KVStore) PushPullInt(keys []int64, priority int, arrays ...*NDArray) error {
	return kv.intKeys(3, keys, priority, arrays)
}

// ---- the updater callback ----

// Key is a KVStore key as an updater sees it: Str for a string key
// (IsStr), else Int.
type Key struct {
	Str   string
	Int   int64
	IsStr bool
}

// String is the key as mxc's messages write it: 'w' or 3.
func (k Key) String() string {
	if k.IsStr {
		return "'" + k.Str + "'"
	}
	return fmt.Sprint(k.Int)
}

// Updater updates weight (the stored array of key) from grad (the sum of
// one push), typically with an operator writing into weight (say
// sgd_update via Op.CallInto). grad and weight are lent for the call: do
// not keep them (Close does nothing; after the call they are closed).
type Updater func(key Key, grad, weight *NDArray) error

// liveUpdaters counts the updaters whose cgo.Handle a store holds: made
// by SetUpdater, deleted by the store (cmxc.SetKVFree).
var liveUpdaters atomic.Int64

// numUpdaters is how many updaters stores hold (for tests).
func numUpdaters() int { return int(liveUpdaters.Load()) }

// SetUpdater makes fn the store's updater (mxc_kvstore_set_updater_ex):
// each push then calls fn once per key pushed, with the sum over the list
// (and the workers, for "dist_sync"), after the sums were pushed; fn
// updates the stored array. nil removes it (a push then stores the sum).
// Replaces any optimizer or earlier updater.
//
// Ownership: the store holds fn (a cgo.Handle) until it is replaced or
// removed or the store is freed, and lets go of it once no push still
// calls it, on whichever thread that is; a fit training through the
// store keeps calling it after Close until the fit lets go of the store.
//
// fn runs on the goroutine that called Push or PushPull, on its OS
// thread, once per key in first-appearance order, and may use the store
// (also replace the updater). Its error, or a panic (recovered), is
// returned by that Push as an *Error naming the key (errors.Is/As reach
// the error; a panic is ErrInternal); the store keeps working.
// Thread-safety: SetUpdater may be called from any goroutine at any time;
// a push running meanwhile (from Go or from a fit) calls either the old
// or the new updater. fn must not capture kv (the store holding fn would
// keep kv from the collector until Close).
func (kv *KVStore) SetUpdater(fn Updater) error {
	return kv.with(func(k cmxc.KVStoreHandle) {
		// Made only when C is called: C deletes it, also on failure.
		var h cgo.Handle
		if fn != nil {
			h = cgo.NewHandle(fn)
			liveUpdaters.Add(1)
		}
		cmxc.Go_kvstore_set_updater(uint64(k.Swigcptr()), uint64(h))
	})
}

// freeUpdater is the store's release of an updater's handle (any thread).
func freeUpdater(h uintptr) {
	cgo.Handle(h).Delete()
	liveUpdaters.Add(-1)
}

// update runs updater h for C: see cmxc.SetKVUpdate.
func update(h uintptr, strKey *string, intKey int64, recv, local uintptr) (code int) {
	key := Key{Int: intKey}
	if strKey != nil {
		key = Key{Str: *strKey, IsStr: true}
	}
	const what = "kvstore updater" // mxc puts the key before it
	fn := cgo.Handle(h).Value().(Updater)
	grad, endGrad := lend(recv)
	weight, endWeight := lend(local)
	defer func() {
		endGrad()
		endWeight()
		if r := recover(); r != nil {
			code = keepCallbackError(what, nil, r)
		}
	}()
	if err := fn(key, grad, weight); err != nil {
		return keepCallbackError(what, err, nil)
	}
	return 0
}

func init() {
	cmxc.SetKVUpdate(update)
	cmxc.SetKVFree(freeUpdater)
}
