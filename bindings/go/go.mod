module mxc.dev/mxc

go 1.19
