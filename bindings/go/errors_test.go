package mxc

import (
	"errors"
	"strings"
	"testing"
)

// wantErr checks that err is an *Error with code and a message holding
// every fragment.
func wantErr(t *testing.T, what string, err error, code int, fragments ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v (%T), want *mxc.Error", what, err, err)
	}
	if e.Code != code {
		t.Fatalf("%s: code %d (%s), want %d: %v", what, e.Code, e.Name, code, e)
	}
	if !strings.HasPrefix(e.Name, "MXC_ERR_") || !strings.HasPrefix(e.Error(), e.Name+": ") {
		t.Fatalf("%s: badly formed error %q / %q", what, e.Name, e.Error())
	}
	for _, f := range fragments {
		if !strings.Contains(e.Message, f) {
			t.Fatalf("%s: message %q lacks %q", what, e.Message, f)
		}
	}
}

func TestErrorsCarryTheLibraryMessage(t *testing.T) {
	_, err := FindOp("no_such_op")
	wantErr(t, "unknown operator", err, ErrNotFound, "no_such_op")
	_, err = Invoke("no_such_op", nil, nil)
	wantErr(t, "Invoke unknown operator", err, ErrNotFound, "no_such_op")

	a := mustF32(t, []float32{1, 2, 3, 4}, 4)
	b := mustF32(t, []float32{1, 2, 3, 4, 5}, 5)
	defer a.Close()
	defer b.Close()
	add, _ := FindOp("elemwise_add")
	_, err = add.Call(a, b)
	wantErr(t, "shape mismatch", err, ErrShape)
	_, err = add.Call(a)
	if err == nil {
		t.Fatal("elemwise_add with one input succeeded")
	}
	mul, _ := FindOp("_mul_scalar")
	_, err = mul.CallWith(map[string]string{"scalar": "abc"}, a)
	wantErr(t, "bad parameter value", err, ErrInvalidArgument, "scalar")
	_, err = mul.CallWith(map[string]string{"scalar": "1", "bogus": "1"}, a)
	wantErr(t, "unknown parameter", err, ErrInvalidArgument, "bogus")
	_, err = mul.CallWith(map[string]string{"scalar": "1\x00"}, a)
	wantErr(t, "NUL in a parameter", err, ErrInvalidArgument, "NUL")

	// Wrong slice lengths: the C library checks the byte counts.
	_, err = FromFloat32([]float32{1, 2, 3}, 4)
	wantErr(t, "short data", err, ErrShape, "12", "16")
	err = CopyTo(a, make([]float32, 5))
	wantErr(t, "long destination", err, ErrShape, "20")
	err = CopyTo(a, make([]float64, 4))
	wantErr(t, "wrong dtype", err, ErrDType)
	_, err = a.Reshape(3)
	wantErr(t, "bad reshape", err, ErrShape)
	_, err = a.Slice(2, 9)
	if err == nil {
		t.Fatal("Slice past the end succeeded")
	}
	_, err = Empty(DType(99), 2)
	wantErr(t, "unknown dtype", err, ErrDType)
	_, err = Empty(Float32, -1)
	if err == nil {
		t.Fatal("negative extent accepted")
	}

	// Grad of an array that is not a variable.
	_, err = a.Grad()
	wantErr(t, "Grad of unmarked", err, ErrNotFound)
	err = Backward(a)
	wantErr(t, "Backward without recording", err, ErrInvalidArgument)
}

func TestClosedAndNilHandles(t *testing.T) {
	a := mustF32(t, []float32{1, 2}, 2)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	_, err := a.Float32s()
	wantErr(t, "read after Close", err, ErrInvalidHandle, "Close")
	add, _ := FindOp("elemwise_add")
	_, err = add.Call(a, a)
	wantErr(t, "Call on closed", err, ErrInvalidHandle)
	_, err = add.CallWith(nil, a, a, a)
	wantErr(t, "CallWith on closed", err, ErrInvalidHandle)
	_, err = a.Shape()
	wantErr(t, "Shape after Close", err, ErrInvalidHandle)
	var nilArr *NDArray
	_, err = add.Call(nilArr, nilArr)
	wantErr(t, "nil array", err, ErrInvalidHandle, "nil")
	if err := nilArr.Close(); err != nil {
		t.Fatal(err)
	}

	var s *Symbol
	_, err = s.JSON()
	wantErr(t, "nil symbol", err, ErrInvalidHandle)
	v, err := Variable("x")
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	v.Close()
	_, err = v.Arguments()
	wantErr(t, "symbol after Close", err, ErrInvalidHandle)
	var e *Executor
	wantErr(t, "nil executor", e.Forward(false), ErrInvalidHandle)
	var it *DataIter
	_, err = it.Next()
	wantErr(t, "nil iterator", err, ErrInvalidHandle)
}

func TestSymbolAndIteratorErrors(t *testing.T) {
	_, err := SymbolFromJSON("{not json")
	var e *Error
	if !errors.As(err, &e) || e.Message == "" {
		t.Fatalf("bad JSON: %v, want an *mxc.Error with a message", err)
	}
	_, err = NewSymbol("no_such_op", nil, "")
	wantErr(t, "unknown operator node", err, ErrNotFound, "no_such_op")
	x, _ := Variable("x")
	fc, err := NewSymbol("FullyConnected", map[string]string{"num_hidden": "two"}, "fc", x)
	if err == nil {
		fc.Close()
		t.Fatal("bad num_hidden accepted")
	}
	fc, err = NewSymbol("FullyConnected", map[string]string{"num_hidden": "2"}, "fc", x)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fc.SimpleBind(map[string][]int64{"nope": {2, 3}}, GradWrite)
	if err == nil {
		t.Fatal("bind with an unknown argument and no shape for x succeeded")
	}
	exe, err := fc.SimpleBind(map[string][]int64{"x": {2, 3}}, GradWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer exe.Close()
	_, err = exe.Arg("nope")
	wantErr(t, "unknown argument", err, ErrNotFound, "nope")
	_, err = exe.Output(5)
	if err == nil {
		t.Fatal("output 5 of 1")
	}
	wantErr(t, "Backward before training forward", exe.Backward(), ErrInvalidArgument)

	_, err = NewIDXIter("/nonexistent/images", "/nonexistent/labels", 8, false, 0)
	wantErr(t, "missing IDX file", err, ErrIO, "/nonexistent/images")
}
