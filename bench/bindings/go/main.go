// Command bench measures the per-call cost of a tiny operator invoke
// through the Go binding against the same loop in C, in one process.
//
// The call: elemwise_add of two float32 arrays of 4 elements, a new output
// each call, freed each call, mxc_wait_all every 1000 calls. The two loops
// alternate -rounds times; the best round of each is printed:
//
//	c_invoke_us=...   go_invoke_us=...   go_overhead_us=... (the difference)
//
// Many short rounds, because the minimum of each is what survives a busy
// machine. The threaded engine's timing depends on how often its workers
// sleep and wake, which a slower caller changes; MXC_ENGINE=naive runs
// operators on the calling thread and isolates the binding's own cost.
//
// Run (after sourcing bindings/test_prefix.sh, or with mxc installed):
//
//	cd bench/bindings/go && go run . [-n 20000] [-rounds 40]
//	cd bench/bindings/go && MXC_ENGINE=naive go run .
package main

/*
#cgo pkg-config: mxc
#include <stdint.h>
#include <time.h>
#include <mxc/mxc.h>

// The C side of the comparison: the same sequence with mxc_op_invoke
// called directly. Returns seconds per call, or -1 on failure.
static double c_loop(int64_t n) {
  const int64_t shape[1] = {4};
  const float init[4] = {1, 2, 3, 4};
  mxc_op op = NULL;
  mxc_ndarray in[2] = {NULL, NULL};
  struct timespec t0, t1;
  double secs = -1;
  int64_t i;
  if (mxc_op_find("elemwise_add", &op) != MXC_OK) return -1;
  for (i = 0; i < 2; i++)
    if (mxc_ndarray_create(shape, 1, MXC_DTYPE_FLOAT32, MXC_DEVICE_CPU, 0, 0,
                           &in[i]) != MXC_OK ||
        mxc_ndarray_copy_from_host(in[i], init, sizeof init) != MXC_OK)
      goto done;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (i = 1; i <= n; i++) {
    mxc_ndarray out = NULL;
    if (mxc_op_invoke(op, NULL, NULL, 0, in, 2, &out, 1, NULL) != MXC_OK)
      goto done;
    mxc_ndarray_free(out);
    if (i % 1000 == 0 && mxc_wait_all() != MXC_OK) goto done;
  }
  if (mxc_wait_all() != MXC_OK) goto done;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  secs = ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n;
done:
  mxc_ndarray_free(in[0]);
  mxc_ndarray_free(in[1]);
  return secs;
}
*/
import "C"

import (
	"flag"
	"fmt"
	"log"
	"time"

	"mxc.dev/mxc"
)

// goLoop is the Go side: the same sequence through package mxc. Returns
// seconds per call.
func goLoop(n int) (float64, error) {
	add, err := mxc.FindOp("elemwise_add")
	if err != nil {
		return 0, err
	}
	a, err := mxc.FromFloat32([]float32{1, 2, 3, 4}, 4)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	b, err := mxc.FromFloat32([]float32{1, 2, 3, 4}, 4)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	t0 := time.Now()
	for i := 1; i <= n; i++ {
		out, err := add.Call(a, b)
		if err != nil {
			return 0, err
		}
		out.Close()
		if i%1000 == 0 {
			if err := mxc.WaitAll(); err != nil {
				return 0, err
			}
		}
	}
	if err := mxc.WaitAll(); err != nil {
		return 0, err
	}
	return time.Since(t0).Seconds() / float64(n), nil
}

func main() {
	n := flag.Int("n", 20000, "calls per round")
	rounds := flag.Int("rounds", 40, "alternating rounds of each loop")
	flag.Parse()
	bestC, bestGo := -1.0, -1.0
	for r := 0; r < *rounds; r++ {
		c := float64(C.c_loop(C.int64_t(*n)))
		if c < 0 {
			log.Fatal("the C loop failed")
		}
		g, err := goLoop(*n)
		if err != nil {
			log.Fatal(err)
		}
		if bestC < 0 || c < bestC {
			bestC = c
		}
		if bestGo < 0 || g < bestGo {
			bestGo = g
		}
	}
	fmt.Printf("calls_per_round=%d\nrounds=%d\n", *n, *rounds)
	fmt.Printf("c_invoke_us=%.3f\n", bestC*1e6)
	fmt.Printf("go_invoke_us=%.3f\n", bestGo*1e6)
	fmt.Printf("go_overhead_us=%.3f\n", (bestGo-bestC)*1e6)
}
