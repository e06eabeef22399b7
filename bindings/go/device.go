package mxc

import (
	"fmt"
	"runtime"

	"mxc.dev/mxc/internal/cmxc"
)

// DeviceKind is mxc's device type (MXC_DEVICE_*).
type DeviceKind int

// Device kinds.
const (
	KindCPU DeviceKind = DeviceKind(cmxc.MXC_DEVICE_CPU)
	KindGPU DeviceKind = DeviceKind(cmxc.MXC_DEVICE_GPU)
)

// Device names where an array's memory is: the CPU or GPU number ID. A
// plain comparable value, safe to share between goroutines. Making one
// checks nothing: creating an array or binding an executor on a GPU that
// cannot be used (no CUDA plug-in, no driver, ID out of range, ...)
// returns an *Error with code ErrUnsupported and mxc's reason; Check
// reports the same up front.
type Device struct {
	Kind DeviceKind
	ID   int
}

// CPU is the host.
func CPU() Device { return Device{KindCPU, 0} }

// GPU is GPU number id.
func GPU(id int) Device { return Device{KindGPU, id} }

// String is "cpu(0)" or "gpu(N)".
func (d Device) String() string {
	if d.Kind == KindGPU {
		return fmt.Sprintf("gpu(%d)", d.ID)
	}
	return fmt.Sprintf("cpu(%d)", d.ID)
}

// GPUCount is how many GPUs this process can use: 0 without the CUDA
// plug-in, a driver or a GPU (not an error; GPU(0).Check() says why). The
// first call loads the plug-in. Safe from any goroutine.
func GPUCount() (int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n := cmxc.Device_count(int(KindGPU))
	if n < 0 {
		return 0, lastError()
	}
	return n, nil
}

// Check is nil when mxc can use d, else the *Error saying why.
func (d Device) Check() error {
	return call(func() { cmxc.Device_check(int(d.Kind), d.ID) })
}

// EmptyOn is a new array on device d whose contents are unspecified until
// written.
func EmptyOn(d Device, dtype DType, shape ...int64) (*NDArray, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return wrapNew(cmxc.Ndarray_create_on(shape, int(dtype), int(d.Kind), d.ID))
}

// ZerosOn is a new array of zeros on device d. On a GPU the zeros are
// copied from host memory (mxc runs no host fill over device memory).
func ZerosOn(d Device, dtype DType, shape ...int64) (*NDArray, error) {
	if d.Kind == KindCPU {
		return Zeros(dtype, shape...)
	}
	host, err := Zeros(dtype, shape...)
	if err != nil {
		return nil, err
	}
	defer host.Close()
	return host.CopyToDevice(d)
}

// FromSliceOn is a new array on device d holding a copy of data (see
// FromSlice).
func FromSliceOn[T Element](d Device, data []T, shape ...int64) (*NDArray, error) {
	a, err := EmptyOn(d, DTypeOf[T](), shape...)
	if err != nil {
		return nil, err
	}
	if err := CopyFrom(a, data); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// Device is the device a's memory is on.
func (a *NDArray) Device() (Device, error) {
	t, err := a.typed()
	if err != nil {
		return Device{}, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(a)
	kind, id := cmxc.Ndarray_device_type(t), cmxc.Ndarray_device_id(t)
	if kind < 0 || id < 0 {
		return Device{}, lastError()
	}
	return Device{DeviceKind(kind), id}, nil
}

// CopyToDevice is a new array on device d (the caller closes it) holding
// a copy of a. The copy is asynchronous; reads of the result wait for it.
func (a *NDArray) CopyToDevice(d Device) (*NDArray, error) {
	dtype, err := a.DType()
	if err != nil {
		return nil, err
	}
	shape, err := a.Shape()
	if err != nil {
		return nil, err
	}
	dst, err := EmptyOn(d, dtype, shape...)
	if err != nil {
		return nil, err
	}
	if err := a.CopyTo(dst); err != nil {
		dst.Close()
		return nil, err
	}
	return dst, nil
}
