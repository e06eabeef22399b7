package mxc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// liveHandles is the process's live-handle count once the finalizers of
// earlier garbage have run: unchanged over five rounds of collection 10 ms
// apart. Three rounds 2 ms apart were too short under TSan on a loaded
// 2-core machine: the finalizer goroutine, descheduled that long, freed 5
// earlier handles after the count was taken (1 run in 10, 2026-11-29).
func liveHandles(t *testing.T) int64 {
	t.Helper()
	prev, steady := int64(-1), 0
	for i := 0; i < 500 && steady < 5; i++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		n, _, err := MemoryStats()
		if err != nil {
			t.Fatal(err)
		}
		if n == prev {
			steady++
		} else {
			prev, steady = n, 0
		}
	}
	return prev
}

func mustFreed(t *testing.T, a *NDArray) {
	t.Helper()
	_, err := a.Float32s()
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrInvalidHandle {
		t.Fatalf("want ErrInvalidHandle for an array of an ended scope, got %v", err)
	}
}

func TestScopeFreesEverythingMadeInside(t *testing.T) {
	relu, _ := FindOp("relu")
	before := liveHandles(t)
	var a, b *NDArray
	err := WithScope(func() error {
		var err error
		if a, err = FromFloat32([]float32{-1, 2, -3}, 3); err != nil {
			return err
		}
		if b, err = relu.Call(a); err != nil {
			return err
		}
		if _, err = Zeros(Float32, 2, 2); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	mustFreed(t, a)
	mustFreed(t, b)
	a.Close() // nothing freed twice: the library recognizes the handle
	runtime.KeepAlive(b)
	if after := liveHandles(t); after != before {
		t.Fatalf("live handles %d after the scope, %d before", after, before)
	}
}

func TestScopeKeepNestingAndStats(t *testing.T) {
	relu, _ := FindOp("relu")
	sum, _ := FindOp("sum")
	before := liveHandles(t)
	var y, z *NDArray
	err := WithScope(func() error {
		outer, err := BeginScope()
		if err != nil {
			return err
		}
		defer outer.End()
		x, _ := FromFloat32([]float32{-1, 2, -3, 4}, 4)
		err = WithScope(func() error {
			r, err := relu.Call(x)
			if err != nil {
				return err
			}
			if y, err = sum.Call(r); err != nil {
				return err
			}
			_, err = y.Keep()
			return err
		})
		if err != nil {
			return err
		}
		if n, bytes, _ := outer.Stats(); n != 2 || bytes != 4*(4+1) {
			t.Errorf("outer scope: %d handles, %d bytes; want 2, 20", n, bytes)
		}
		runtime.KeepAlive(x) // not finalized (freed by hand) before the count
		if z, err = Zeros(Float32, 3); err == nil {
			_, err = z.DetachFromScope()
		}
		if n, _, _ := outer.Stats(); n != 2 {
			t.Errorf("detached array still counted: %d", n)
		}
		if v, _ := y.Float32s(); len(v) != 1 || v[0] != 6 {
			t.Errorf("sum of relu = %v, want [6]", v)
		}
		// The outer scope cannot end while an inner one is open.
		inner, _ := BeginScope()
		if e := outer.End(); e == nil {
			t.Error("ending the outer scope before the inner one succeeded")
		}
		return inner.End()
	})
	if err != nil {
		t.Fatal(err)
	}
	mustFreed(t, y)
	if v, err := z.Float32s(); err != nil || len(v) != 3 {
		t.Fatalf("detached array: %v %v", v, err)
	}
	z.Close()
	if after := liveHandles(t); after != before {
		t.Fatalf("live handles %d after, %d before", after, before)
	}
}

func TestScopesPerGoroutine(t *testing.T) {
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(v float32) {
			defer wg.Done()
			for r := 0; r < 25; r++ {
				err := WithScope(func() error {
					s, _ := BeginScope()
					defer s.End()
					// Held: a dropped array may be finalized (freed by hand)
					// before the count below.
					held := make([]*NDArray, 0, 40)
					for i := 0; i < 40; i++ {
						a, err := FromFloat32([]float32{v, v, v}, 3)
						if err != nil {
							return err
						}
						held = append(held, a)
					}
					last := held[len(held)-1]
					if n, b, _ := s.Stats(); n != 40 || b != 40*12 {
						return newError(ErrInternal, "scope has %d handles, %d bytes", n, b)
					}
					if got, _ := last.Float32s(); got[1] != v {
						return newError(ErrInternal, "contents %v", got)
					}
					runtime.KeepAlive(held)
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}(float32(g))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestScopeDumpNamesTheTag(t *testing.T) {
	if err := SetHandleDebug(true); err != nil {
		t.Fatal(err)
	}
	defer SetHandleDebug(false)
	s, err := BeginScope()
	if err != nil {
		t.Fatal(err)
	}
	defer s.End()
	// A thread tag, replaced by each array's own maker (this file).
	if err := SetHandleTag("thread tag"); err != nil {
		t.Fatal(err)
	}
	_, _, line, _ := runtime.Caller(0)
	a, _ := Empty(Float32, 2)
	SetHandleTag("")
	d, err := s.Dump()
	want := fmt.Sprintf("8 bytes, made by mxc_ndarray_create at %s:%d,", thisFile(), line+1)
	if err != nil || !strings.Contains(d, want) {
		t.Fatalf("dump %q lacks %q (%v)", d, want, err)
	}
	runtime.KeepAlive(a)
}

func thisFile() string {
	_, file, _, _ := runtime.Caller(1)
	return file
}

func TestMillionArraysInScopesKeepMemoryFlat(t *testing.T) {
	n := 1000000
	if testing.Short() {
		n = 100000
	}
	held := make([]*NDArray, 0, 1000)
	round := func() {
		held = held[:0] // referenced until the scope ends: only it frees them
		err := WithScope(func() error {
			for i := 0; i < 1000; i++ {
				a, err := Empty(Float32, 4)
				if err != nil {
					return err
				}
				held = append(held, a)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < 20; r++ {
		round() // warm the pool and the allocator
	}
	before, rss := liveHandles(t), rssBytes(t)
	for r := 0; r < n/1000; r++ {
		round()
	}
	mustFreed(t, held[0])
	if after := liveHandles(t); after != before {
		t.Fatalf("live handles %d after, %d before", after, before)
	}
	if grown := rssBytes(t) - rss; os.Getenv("MXC_SANITIZER") == "" && grown > 32<<20 {
		t.Fatalf("RSS grew by %d bytes over %d arrays in scopes", grown, n)
	}
}
