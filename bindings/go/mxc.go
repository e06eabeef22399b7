// Package mxc is the Go binding of mxc, a deep-learning runtime with a C
// API (libmxc.so.1, found through pkg-config: `#cgo pkg-config: mxc`).
//
// It offers dense CPU arrays (NDArray), operators invoked by name with
// string parameters (Op, Invoke), imperative autograd (Record, Backward),
// symbolic graphs bound to executors (Symbol, Executor) and the IDX data
// iterator (DataIter).
//
// # Errors
//
// Every fallible function returns an error; failures reported by the C
// library are *Error values carrying the library's code, its name and the
// original message. Bad input (closed arrays, unknown operators, bad
// parameters, wrong shapes or slice lengths) is an error, never a panic
// or a crash.
//
// # Memory
//
// NDArray, Symbol, Executor and DataIter own native memory. Close releases
// it (idempotent; NDArray handles are freed in batches of up to 64 in one
// C call, and always before WaitAll and StorageBytesInUse); a finalizer
// releases whatever was not closed once the value is unreachable, so
// dropped values do not leak. Native memory is invisible to the Go
// collector's pacing, so the package runs a collection itself when the
// number of NDArrays it owns doubles (see ndarray.go); programs that make
// many large arrays should still Close them.
//
// # Goroutines
//
// Every function may be called from any goroutine. A value may be used by
// many goroutines at once, except that Close must not overlap other uses
// of the same value (as with os.File), and an Executor or DataIter must
// not be used by two goroutines at once (DataIter serializes its methods
// with a mutex). The autograd recording and training modes belong to the
// OS thread in C; Record pins the calling goroutine to its thread while
// it runs.
package mxc

import (
	"fmt"
	"runtime"
	"strings"

	"mxc.dev/mxc/internal/cmxc"
)

// Error codes (MXC_ERR_* of mxc.h) carried by Error.Code.
const (
	ErrInvalidArgument = 1
	ErrInvalidHandle   = 2
	ErrShape           = 3
	ErrDType           = 4
	ErrSType           = 5
	ErrOOM             = 6
	ErrNotFound        = 7
	ErrIO              = 8
	ErrUnsupported     = 9
	ErrInternal        = 10
	ErrOperator        = 11
)

// Error is a failure reported by the C library (or detected by this
// package before calling it, with the same codes).
type Error struct {
	Code    int    // an Err* constant (MXC_ERR_*)
	Name    string // "MXC_ERR_SHAPE", ...
	Message string // the library's message: what was wrong and where

	cause error // the Go error of a callback (user block, updater) behind it
}

func (e *Error) Error() string { return e.Name + ": " + e.Message }

// Unwrap is the error a Go callback (a user block's forward function, a
// KVStore updater) returned when that is why the call failed, so that
// errors.Is and errors.As reach it; nil otherwise.
func (e *Error) Unwrap() error { return e.cause }

// newError builds an Error detected on the Go side.
func newError(code int, format string, args ...any) *Error {
	return &Error{Code: code, Name: cmxc.Error_name(code),
		Message: fmt.Sprintf(format, args...)}
}

// lastError reads the failure of the last mxcb call of this OS thread, nil
// when it succeeded. The caller must have held the goroutine on its thread
// (runtime.LockOSThread) since that call: the flag and the message are
// thread-local in C.
func lastError() error {
	code := cmxc.Last_code()
	cause := takeCallbackError()
	if code == 0 {
		return nil
	}
	e := &Error{Code: code, Name: cmxc.Error_name(code), Message: cmxc.Last_message()}
	if cause != nil {
		e.cause = cause.cause // the message has its text already (mxc's)
	}
	return e
}

// call runs fn, which makes one or more mxcb calls that each leave the
// failure flag, pinned to the OS thread, and returns the failure of the
// last one. For void C functions; functions with a sentinel result check
// it first and call lastError only on failure (one crossing less).
func call(fn func()) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fn()
	return lastError()
}

// packStrings packs a list into the NUL-separated form the low level
// takes (see internal/cmxc/cmxc.swig); strings holding NUL are rejected.
func packStrings(what string, list ...string) (string, error) {
	n := 0
	for _, s := range list {
		if strings.IndexByte(s, 0) >= 0 {
			return "", newError(ErrInvalidArgument, "%s %q contains a NUL byte", what, s)
		}
		n += len(s) + 1
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range list {
		b.WriteString(s)
		b.WriteByte(0)
	}
	return b.String(), nil
}

// packParams packs key/value parameters (any order: keys are distinct).
func packParams(params map[string]string) (string, error) {
	if len(params) == 0 {
		return "", nil
	}
	kv := make([]string, 0, 2*len(params))
	for k, v := range params {
		kv = append(kv, k, v)
	}
	return packStrings("parameter", kv...)
}

// cstr checks a single string argument for NUL bytes (C would cut it).
func cstr(what, s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return newError(ErrInvalidArgument, "%s %q contains a NUL byte", what, s)
	}
	return nil
}

// Version is the library's version string ("1.0.0").
func Version() string { return cmxc.Version_string() }

// WaitAll waits for all work pushed so far by any goroutine and reports
// the first asynchronous failure. Handles released by Close are freed
// first.
func WaitAll() error {
	flushFrees()
	return call(cmxc.Wait_all)
}

// RandomSeed seeds the library's random generators (initializers, random
// operators, iterator shuffling).
func RandomSeed(seed int64) error {
	return call(func() { cmxc.Random_seed(seed) })
}

// SetNumThreads sets the number of CPU worker threads of the engine.
func SetNumThreads(n int) error {
	return call(func() { cmxc.Set_num_threads(n) })
}

// StorageBytesInUse is the number of bytes the CPU allocator has handed to
// live arrays (MXC_STORAGE_BYTES_IN_USE), once the handles released by
// Close are freed.
func StorageBytesInUse() (int64, error) {
	flushFrees()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	v := cmxc.Storage_stat(0)
	if v < 0 {
		return 0, lastError()
	}
	return v, nil
}
