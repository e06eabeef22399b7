package mxc

import (
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"

	"mxc.dev/mxc/internal/cmxc"
)

// Symbol is a symbolic graph (a variable, an operator node or a group).
//
// Ownership: Close frees the handle now; a finalizer frees it otherwise.
// Graphs built from a symbol and executors bound from it keep what they
// need, so a symbol may be closed after use. Thread-safety: a Symbol may
// be read (listed, serialized, bound) from many goroutines at once; Close
// must not overlap other calls.
type Symbol struct {
	owned // the mxc_symbol
}

func newSymbol(h cmxc.SymbolHandle) (*Symbol, error) {
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	s := &Symbol{owned{h.Swigcptr()}}
	runtime.SetFinalizer(s, (*Symbol).Close)
	return s, nil
}

// owned is a native handle freed once, shared by Symbol and Executor:
// Close (or the finalizer) swaps it to 0 and frees it; use after Close is
// an ErrInvalidHandle naming the kind instead of a freed pointer.
type owned struct {
	h uintptr // 0 once closed
}

func (o *owned) release(free func(uintptr)) {
	if h := atomic.SwapUintptr(&o.h, 0); h != 0 {
		free(h)
	}
}

func (o *owned) live(kind string) (uintptr, error) {
	if o == nil {
		return 0, newError(ErrInvalidHandle, "nil %s", kind)
	}
	h := atomic.LoadUintptr(&o.h)
	if h == 0 {
		return 0, newError(ErrInvalidHandle, "%s used after Close", kind)
	}
	return h, nil
}

func freeSymbol(h uintptr) { cmxc.Symbol_free(cmxc.SwigcptrSymbolHandle(h)) }

// Close frees the symbol. Idempotent; always returns nil.
func (s *Symbol) Close() error {
	if s != nil {
		s.release(freeSymbol)
	}
	return nil
}

func (s *Symbol) typed() (cmxc.SymbolHandle, error) {
	var o *owned
	if s != nil {
		o = &s.owned
	}
	h, err := o.live("Symbol")
	return cmxc.SwigcptrSymbolHandle(h), err
}

// Variable is a new free variable (an argument of the graph) named name.
func Variable(name string) (*Symbol, error) {
	if err := cstr("variable name", name); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return newSymbol(cmxc.Symbol_variable(name))
}

// NewSymbol is a node applying operator op with params to inputs (given
// positionally; missing weight/bias inputs become variables named after
// the node). name "" picks one automatically.
func NewSymbol(op string, params map[string]string, name string, inputs ...*Symbol) (*Symbol, error) {
	o, err := FindOp(op)
	if err != nil {
		return nil, err
	}
	kv, err := packParams(params)
	if err != nil {
		return nil, err
	}
	if err := cstr("node name", name); err != nil {
		return nil, err
	}
	hs, err := symbolHandles(inputs)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(inputs)
	return newSymbol(cmxc.Symbol_op(cmxc.SwigcptrOpHandle(o.h), kv, name, hs))
}

func symbolHandles(syms []*Symbol) ([]uintptr, error) {
	hs := make([]uintptr, len(syms))
	for i, s := range syms {
		t, err := s.typed()
		if err != nil {
			return nil, err
		}
		hs[i] = t.Swigcptr()
	}
	return hs, nil
}

// Group is a symbol whose outputs are the outputs of syms.
func Group(syms ...*Symbol) (*Symbol, error) {
	hs, err := symbolHandles(syms)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(syms)
	return newSymbol(cmxc.Symbol_group(hs))
}

// SymbolFromJSON parses a graph saved by JSON.
func SymbolFromJSON(json string) (*Symbol, error) {
	if err := cstr("JSON", json); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return newSymbol(cmxc.Symbol_from_json(json))
}

