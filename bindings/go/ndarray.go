package mxc

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"mxc.dev/mxc/internal/cmxc"
)

// DType is an element type (MXC_DTYPE_* of mxc.h).
type DType int

// The element types. Float16, BFloat16 and Bool arrays can be created and
// used by operators; the typed slice accessors cover the others.
const (
	Float32  DType = 0
	Float64  DType = 1
	Float16  DType = 2
	Uint8    DType = 3
	Int32    DType = 4
	Int8     DType = 5
	Int64    DType = 6
	Bool     DType = 7
	BFloat16 DType = 12
)

// Element is the set of Go element types with a matching DType.
type Element interface {
	float32 | float64 | uint8 | int32 | int8 | int64
}

// DTypeOf is the DType of T.
func DTypeOf[T Element]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case uint8:
		return Uint8
	case int32:
		return Int32
	case int8:
		return Int8
	default: // int64
		return Int64
	}
}

// NDArray is a dense CPU array owned by Go.
//
// Ownership: the NDArray owns one C handle; Close frees it, and so does a
// finalizer when the NDArray becomes unreachable without Close. Arrays
// returned by Reshape, Slice, Grad and the Executor accessors are views:
// each owns its own handle but shares storage with the array it came from
// (the storage lives until the last handle is freed).
//
// Thread-safety: methods may be called from many goroutines at once;
// Close must not overlap other calls on the same NDArray.
type NDArray struct {
	c atomic.Pointer[cell] // nil once closed
}

// cell holds an array's handle and carries the finalizer.
//
// Why not a finalizer on NDArray itself: arming a finalizer and clearing
// it again in Close costs about 0.1 us, and leaving it armed costs more
// (a finalizer that runs costs close to 1 us), against a goal of 0.2 us
// of overhead per tiny operator call including its output. So the
// finalizer lives on a cell that Close recycles through a pool: a cell
// in use is reachable from its NDArray, a closed one from the pool, and
// its finalizer runs only when a dropped NDArray takes its cell with it
// (freeing the handle) or when the pool lets an empty cell go (no-op).
type cell struct {
	h    uintptr // the mxc_ndarray; 0 when empty (read and swapped atomically)
	lent bool    // lent by C for a callback (lend): never freed by Go
}

var cells = sync.Pool{New: func() any {
	c := new(cell)
	runtime.SetFinalizer(c, (*cell).release)
	return c
}}

// release frees the handle, once (Close, or the finalizer).
func (c *cell) release() {
	if h := atomic.SwapUintptr(&c.h, 0); h != 0 {
		freeSoon(h)
		live.Add(-1)
	}
}

// Frees are batched: Close and the finalizers queue handles, and the
// queue is freed in one C call when full (64 handles), and before
// anything that observes memory or waits (WaitAll, StorageBytesInUse, a
// pacing collection). A cgo crossing costs about as much as the whole
// budget of a tiny operator call's overhead; the queue costs a mutex.
// Freeing a handle late is harmless: the storage of an array with
// pending work lives until the work is done anyway.
var freeQ struct {
	sync.Mutex
	h [64]uintptr
	n int
}

func freeSoon(h uintptr) {
	freeQ.Lock()
	freeQ.h[freeQ.n] = h
	freeQ.n++
	if freeQ.n == len(freeQ.h) {
		cmxc.Go_ndarray_free_many(freeQ.h[:])
		freeQ.n = 0
	}
	freeQ.Unlock()
}

// flushFrees frees the queued handles now.
func flushFrees() {
	freeQ.Lock()
	if freeQ.n > 0 {
		cmxc.Go_ndarray_free_many(freeQ.h[:freeQ.n])
		freeQ.n = 0
	}
	freeQ.Unlock()
}

// Pacing. The Go collector sees an NDArray as 8 bytes, not as the native
// memory behind it, and one goroutine runs all finalizers: a loop that
// drops arrays without Close can outrun both, and native memory grows
// with the backlog. So the package counts the handles it owns (live) and,
// when they pass a threshold, the goroutine creating one runs a
// collection and gives the finalizers time to free what it found before
// going on; the next threshold is twice what is then still live (at
// least minCollectAt), so programs that keep many arrays are not slowed.
const minCollectAt = 1 << 14

var (
	live      atomic.Int64 // handles owned by NDArrays, not yet freed
	collectAt atomic.Int64 // live count that triggers a collection
	collectMu sync.Mutex   // one collection at a time
)

func init() { collectAt.Store(minCollectAt) }

