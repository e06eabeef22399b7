package mxc

import (
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
)

// Many goroutines at once: arrays created, combined by operators, read
// back and checked, closed or dropped; operators looked up concurrently;
// and failures raised concurrently, each of which must carry its own
// message (the C message is thread-local: a mix-up would show here). Run
// with -race too.
func TestManyGoroutinesHammerArraysAndOperators(t *testing.T) {
	const goroutines = 16
	iters := 300
	if testing.Short() {
		iters = 100
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	shared := mustF32(t, []float32{1, 1, 1, 1}, 4) // read by all
	defer shared.Close()
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			fail := func(format string, args ...any) {
				errs <- fmt.Errorf("goroutine %d: "+format, append([]any{g}, args...)...)
			}
			for i := 0; i < iters; i++ {
				add, err := FindOp("elemwise_add")
				if err != nil {
					fail("FindOp: %v", err)
					return
				}
				x := []float32{float32(g), float32(i), 1, -1}
				a, err := FromFloat32(x, 4)
				if err != nil {
					fail("FromFloat32: %v", err)
					return
				}
				s, err := add.Call(a, shared)
				if err != nil {
					fail("add: %v", err)
					return
				}
				m, err := Invoke("elemwise_mul", []*NDArray{s, s}, nil)
				if err != nil {
					fail("mul: %v", err)
					return
				}
				got, err := m[0].Float32s()
				if err != nil {
					fail("read: %v", err)
					return
				}
				for k := range x {
					if want := (x[k] + 1) * (x[k] + 1); got[k] != want {
						fail("element %d = %v, want %v", k, got[k], want)
						return
					}
				}
				// A failure naming this goroutine: its message must come back.
				name := fmt.Sprintf("no_such_op_%d_%d", g, i)
				if _, err := FindOp(name); err == nil || !strings.Contains(err.Error(), name) {
					fail("error for %s: %v", name, err)
					return
				}
				if rng.Intn(2) == 0 { // half closed, half left to the finalizers
					a.Close()
					s.Close()
					m[0].Close()
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := WaitAll(); err != nil {
		t.Fatal(err)
	}
}

// Close racing with the finalizer and with another Close of the same
// array: each handle is freed exactly once (a double free would crash).
func TestConcurrentClose(t *testing.T) {
	for i := 0; i < 200; i++ {
		a := mustF32(t, []float32{1, 2}, 2)
		var wg sync.WaitGroup
		for k := 0; k < 4; k++ {
			wg.Add(1)
			go func() { defer wg.Done(); a.Close() }()
		}
		wg.Wait()
	}
}
