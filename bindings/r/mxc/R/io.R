# Data iterators. An iterator must not be used from two threads at once
# (mxc's one exception to "any function from any thread"); R has one.

mx_data_iter_idx <- function(images, labels, batch_size = 128,
                             shuffle = FALSE, seed = 0) {
  .Call(C_R_swig_data_iter_idx, path.expand(images), path.expand(labels),
        as.double(batch_size), as.integer(shuffle), as.double(seed), FALSE)
}

mx_iter_next <- function(iter) {
  .Call(C_R_swig_data_iter_next, iter, FALSE) == 1L
}

mx_iter_data <- function(iter) .Call(C_R_swig_data_iter_data, iter, FALSE)

mx_iter_label <- function(iter) .Call(C_R_swig_data_iter_label, iter, FALSE)

mx_iter_reset <- function(iter) {
  .Call(C_R_swig_data_iter_reset, iter)
  invisible(iter)
}

print.mx_data_iter <- function(x, ...) {
  cat(if (mx_is_freed(x)) "<mx_data_iter (freed)>\n" else "<mx_data_iter>\n")
  invisible(x)
}