func collect() {
	collectMu.Lock()
	defer collectMu.Unlock()
	if live.Load() <= collectAt.Load() {
		return // another goroutine just collected
	}
	runtime.GC()
	defer flushFrees()
	// The finalizers run concurrently; wait while they make progress.
	for idle, prev := 0, live.Load(); idle < 20; {
		time.Sleep(50 * time.Microsecond)
		if n := live.Load(); n < prev {
			prev, idle = n, 0
		} else {
			idle++
		}
	}
	next := 2 * live.Load()
	if next < minCollectAt {
		next = minCollectAt
	}
	collectAt.Store(next)
}

// newNDArray wraps a new handle (nonzero).
func newNDArray(h uintptr) *NDArray {
	if live.Add(1) > collectAt.Load() {
		collect()
	}
	tagNew(h)
	c := cells.Get().(*cell)
	atomic.StoreUintptr(&c.h, h)
	a := new(NDArray)
	a.c.Store(c)
	return a
}

// Close releases the native array: its handle is freed at once or, to
// save a C call per array, within the next 63 Closes or finalizations,
// and always before WaitAll and StorageBytesInUse look. Idempotent; a nil
// NDArray is accepted. Always returns nil (the error is for io.Closer).
func (a *NDArray) Close() error {
	if a == nil {
		return nil
	}
	if c := a.c.Load(); c != nil && c.lent {
		return nil // C's (a callback's input): ends with the call
	}
	if c := a.c.Swap(nil); c != nil {
		c.release()
		cells.Put(c)
	}
	return nil
}

// handle is the live handle, or an error for a nil or closed array.
func (a *NDArray) handle() (uintptr, error) {
	if a == nil {
		return 0, newError(ErrInvalidHandle, "nil NDArray")
	}
	if c := a.c.Load(); c != nil {
		if h := atomic.LoadUintptr(&c.h); h != 0 {
			return h, nil
		}
	}
	return 0, newError(ErrInvalidHandle, "NDArray used after Close")
}

// typed is the handle as the SWIG proxy type.
func (a *NDArray) typed() (cmxc.NDArrayHandle, error) {
	h, err := a.handle()
	return cmxc.SwigcptrNDArrayHandle(h), err
}

// wrapNew turns a handle returned by a constructor into an NDArray, or
// the thread's failure into an error (the caller holds the OS thread).
func wrapNew(h cmxc.NDArrayHandle) (*NDArray, error) {
	p := uintptr(0)
	if h != nil {
		p = h.Swigcptr()
	}
	if p == 0 {
		return nil, lastError()
	}
	return newNDArray(p), nil
}

// Zeros is a new array of the given type and shape filled with zeros.
// An empty shape is a scalar (one element).
func Zeros(dtype DType, shape ...int64) (*NDArray, error) {
	a, err := Empty(dtype, shape...)
	if err != nil {
		return nil, err
	}
	if err := a.Init("zeros", nil); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Empty is a new array whose contents are unspecified until written.
func Empty(dtype DType, shape ...int64) (*NDArray, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return wrapNew(cmxc.Ndarray_create(shape, int(dtype)))
}

// FromSlice is a new array of T's dtype holding a copy of data, which must
// have exactly as many elements as the shape (an empty shape: 1).
func FromSlice[T Element](data []T, shape ...int64) (*NDArray, error) {
	a, err := Empty(DTypeOf[T](), shape...)
	if err != nil {
		return nil, err
	}
	if err := CopyFrom(a, data); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// FromFloat32 is FromSlice for float32 data.
func FromFloat32(data []float32, shape ...int64) (*NDArray, error) {
	return FromSlice(data, shape...)
}

// bytesOf views a slice's elements as bytes (no copy; for one C call).
func bytesOf[T Element](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

// CopyFrom overwrites a with data (same element count and dtype; the C
// library checks both). Waits for pending work on a.
func CopyFrom[T Element](a *NDArray, data []T) error {
	t, err := typedAs[T](a, "data", data)
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Ndarray_copy_from(t, bytesOf(data)) })
	runtime.KeepAlive(a)
	return err
}

// ToSlice copies a into a new []T (T must match the dtype). Waits for
// pending work on a and reports its failure.
func ToSlice[T Element](a *NDArray) ([]T, error) {
	n, err := a.Size()
	if err != nil {
		return nil, err
	}
	out := make([]T, n)
	if err := CopyTo(a, out); err != nil {
		return nil, err
	}
	return out, nil
}

// CopyTo copies a into out, which must have a's element count and dtype.
func CopyTo[T Element](a *NDArray, out []T) error {
	t, err := typedAs[T](a, "destination", out)
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Ndarray_copy_to(t, bytesOf(out)) })
	runtime.KeepAlive(a)
	return err
}

