package mxc

import (
	"runtime"
	"runtime/cgo"
	"sync/atomic"

	"mxc.dev/mxc/internal/cmxc"
)

// ForwardFunc is a user block's forward pass (see NewUserBlock): it
// computes a new array from inputs with operators and the block's
// children, reached through self (self.Child) or captured Go values.
//
// self and inputs are lent for the call: using them after it returns is
// ErrInvalidHandle, and their Close does nothing. The returned array
// passes to mxc: it is closed on return (return a new array, never an
// input; copy an input with an operator to pass it through). A non-nil
// error, or a panic (recovered: it never unwinds through C), fails the
// forward pass: the Forward or Fit.Run that ran it returns an *Error with
// the error's message (errors.Is/As reach the error itself; a panic is
// ErrInternal), and the block works again at the next call.
type ForwardFunc func(self *Block, inputs []*NDArray) (*NDArray, error)

// userBlock is what C's user data reaches through a cgo.Handle. It does
// not refer to the Block, so an unclosed Block stays collectable (unless
// fn captures it: use self instead).
type userBlock struct {
	fn       ForwardFunc
	released atomic.Bool // C freed the block (for tests)
}

// NewUserBlock makes a block whose forward pass is forward (Gluon's
// HybridBlock in spirit; mxc_block_create_user). Add children with Add:
// their parameters are the block's (ParamNames, optimizers, SaveParams,
// Fit), and forward reaches them with self.Child(i) or through Go values
// it captured:
//
//	fc := mxc.NewDense(8)
//	res, _ := mxc.NewUserBlock(func(self *mxc.Block, in []*mxc.NDArray) (*mxc.NDArray, error) {
//		y, err := fc.Forward(in[0])
//		if err != nil {
//			return nil, err
//		}
//		defer y.Close()
//		return add.Call(y, in[0]) // y + x
//	}, mxc.Named("res"))
//	res.Add(fc)
//
// forward runs on the goroutine that called Forward or Fit.Run (its OS
// thread), once per call; a hybridized user block (Hybridize) runs it once
// more per trace, recorded, to build its graph: only operator calls on
// the inputs, on results of such calls and on children's parameters
// become the graph. Only LayerOption Named applies. Thread-safety: as
// every Block; forward must not call methods of the Block value that
// runs it (its lock is held: use self), and captured children must not
// be used by other goroutines meanwhile.
func NewUserBlock(forward ForwardFunc, opts ...LayerOption) (*Block, error) {
	if forward == nil {
		return nil, newError(ErrInvalidArgument, "NewUserBlock: forward is nil")
	}
	c := layerConfig{kv: map[string]string{}}
	for _, o := range opts {
		o(&c)
	}
	if len(c.kv) > 0 {
		return nil, newError(ErrInvalidArgument,
			"NewUserBlock: configuration keys %v given; a user block takes only Named", c.kv)
	}
	if err := cstr("block name", c.name); err != nil {
		return nil, err
	}
	// Released by C (the block's free function), also when this fails.
	u := &userBlock{fn: forward}
	h := cgo.NewHandle(u)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b := uintptr(cmxc.Go_block_create_user(c.name, uint64(h)))
	if err := sentinel(b); err != nil {
		return nil, err
	}
	blk := newBlock(b)
	blk.user = u
	return blk, nil
}

// NumChildren is the number of children added with Add.
func (b *Block) NumChildren() (int, error) {
	n := -1
	err := b.check(func(h cmxc.BlockHandle) { n = cmxc.Block_num_children(h) })
	return n, err
}

// Child is a new reference to child i (0-based, in Add order); Close it
// when done (the container keeps its own).
func (b *Block) Child(i int) (*Block, error) {
	var c uintptr
	err := b.with(func(h cmxc.BlockHandle) error {
		p := cmxc.Block_child(h, i)
		if p != nil {
			c = p.Swigcptr()
		}
		return sentinel(c)
	})
	if err != nil {
		return nil, err
	}
	return newBlock(c), nil
}

// lend wraps a handle C lends for a callback: an NDArray whose Close does
// nothing, emptied by its end function.
func lend(h uintptr) (*NDArray, func()) {
	c := &cell{h: h, lent: true}
	a := new(NDArray)
	a.c.Store(c)
	return a, func() {
		atomic.StoreUintptr(&c.h, 0)
		a.c.Store(nil)
	}
}

// give takes a's handle away from Go for C, which now owns it: a is
// closed, and no finalizer will free the handle.
func (a *NDArray) give() (uintptr, error) {
	if a == nil {
		return 0, newError(ErrInvalidArgument, "the forward function returned a nil NDArray")
	}
	c := a.c.Load()
	if c != nil && c.lent {
		return 0, newError(ErrInvalidArgument,
			"the forward function returned an array lent to it (an input); return a new array")
	}
	if c = a.c.Swap(nil); c == nil {
		return 0, newError(ErrInvalidHandle, "the forward function returned a closed NDArray")
	}
	h := atomic.SwapUintptr(&c.h, 0)
	live.Add(-1)
	cells.Put(c)
	if h == 0 {
		return 0, newError(ErrInvalidHandle, "the forward function returned a closed NDArray")
	}
	return h, nil
}

// forward runs the Go function for C: see cmxc.SetBlockForward.
func (u *userBlock) forward(self uintptr, in []uintptr) (code int, out uintptr) {
	view := &Block{o: guarded{h: self, kind: "Block (lent to its forward function)"}}
	inputs := make([]*NDArray, len(in))
	ends := make([]func(), len(in))
	for i, h := range in {
		inputs[i], ends[i] = lend(h)
	}
	defer func() {
		if r := recover(); r != nil {
			code, out = keepCallbackError(u.what(view), nil, r), 0
		}
		view.o.close() // no free function: the handle is C's
		for _, end := range ends {
			end()
		}
	}()
	y, err := u.fn(view, inputs)
	if err == nil {
		out, err = y.give()
	}
	if err != nil {
		return keepCallbackError(u.what(view), err, nil), 0
	}
	return 0, out
}

// what names the block in a failure's message.
func (u *userBlock) what(self *Block) string {
	if name, err := self.Name(); err == nil {
		return "forward of user block '" + name + "'"
	}
	return "forward of a user block"
}

func init() {
	cmxc.SetBlockForward(func(h, self uintptr, in []uintptr) (int, uintptr) {
		return cgo.Handle(h).Value().(*userBlock).forward(self, in)
	})
	cmxc.SetBlockFree(func(h uintptr) {
		cgo.Handle(h).Value().(*userBlock).released.Store(true)
		cgo.Handle(h).Delete()
	})
}
