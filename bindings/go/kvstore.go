package mxc

import (
	"fmt"
	"runtime"
	"sync"

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
	mu      sync.Mutex
	h       uintptr // the mxc_kvstore; 0 once closed
	updater uintptr // registry id of the Go updater (SetUpdater); 0: none
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
	unregisterUpdater(kv.updater)
	kv.updater = 0
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
	err = kv.with(func(h cmxc.KVStoreHandle) { cmxc.Kvstore_set_optimizer(h, name, packed) })
	if err == nil {
		kv.dropUpdater()
	}
	return err
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

// kvUpdaters maps the ids C holds as user data to updaters. Not a
// cgo.Handle: a push running in another goroutine may still call an
// updater that SetUpdater just replaced, and must find its id gone
// (an error) rather than a deleted handle (a panic).
var kvUpdaters struct {
	sync.Mutex
	m    map[uintptr]Updater
	next uintptr
}

func registerUpdater(fn Updater) uintptr {
	r := &kvUpdaters
	r.Lock()
	defer r.Unlock()
	if r.m == nil {
		r.m = map[uintptr]Updater{}
	}
	r.next++
	r.m[r.next] = fn
	return r.next
}

func unregisterUpdater(id uintptr) {
	if id == 0 {
		return
	}
	kvUpdaters.Lock()
	delete(kvUpdaters.m, id)
	kvUpdaters.Unlock()
}

// numUpdaters is how many updaters are registered (for tests).
func numUpdaters() int {
	kvUpdaters.Lock()
	defer kvUpdaters.Unlock()
	return len(kvUpdaters.m)
}

// SetUpdater makes fn the store's updater (mxc_kvstore_set_updater): each
// push then calls fn once per key pushed, with the sum over the list
// (and the workers, for "dist_sync"), after the sums were pushed; fn
// updates the stored array. nil removes it (a push then stores the sum).
// Replaces any optimizer or earlier updater, whose registration is then
// dropped (as at Close).
//
// fn runs on the goroutine that called Push or PushPull, on its OS
// thread, once per key in first-appearance order, and may use the store.
// Its error, or a panic (recovered), is returned by that Push as an
// *Error naming the key (errors.Is/As reach the error; a panic is
// ErrInternal); the store keeps working. A push that runs in another
// goroutine while SetUpdater replaces the updater calls either the old
// or the new one, or fails with ErrInvalidHandle naming the replacement.
// fn must not capture kv (the registration would keep it from the
// collector until Close).
func (kv *KVStore) SetUpdater(fn Updater) error {
	if kv == nil {
		return newError(ErrInvalidHandle, "nil KVStore")
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	if kv.h == 0 {
		return newError(ErrInvalidHandle, "the KVStore is closed")
	}
	var id uintptr
	if fn != nil {
		id = registerUpdater(fn)
	}
	err := call(func() { cmxc.Go_kvstore_set_updater(uint64(kv.h), uint64(id)) })
	if err != nil {
		unregisterUpdater(id)
		return err
	}
	unregisterUpdater(kv.updater)
	kv.updater = id
	return nil
}

// dropUpdater drops the Go updater's registration after SetOptimizer
// replaced it in C.
func (kv *KVStore) dropUpdater() {
	kv.mu.Lock()
	unregisterUpdater(kv.updater)
	kv.updater = 0
	kv.mu.Unlock()
}

// update runs updater id for C: see cmxc.SetKVUpdate.
func update(id uintptr, strKey *string, intKey int64, recv, local uintptr) (code int) {
	key := Key{Int: intKey}
	if strKey != nil {
		key = Key{Str: *strKey, IsStr: true}
	}
	what := "kvstore updater, key " + key.String()
	kvUpdaters.Lock()
	fn := kvUpdaters.m[id]
	kvUpdaters.Unlock()
	if fn == nil {
		return keepCallbackError(what, newError(ErrInvalidHandle,
			"the updater was replaced (SetUpdater) or the store closed during this push"), nil)
	}
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

func init() { cmxc.SetKVUpdate(update) }
