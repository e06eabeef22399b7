package mxc

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"mxc.dev/mxc/internal/cmxc"
)

// Scope is a memory scope (mxc_scope_* of the C library): every NDArray,
// Symbol, Executor, DataIter, Predictor or RecordIO the goroutine makes
// while the scope is its innermost open one is freed when the scope ends,
// unless moved out first (NDArray.Keep into the enclosing scope,
// NDArray.DetachFromScope out of every scope).
//
//	err := mxc.WithScope(func() error {
//		t, err := relu.Call(x)   // a temporary: freed at the end
//		if err != nil {
//			return err
//		}
//		y, err = sum.Call(t)
//		if err == nil {
//			_, err = y.Keep() // survives the scope
//		}
//		return err
//	})
//
// or, with an explicit end:
//
//	s, err := mxc.BeginScope()
//	if err != nil { ... }
//	defer s.End()
//
// Scopes belong to an OS thread in C, so BeginScope pins the goroutine
// to its thread (runtime.LockOSThread) until End; begin and end a scope
// on one goroutine, innermost first. Values made by other goroutines
// never land in it. Using a value after its scope ended is an *Error
// with Code ErrInvalidHandle; its Close and finalizer are then no-ops in
// C (the freed handle is recognized, nothing is freed twice).
type Scope struct {
	h     uintptr
	ended atomic.Bool
}

// BeginScope opens a scope on the calling goroutine's OS thread and pins
// the goroutine there until End.
func BeginScope() (*Scope, error) {
	runtime.LockOSThread()
	h := cmxc.Scope_begin()
	if h == nil || h.Swigcptr() == 0 {
		err := lastError()
		runtime.UnlockOSThread()
		return nil, err
	}
	return &Scope{h: h.Swigcptr()}, nil
}

// End frees what is still in the scope and unpins the goroutine.
// Idempotent. Ending a scope with scopes still open inside it, or from
// another goroutine, is an error (ErrInvalidArgument) and ends nothing.
func (s *Scope) End() error {
	if s == nil || s.ended.Load() {
		return nil
	}
	cmxc.Scope_end(cmxc.SwigcptrScopeHandle(s.h))
	if err := lastError(); err != nil {
		return err
	}
	s.ended.Store(true)
	runtime.UnlockOSThread()
	return nil
}

// WithScope runs fn inside a new scope and ends it when fn returns (also
// on a panic). fn's error, else End's, is returned.
func WithScope(fn func() error) (err error) {
	s, err := BeginScope()
	if err != nil {
		return err
	}
	defer func() {
		if e := s.End(); err == nil {
			err = e
		}
	}()
	return fn()
}

// Stats returns the live handles registered in the scope and the bytes
// of their array data.
func (s *Scope) Stats() (handles, bytes int64, err error) {
	if s == nil || s.ended.Load() {
		return 0, 0, newError(ErrInvalidHandle, "Scope used after End")
	}
	return scopeStats(s.h)
}

// MemoryStats returns the live handles of every kind in the process and
// the bytes of every live array's data.
func MemoryStats() (handles, bytes int64, err error) {
	flushFrees() // handles already closed are not live
	return scopeStats(0)
}

func scopeStats(h uintptr) (int64, int64, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := cmxc.Scope_handles(cmxc.SwigcptrScopeHandle(h))
	if n < 0 {
		return 0, 0, lastError()
	}
	b := cmxc.Scope_bytes(cmxc.SwigcptrScopeHandle(h))
	if b < 0 {
		return 0, 0, lastError()
	}
	return n, b, nil
}

// Dump lists the scope's live handles, a line each: kind, bytes, the C
// function that made it, and (with SetHandleDebug) the caller's tag.
func (s *Scope) Dump() (string, error) {
	if s == nil || s.ended.Load() {
		return "", newError(ErrInvalidHandle, "Scope used after End")
	}
	return dumpHandles(s.h)
}

// DumpHandles lists every live handle of the process (see Scope.Dump).
func DumpHandles() (string, error) {
	flushFrees()
	return dumpHandles(0)
}

func dumpHandles(h uintptr) (string, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	text := cmxc.Handle_dump(cmxc.SwigcptrScopeHandle(h))
	return text, lastError()
}

// handleDebug caches whether handle debugging is on (MXC_DEBUG_HANDLES=1
// at start, then SetHandleDebug), so that new arrays pay one load.
var handleDebug atomic.Bool

func init() { handleDebug.Store(cmxc.Handle_debug_enabled() != 0) }

// SetHandleDebug turns handle debugging on or off: while on, every new
// NDArray or Predictor records the file:line of the code that made it
// (the first caller outside this package), which dumps show.
func SetHandleDebug(on bool) error {
	v := 0
	if on {
		v = 1
	}
	handleDebug.Store(on)
	return call(func() { cmxc.Handle_debug_set(v) })
}

// tagNew tags new handle h with its maker's location while debugging.
func tagNew(h uintptr) {
	if !handleDebug.Load() {
		return
	}
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		inside := strings.HasPrefix(f.Function, "mxc.dev/mxc.") &&
			!strings.HasSuffix(f.File, "_test.go")
		if !inside || !more {
			// Best effort: a failure only leaves the handle untagged.
			cmxc.Handle_tag(int64(h), fmt.Sprintf("%s:%d", f.File, f.Line))
			return
		}
	}
}

// SetHandleTag sets the calling goroutine's caller tag ("" clears it),
// recorded by the handles it makes while debugging is on. Tags belong to
// the OS thread: set them inside a scope (the goroutine is pinned).
func SetHandleTag(tag string) error {
	if tag == "" {
		return call(func() { cmxc.Go_handle_tag_clear() })
	}
	if err := cstr("tag", tag); err != nil {
		return err
	}
	return call(func() { cmxc.Handle_tag_set(tag) })
}

// Keep moves the array out of its scope into the enclosing one (from an
// outermost scope: into none), so that it outlives the scope. A no-op
// for an array in no scope. Returns a for chaining.
func (a *NDArray) Keep() (*NDArray, error) { return a, a.moveOut(0) }

// DetachFromScope moves the array out of every scope: only Close or the
// finalizer frees it. (Not Detach, which drops gradient history.)
func (a *NDArray) DetachFromScope() (*NDArray, error) { return a, a.moveOut(1) }

func (a *NDArray) moveOut(all int) error {
	h, err := a.handle()
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(a)
	return call(func() { cmxc.Scope_keep(int64(h), all) })
}
