package mxc

import (
	"runtime"

	"mxc.dev/mxc/internal/cmxc"
)

// GradReq says how a gradient buffer receives its gradient (MXC_REQ_*).
type GradReq int

const (
	GradNull  GradReq = 0 // no gradient
	GradWrite GradReq = 1 // overwrite the buffer
	GradAdd   GradReq = 3 // add to the buffer (accumulation)
)

// Record runs fn with autograd recording and training mode on, then
// restores both. Operators called by fn on the calling goroutine are
// recorded when their inputs depend on marked variables. The modes are
// per OS thread in C, so Record pins the goroutine to its thread for the
// duration; work fn hands to other goroutines is not recorded. Returns
// fn's error, or the failure to switch the modes.
func Record(fn func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prevRec := cmxc.Set_recording(1)
	if prevRec < 0 {
		return lastError()
	}
	defer cmxc.Set_recording(prevRec)
	prevTrain := cmxc.Set_training(1)
	if prevTrain < 0 {
		return lastError()
	}
	defer cmxc.Set_training(prevTrain)
	return fn()
}

// AttachGrad gives a a zero-filled gradient buffer of its shape and dtype
// with request req, marking it as a variable to differentiate. Read the
// gradient with Grad after Backward. The library keeps its own reference
// to the buffer.
func (a *NDArray) AttachGrad(req GradReq) error {
	zerosLike, err := FindOp("zeros_like") // the library's own, one call
	if err != nil {
		return err
	}
	g, err := zerosLike.Call(a)
	if err != nil {
		return err
	}
	defer g.Close()
	return MarkVariable(a, g, req)
}

// MarkVariable marks v as a variable whose gradient goes into grad (same
// shape and dtype) according to req. Marking again replaces the buffer.
func MarkVariable(v, grad *NDArray, req GradReq) error {
	vt, err := v.typed()
	if err != nil {
		return err
	}
	gt, err := grad.typed()
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Autograd_mark(vt, gt, int(req)) })
	runtime.KeepAlive(v)
	runtime.KeepAlive(grad)
	return err
}

// Backward computes the gradients of heads (with ones as head gradients)
// into the buffers of the marked variables they depend on, and frees the
// recorded history. Asynchronous: reading a gradient waits for it.
func Backward(heads ...*NDArray) error { return backward(heads, 0) }

// BackwardRetain is Backward keeping the recorded history (for a second
// backward pass).
func BackwardRetain(heads ...*NDArray) error { return backward(heads, 1) }

func backward(heads []*NDArray, retain int) error {
	hs, err := handles(heads)
	if err != nil {
		return err
	}
	err = call(func() { cmxc.Autograd_backward(hs, retain) })
	runtime.KeepAlive(heads)
	return err
}

// Grad is a new handle on the gradient buffer of a marked variable
// (ErrNotFound when a is not marked); Close it when done.
func (a *NDArray) Grad() (*NDArray, error) {
	t, err := a.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(a)
	return wrapNew(cmxc.Autograd_grad(t))
}

// Detach is a new handle sharing a's values, cut from the recorded
// history.
func (a *NDArray) Detach() (*NDArray, error) {
	t, err := a.typed()
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(a)
	return wrapNew(cmxc.Ndarray_detach(t))
}
