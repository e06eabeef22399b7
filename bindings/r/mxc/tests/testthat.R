library(testthat)
library(mxc)
test_check("mxc")
