#!/bin/bash
# Runs tests/io/test_im2rec.py on the built mxc-im2rec.
exec /usr/bin/python3 tests/io/test_im2rec.py "$1"
