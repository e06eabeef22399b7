package mxc

import (
	"runtime"
	"sync"

	"mxc.dev/mxc/internal/cmxc"
)

// KVStore is mxc's key-value store for parameter synchronisation
// (docs/kvstore.md): "local" sums within the process, "dist_sync" sums
// across the processes of an MPI job (mpirun -np N), so every worker
// applies the same update. Keys are strings here.
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
