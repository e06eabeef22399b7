package mxc

import (
	"runtime"
	"sync"

	"mxc.dev/mxc/internal/cmxc"
)

// guarded is one native handle of the layer API (a block, optimizer or
// fit): Close frees it (a finalizer does otherwise), and every use runs
// under its mutex, pinned to the OS thread (the failure flag and message
// are per thread in C).
type guarded struct {
	mu   sync.Mutex
	h    uintptr // 0 once closed
	kind string
	free func(uintptr)
}

// close frees the handle once; later calls do nothing. A handle its scope
// already freed is recognized by C and not freed twice.
func (o *guarded) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.h != 0 && o.free != nil {
		o.free(o.h)
	}
	o.h = 0
}

// with runs fn on the live handle, locked and pinned to the OS thread.
func (o *guarded) with(fn func(h uintptr) error) error {
	if o == nil {
		return newError(ErrInvalidHandle, "nil handle")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.h == 0 {
		return newError(ErrInvalidHandle, "%s used after Close", o.kind)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return fn(o.h)
}

// sentinel turns a constructor's handle (0 on failure) into an error.
func sentinel(h uintptr) error {
	if h == 0 {
		return lastError()
	}
	tagNew(h)
	return nil
}

// keep moves the handle to the enclosing scope (out of an outermost one:
// into none), so that it outlives the scope it was made in.
func (o *guarded) keep() error {
	return o.with(func(h uintptr) error {
		cmxc.Scope_keep(int64(h), 0)
		return lastError()
	})
}
