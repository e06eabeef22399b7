// Package cmxc is the SWIG-generated low level of the Go binding: the
// functions of bindings/swig/mxcb.h, one cgo call each. The go tool
// generates it from cmxc.swig at build time. Use package mxc instead: it
// turns failures into errors and owns handles with finalizers.
package cmxc

// #cgo pkg-config: mxc
// #cgo CFLAGS: -I${SRCDIR}/../../../swig
import "C"
