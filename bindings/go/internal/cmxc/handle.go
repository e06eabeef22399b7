package cmxc

import "runtime/cgo"

// deleteHandle releases a cgo.Handle C held as a listener's user data.
func deleteHandle(h uintptr) { cgo.Handle(h).Delete() }