// typedAs is a's handle once T is known to be a's dtype (host is the Go
// side of the copy, named what in the error).
func typedAs[T Element](a *NDArray, what string, host any) (cmxc.NDArrayHandle, error) {
	t, err := a.typed()
	if err != nil {
		return nil, err
	}
	dt, err := a.DType()
	if err != nil {
		return nil, err
	}
	if dt != DTypeOf[T]() {
		return nil, newError(ErrDType, "array has dtype %d, %s is %T", dt, what, host)
	}
	return t, nil
}

// Float32s copies a float32 array into a new slice.
func (a *NDArray) Float32s() ([]float32, error) { return ToSlice[float32](a) }

// query runs one C getter that returns -1 on failure, pinned to the OS
// thread so that the failure's message is read on the thread that set it.
func (a *NDArray) query(get func(cmxc.NDArrayHandle) int64) (int64, error) {
	t, err := a.typed()
	if err != nil {
		return 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	v := get(t)
	runtime.KeepAlive(a)
	if v < 0 {
		return 0, lastError()
	}
	return v, nil
}

// Size is the number of elements.
func (a *NDArray) Size() (int64, error) { return a.query(cmxc.Ndarray_size) }

// DType is the element type.
func (a *NDArray) DType() (DType, error) {
	d, err := a.query(func(t cmxc.NDArrayHandle) int64 { return int64(cmxc.Ndarray_dtype(t)) })
	return DType(d), err
}

// Shape is a new slice with the extent of each dimension.
func (a *NDArray) Shape() ([]int64, error) {
	t, err := a.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(a)
	nd := cmxc.Ndarray_ndim(t)
	if nd < 0 {
		return nil, lastError()
	}
	shape := make([]int64, nd)
	for i := range shape {
		if shape[i] = cmxc.Ndarray_dim(t, i); shape[i] < 0 {
			return nil, lastError()
		}
	}
	return shape, nil
}

// Reshape is a view of a with a new shape of the same element count.
func (a *NDArray) Reshape(shape ...int64) (*NDArray, error) {
	t, err := a.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(a)
	return wrapNew(cmxc.Ndarray_reshape(t, shape))
}

// Slice is a view of rows [begin, end) along the first dimension.
func (a *NDArray) Slice(begin, end int64) (*NDArray, error) {
	t, err := a.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(a)
	return wrapNew(cmxc.Ndarray_slice(t, begin, end))
}

// At is a view of row i (one dimension less).
func (a *NDArray) At(i int64) (*NDArray, error) {
	t, err := a.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(a)
	return wrapNew(cmxc.Ndarray_at(t, i))
}

// CopyTo schedules a copy of a into dst (same shape and dtype).
func (a *NDArray) CopyTo(dst *NDArray) error {
	src, err := a.typed()
	if err != nil {
		return err
	}
	d, err := dst.typed()
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Ndarray_copy(src, d) })
	runtime.KeepAlive(a)
	runtime.KeepAlive(dst)
	return err
}

// Wait waits until pending writes to a are done and reports their failure.
func (a *NDArray) Wait() error {
	t, err := a.typed()
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Ndarray_wait_to_read(t) })
	runtime.KeepAlive(a)
	return err
}

// Init fills a with an initializer: "zeros", "ones", "uniform",
// "normal", "xavier", ... with its parameters (see mxc_init_array).
func (a *NDArray) Init(method string, params map[string]string) error {
	t, err := a.typed()
	if err != nil {
		return err
	}
	if err := cstr("initializer", method); err != nil {
		return err
	}
	kv, err := packParams(params)
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Init_array(t, method, kv) })
	runtime.KeepAlive(a)
	return err
}

// Accuracy counts the rows of pred (batch x classes) whose argmax equals
// label (batch).
func Accuracy(pred, label *NDArray) (int64, error) {
	p, err := pred.typed()
	if err != nil {
		return 0, err
	}
	l, err := label.typed()
	if err != nil {
		return 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := cmxc.Metric_correct(p, l)
	runtime.KeepAlive(pred)
	runtime.KeepAlive(label)
	if n < 0 {
		return 0, lastError()
	}
	return n, nil
}