// JSON serializes the graph.
func (s *Symbol) JSON() (string, error) {
	t, err := s.typed()
	if err != nil {
		return "", err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(s)
	js := cmxc.Symbol_to_json(t)
	return js, lastError()
}

// strList copies a C string list into Go and frees it.
func strList(l cmxc.StrListHandle) ([]string, error) {
	if l == nil || l.Swigcptr() == 0 {
		return nil, lastError()
	}
	defer cmxc.Str_list_free(l)
	n := cmxc.Str_list_size(l)
	if n < 0 {
		return nil, lastError()
	}
	out := make([]string, n)
	for i := range out {
		out[i] = cmxc.Str_list_get(l, i)
	}
	return out, nil
}

// Arguments lists the graph's arguments (variables) in order.
func (s *Symbol) Arguments() ([]string, error) {
	t, err := s.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(s)
	return strList(cmxc.Symbol_list_arguments(t))
}

// Outputs lists the graph's output names.
func (s *Symbol) Outputs() ([]string, error) {
	t, err := s.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(s)
	return strList(cmxc.Symbol_list_outputs(t))
}

// Executor runs a bound graph on the CPU.
//
// Ownership: Close frees it (and its arrays, except the handles obtained
// with Arg, Grad and Output, which stay valid); a finalizer frees it
// otherwise. Thread-safety: calls on one Executor must not overlap.
type Executor struct {
	owned // the mxc_executor
}

// SimpleBind allocates the graph's arrays for the given input shapes
// (the other shapes are inferred) and binds them; every argument gets a
// gradient array with request req (GradNull: inference only).
func (s *Symbol) SimpleBind(shapes map[string][]int64, req GradReq) (*Executor, error) {
	return s.SimpleBindOn(CPU(), shapes, req)
}

// SimpleBindOn is SimpleBind with every array on device d. A GPU that
// cannot be used is an *Error with code ErrUnsupported; an operator
// without a kernel for d fails at bind or Forward, naming the operator.
func (s *Symbol) SimpleBindOn(d Device, shapes map[string][]int64, req GradReq) (*Executor, error) {
	t, err := s.typed()
	if err != nil {
		return nil, err
	}
	kv := make([]string, 0, 2*len(shapes))
	for name, shape := range shapes {
		dims := make([]string, len(shape))
		for i, d := range shape {
			dims[i] = fmt.Sprint(d)
		}
		kv = append(kv, name, "("+strings.Join(dims, ",")+")")
	}
	packed, err := packStrings("argument name", kv...)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(s)
	h := cmxc.Executor_simple_bind_on(t, packed, int(req), int(d.Kind), d.ID)
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	e := &Executor{owned{h.Swigcptr()}}
	runtime.SetFinalizer(e, (*Executor).Close)
	return e, nil
}

func freeExecutor(h uintptr) { cmxc.Executor_free(cmxc.SwigcptrExecutorHandle(h)) }

// Close frees the executor. Idempotent; always returns nil.
func (e *Executor) Close() error {
	if e != nil {
		e.release(freeExecutor)
	}
	return nil
}

func (e *Executor) typed() (cmxc.ExecutorHandle, error) {
	var o *owned
	if e != nil {
		o = &e.owned
	}
	h, err := o.live("Executor")
	return cmxc.SwigcptrExecutorHandle(h), err
}

// Forward runs the graph (train: training mode, needed before Backward).
func (e *Executor) Forward(train bool) error {
	t, err := e.typed()
	if err != nil {
		return err
	}
	tr := 0
	if train {
		tr = 1
	}
	err = call(func() { cmxc.Executor_forward(t, tr) })
	runtime.KeepAlive(e)
	return err
}

// Backward computes the gradients of the last training Forward (ones as
// head gradients; loss outputs ignore them).
func (e *Executor) Backward() error {
	t, err := e.typed()
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Executor_backward(t) })
	runtime.KeepAlive(e)
	return err
}

// NumOutputs is the number of outputs.
func (e *Executor) NumOutputs() (int, error) {
	t, err := e.typed()
	if err != nil {
		return 0, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(e)
	n := cmxc.Executor_num_outputs(t)
	if n < 0 {
		return 0, lastError()
	}
	return n, nil
}

// executorArray wraps the new handle one accessor returned.
func (e *Executor) array(get func(cmxc.ExecutorHandle) cmxc.NDArrayHandle) (*NDArray, error) {
	t, err := e.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(e)
	return wrapNew(get(t))
}

// Output is a new handle on output i (shared with the executor: it
// changes with each Forward).
func (e *Executor) Output(i int) (*NDArray, error) {
	return e.array(func(t cmxc.ExecutorHandle) cmxc.NDArrayHandle { return cmxc.Executor_output(t, i) })
}

// Arg is a new handle on the argument array named name (write inputs and
// parameters through it).
func (e *Executor) Arg(name string) (*NDArray, error) {
	if err := cstr("argument name", name); err != nil {
		return nil, err
	}
	return e.array(func(t cmxc.ExecutorHandle) cmxc.NDArrayHandle { return cmxc.Executor_arg(t, name) })
}

// Grad is a new handle on the gradient array of argument name.
func (e *Executor) Grad(name string) (*NDArray, error) {
	if err := cstr("argument name", name); err != nil {
		return nil, err
	}
	return e.array(func(t cmxc.ExecutorHandle) cmxc.NDArrayHandle { return cmxc.Executor_grad(t, name) })
}

// Aux is a new handle on the auxiliary state named name, e.g. BatchNorm's
// "bn_moving_mean" (training forwards update it; writing it sets it).
func (e *Executor) Aux(name string) (*NDArray, error) {
	if err := cstr("auxiliary state name", name); err != nil {
		return nil, err
	}
	return e.array(func(t cmxc.ExecutorHandle) cmxc.NDArrayHandle { return cmxc.Executor_aux(t, name) })
}
