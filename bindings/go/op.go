package mxc

import (
	"runtime"
	"sync"

	"mxc.dev/mxc/internal/cmxc"
)

// Op is an operator of the library's registry (static: never freed).
// Thread-safety: an Op may be used from any number of goroutines.
type Op struct {
	h    uintptr
	name string
}

// ops caches FindOp results: a lookup by name costs a string copy into C.
var ops sync.Map // string -> *Op

// FindOp looks an operator up by name or alias ("elemwise_add",
// "FullyConnected", ...); ErrNotFound names an unknown one. The result is
// cached and shared.
func FindOp(name string) (*Op, error) {
	if o, ok := ops.Load(name); ok {
		return o.(*Op), nil
	}
	if err := cstr("operator name", name); err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := cmxc.Op_find(name)
	if h == nil || h.Swigcptr() == 0 {
		return nil, lastError()
	}
	o, _ := ops.LoadOrStore(name, &Op{h: h.Swigcptr(), name: name})
	return o.(*Op), nil
}

// Ops lists the names of all registered operators.
func Ops() ([]string, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := cmxc.Op_count()
	if n < 0 {
		return nil, lastError()
	}
	names := make([]string, 0, n)
	for i := 0; i < n; i++ {
		h := cmxc.Op_at(i)
		if h == nil || h.Swigcptr() == 0 {
			return nil, lastError()
		}
		names = append(names, cmxc.Op_name(h))
	}
	return names, nil
}

// Name is the name the operator was found by.
func (o *Op) Name() string { return o.name }

// Call applies a single-output operator without parameters to inputs and
// returns a new array owned by the caller. The path for tiny operators:
// one C call, with one or two inputs no allocation besides the result.
func (o *Op) Call(inputs ...*NDArray) (*NDArray, error) {
	var out uint64
	switch len(inputs) {
	case 1:
		a, err := inputs[0].handle()
		if err != nil {
			return nil, err
		}
		runtime.LockOSThread()
		out = cmxc.Go_invoke1(uint64(o.h), uint64(a))
	case 2:
		a, err := inputs[0].handle()
		if err != nil {
			return nil, err
		}
		b, err := inputs[1].handle()
		if err != nil {
			return nil, err
		}
		runtime.LockOSThread()
		out = cmxc.Go_invoke2(uint64(o.h), uint64(a), uint64(b))
	default:
		return o.CallWith(nil, inputs...)
	}
	// The finalizers of the inputs must not run before the call is done.
	runtime.KeepAlive(inputs)
	if out == 0 {
		err := lastError()
		runtime.UnlockOSThread()
		return nil, err
	}
	runtime.UnlockOSThread()
	return newNDArray(uintptr(out)), nil
}

// handles collects the handles of arrays (for a C call).
func handles(arrays []*NDArray) ([]uintptr, error) {
	hs := make([]uintptr, len(arrays))
	for i, a := range arrays {
		h, err := a.handle()
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	return hs, nil
}

// CallWith applies a single-output operator with parameters (strings, as
// in mxc: "num_hidden": "128", "kernel": "(5,5)") and returns a new array.
func (o *Op) CallWith(params map[string]string, inputs ...*NDArray) (*NDArray, error) {
	hs, err := handles(inputs)
	if err != nil {
		return nil, err
	}
	kv, err := packParams(params)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(inputs)
	return wrapNew(cmxc.Op_invoke(cmxc.SwigcptrOpHandle(o.h), kv, hs, nil))
}

// CallInto applies a single-output operator and writes the result into
// out (which must have the result's shape and dtype), e.g. an in-place
// optimizer update: sgd.CallInto(w, params, w, g).
func (o *Op) CallInto(out *NDArray, params map[string]string, inputs ...*NDArray) error {
	t, err := out.typed()
	if err != nil {
		return err
	}
	hs, err := handles(inputs)
	if err != nil {
		return err
	}
	kv, err := packParams(params)
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Op_invoke(cmxc.SwigcptrOpHandle(o.h), kv, hs, t) })
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(out)
	return err
}

// Invoke applies the operator and returns all its visible outputs, new
// arrays owned by the caller.
func (o *Op) Invoke(params map[string]string, inputs ...*NDArray) ([]*NDArray, error) {
	hs, err := handles(inputs)
	if err != nil {
		return nil, err
	}
	kv, err := packParams(params)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(inputs)
	list := cmxc.Op_invoke_multi(cmxc.SwigcptrOpHandle(o.h), kv, hs)
	if list == nil || list.Swigcptr() == 0 {
		return nil, lastError()
	}
	defer cmxc.Outputs_free(list)
	outs := make([]*NDArray, cmxc.Outputs_size(list))
	for i := range outs {
		// Cannot fail: i is in range and each output is taken once.
		outs[i] = newNDArray(cmxc.Outputs_take(list, i).Swigcptr())
	}
	return outs, nil
}

// Invoke applies the operator named op to inputs with params (nil for
// none) and returns all its outputs, new arrays owned by the caller.
func Invoke(op string, inputs []*NDArray, params map[string]string) ([]*NDArray, error) {
	o, err := FindOp(op)
	if err != nil {
		return nil, err
	}
	return o.Invoke(params, inputs...)
}
