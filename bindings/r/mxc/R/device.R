# Devices: mx_cpu(), mx_gpu(id), arrays created on and copied to a device.
#
# An mx_device is a plain value (a list of type and id with a class):
# making one checks nothing. Creating an array or binding an executor on a
# GPU that cannot be used (no CUDA plug-in, no driver, id out of range)
# signals an mxc_error (MXC_ERR_UNSUPPORTED) with mxc's reason.

.device_types <- c(cpu = 1L, gpu = 2L)

.device <- function(type, id) {
  id <- as.integer(id)
  if (length(id) != 1L || is.na(id) || id < 0L)
    stop("device id must be one integer >= 0", call. = FALSE)
  structure(list(type = type, id = id), class = "mx_device")
}

mx_cpu <- function(id = 0L) .device(.device_types[["cpu"]], id)

mx_gpu <- function(id = 0L) .device(.device_types[["gpu"]], id)

# NULL means the CPU; anything else must be an mx_device.
.as_device <- function(device) {
  if (is.null(device)) return(mx_cpu())
  if (!inherits(device, "mx_device"))
    stop("device must be mx_cpu() or mx_gpu(id)", call. = FALSE)
  device
}

.is_gpu <- function(device) device$type == .device_types[["gpu"]]

format.mx_device <- function(x, ...) {
  paste0(names(.device_types)[match(x$type, .device_types)], "(", x$id, ")")
}

print.mx_device <- function(x, ...) {
  cat("<mx_device ", format(x), ">\n", sep = "")
  invisible(x)
}

mx_num_gpus <- function() .Call(C_R_swig_device_count, .device_types[["gpu"]], FALSE)

mx_device_check <- function(device) {
  device <- .as_device(device)
  .Call(C_R_swig_device_check, device$type, device$id)
  invisible(device)
}

mx_device <- function(x) {
  .check_array(x)
  .device(.Call(C_R_swig_ndarray_device_type, x, FALSE),
          .Call(C_R_swig_ndarray_device_id, x, FALSE))
}

# A new array on device, contents unspecified.
.empty_on <- function(shape, code, device) {
  .Call(C_R_swig_ndarray_create_on, shape, code, device$type, device$id,
        FALSE)
}

mx_copyto <- function(x, device) {
  .check_array(x)
  device <- .as_device(device)
  dst <- .empty_on(.shape(x), .Call(C_R_swig_ndarray_dtype, x, FALSE), device)
  .Call(C_R_swig_ndarray_copy, x, dst)
  dst
}
