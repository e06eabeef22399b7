package cmxc

// #include <stdint.h>
import "C"

import "unsafe"

// User blocks and KVStore updaters: C calls the exported functions below
// (declared in cmxc.swig), which reach package mxc through the functions
// it registers. Like the fit listeners, the registered functions return
// an MXC_ERR_* code and must not panic (package mxc recovers).

var (
	blockForward func(h, self uintptr, in []uintptr) (code int, out uintptr)
	blockFree    func(h uintptr)
	kvUpdate     func(h uintptr, strKey *string, intKey int64, recv, local uintptr) int
	kvFree       func(h uintptr)
)

// SetBlockForward registers the function a user block's C forward pass
// runs: h the block's cgo.Handle, self the block lent for the call, in
// the input handles (lent, valid for the call); out a new array handle
// whose ownership passes to C.
func SetBlockForward(fn func(h, self uintptr, in []uintptr) (int, uintptr)) {
	blockForward = fn
}

// SetBlockFree registers the function that releases a user block's
// cgo.Handle h when C frees the block.
func SetBlockFree(fn func(h uintptr)) { blockFree = fn }

// SetKVUpdate registers the function a KVStore updater runs: h the
// updater's cgo.Handle, strKey nil for an int key (then intKey is it),
// recv and local lent handles.
func SetKVUpdate(fn func(h uintptr, strKey *string, intKey int64, recv, local uintptr) int) {
	kvUpdate = fn
}

// SetKVFree registers the function that releases an updater's cgo.Handle
// h: the store calls it once no push can call the updater any more
// (mxc_kvstore_set_updater_ex), on any thread, also one Go did not start.
func SetKVFree(fn func(h uintptr)) { kvFree = fn }

//export cmxcGoBlockForward
func cmxcGoBlockForward(h, self C.uintptr_t, nIn C.int, in, out *C.uintptr_t) C.int {
	// The inputs are C memory; copied so that no Go value points there
	// after the call.
	hs := make([]uintptr, int(nIn))
	if nIn > 0 {
		copy(hs, unsafe.Slice((*uintptr)(unsafe.Pointer(in)), int(nIn)))
	}
	code, y := blockForward(uintptr(h), uintptr(self), hs)
	*out = C.uintptr_t(y)
	return C.int(code)
}

//export cmxcGoKVUpdate
func cmxcGoKVUpdate(h C.uintptr_t, strKey *C.char, intKey C.int64_t, recv, local C.uintptr_t) C.int {
	var key *string
	if strKey != nil {
		s := C.GoString(strKey)
		key = &s
	}
	return C.int(kvUpdate(uintptr(h), key, int64(intKey), uintptr(recv), uintptr(local)))
}

//export cmxcGoBlockFree
func cmxcGoBlockFree(h C.uintptr_t) { blockFree(uintptr(h)) }

//export cmxcGoKVFree
func cmxcGoKVFree(h C.uintptr_t) { kvFree(uintptr(h)) }
