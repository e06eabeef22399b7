#!/bin/bash
# Reports that the MPI plug-in is not built here. $1: tools/test_skip.sh,
# $2: the reason.
source "$1"
mxc_test_skip "$2"
