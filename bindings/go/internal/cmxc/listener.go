package cmxc

// #include <stdint.h>
import "C"

// Fit listeners: C calls the exported functions below (declared in
// cmxc.swig), which reach package mxc through the function it registers.
// The user data C holds is a runtime/cgo.Handle made by package mxc.

var fitDispatch func(h uintptr, event int, fit uintptr) int

// SetFitDispatch registers the function a C fit event runs: h the
// listener's cgo.Handle, fit the handle lent for the call; it returns an
// MXC_ERR_* code and must not panic (package mxc recovers).
func SetFitDispatch(fn func(h uintptr, event int, fit uintptr) int) { fitDispatch = fn }

//export cmxcGoFitEvent
func cmxcGoFitEvent(h C.uintptr_t, event C.int, fit C.uintptr_t) C.int {
	return C.int(fitDispatch(uintptr(h), int(event), uintptr(fit)))
}

//export cmxcGoHandleDelete
func cmxcGoHandleDelete(h C.uintptr_t) {
	deleteHandle(uintptr(h))
}
