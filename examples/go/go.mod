module mxc.dev/examples

go 1.19

require mxc.dev/mxc v0.0.0

replace mxc.dev/mxc => ../../bindings/go
