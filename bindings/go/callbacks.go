package mxc

import (
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"

	"mxc.dev/mxc/internal/cmxc"
)

// Failures of Go callbacks that C calls (user blocks' forward functions,
// KVStore updaters). The callback's text goes to mxc
// (mxc_set_last_error), which reports it in the failing call's message
// behind its own prefixes (the key of a push). The Go error itself is kept
// here, per OS thread, for errors.Is/As: the callback runs on the thread
// of the C call that called it (mxc.h says so for both), which package mxc
// holds locked, and the next lastError on that thread (the failing call's
// own check) wraps it.

// callbackError is a kept failure: the callback's own error (nil for a
// panic).
type callbackError struct {
	cause error
}

var pendingCallbackErrors struct {
	sync.Mutex
	byThread map[int]*callbackError
	n        atomic.Int32 // len(byThread), read without the lock
}

// keepCallbackError records the failure of a callback on this thread
// and returns the code C should see: the mxc code of an *Error, else
// ErrOperator (ErrInternal for a panic).
func keepCallbackError(what string, err error, panicked any) int {
	e := &callbackError{cause: err}
	code := ErrOperator
	var msg string
	if panicked != nil {
		msg, e.cause, code = fmt.Sprintf("%s panicked: %v", what, panicked), nil, ErrInternal
	} else {
		msg = what + ": " + err.Error()
		if me, ok := err.(*Error); ok && me.Code != 0 {
			code = me.Code
		}
	}
	cmxc.Go_set_last_error(code, msg)
	p := &pendingCallbackErrors
	p.Lock()
	if p.byThread == nil {
		p.byThread = map[int]*callbackError{}
	}
	p.byThread[syscall.Gettid()] = e
	p.n.Store(int32(len(p.byThread)))
	p.Unlock()
	return code
}

// takeCallbackError removes and returns this thread's kept failure, if
// any (also after a call that succeeded: a failure C did not report is
// stale). One atomic load when no callback failed.
func takeCallbackError() *callbackError {
	p := &pendingCallbackErrors
	if p.n.Load() == 0 {
		return nil
	}
	tid := syscall.Gettid()
	p.Lock()
	defer p.Unlock()
	e := p.byThread[tid]
	if e != nil {
		delete(p.byThread, tid)
		p.n.Store(int32(len(p.byThread)))
	}
	return e
}
