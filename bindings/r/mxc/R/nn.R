# Layers, models and fit() in luz's idiom, over mxc's layer API (blocks,
# optimizers and mxc_fit_* of the C library; nothing of the training loop
# is re-implemented here):
#
#   net <- mx_sequential(mx_dense(128, activation = "relu"), mx_dense(10))
#   fitted <- net |>
#     mx_setup(loss = "softmax_cross_entropy_loss",
#              optimizer = mx_optim("sgd", lr = 0.1, momentum = 0.9)) |>
#     mx_fit(train, epochs = 3, valid = test,
#            callbacks = list(mx_cb_early_stopping(patience = 2)))
#
# Blocks, optimizers and fits are external pointers freed by R's collector
# (C finalizers), by mx_free() or by the with_scope() they were made in.

# ---- blocks ----

.check_block <- function(x, what) {
  if (!inherits(x, "mx_block")) stop(what, " must be an mx_block", call. = FALSE)
}

.check_whole <- function(x, what, lo = 1) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x < lo || x != round(x))
    stop(what, " must be a whole number >= ", lo, call. = FALSE)
}

.check_string <- function(x, what) {
  if (!is.character(x) || length(x) != 1L || is.na(x))
    stop(what, " must be one string", call. = FALSE)
}

# A block of `kind` with the non-NULL entries of params as its keys.
.block <- function(kind, name, params) {
  if (!is.null(name)) .check_string(name, "name")
  params <- params[!vapply(params, is.null, NA)]
  .Call(C_R_swig_r_block_create, kind, if (is.null(name)) "" else name,
        .kv(params), FALSE)
}

mx_layer <- function(kind, ..., name = NULL) {
  .check_string(kind, "kind")
  .block(kind, name, list(...))
}

mx_dense <- function(units, activation = NULL, use_bias = TRUE,
                     flatten = TRUE, name = NULL, ...) {
  .check_whole(units, "units")
  .block("dense", name, c(list(units = units, activation = activation,
                               use_bias = use_bias, flatten = flatten),
                          list(...)))
}

mx_conv2d <- function(channels, kernel_size, strides = 1, padding = 0,
                      activation = NULL, name = NULL, ...) {
  .check_whole(channels, "channels")
  .block("conv2d", name, c(list(channels = channels,
                                kernel_size = kernel_size, strides = strides,
                                padding = padding, activation = activation),
                           list(...)))
}

mx_maxpool2d <- function(pool_size = 2, strides = NULL, name = NULL, ...) {
  .block("maxpool2d", name, c(list(pool_size = pool_size, strides = strides),
                              list(...)))
}

mx_avgpool2d <- function(pool_size = 2, strides = NULL, name = NULL, ...) {
  .block("avgpool2d", name, c(list(pool_size = pool_size, strides = strides),
                              list(...)))
}

mx_activation <- function(activation, name = NULL) {
  .check_string(activation, "activation")
  .block("activation", name, list(activation = activation))
}

mx_flatten <- function(name = NULL) .block("flatten", name, list())

mx_dropout <- function(rate = 0.5, name = NULL) {
  .block("dropout", name, list(rate = rate))
}

mx_batchnorm <- function(name = NULL, ...) .block("batchnorm", name, list(...))

mx_layernorm <- function(axis = -1, epsilon = 1e-5, name = NULL, ...) {
  .block("layernorm", name, c(list(axis = axis, epsilon = epsilon), list(...)))
}

mx_embedding <- function(input_dim, output_dim, name = NULL, ...) {
  .check_whole(input_dim, "input_dim")
  .check_whole(output_dim, "output_dim")
  .block("embedding", name, c(list(input_dim = input_dim,
                                   output_dim = output_dim), list(...)))
}

# Gluon's rnn.LSTM / rnn.GRU: input (T, N, C), or (N, T, C) with layout
# "NTC"; zero begin states.
.rnn <- function(kind, hidden_size, num_layers, layout, bidirectional, name,
                 extra) {
  .check_whole(hidden_size, "hidden_size")
  .check_whole(num_layers, "num_layers")
  .check_string(layout, "layout")
  .block(kind, name, c(list(hidden_size = hidden_size,
                            num_layers = num_layers, layout = layout,
                            bidirectional = bidirectional), extra))
}

mx_lstm <- function(hidden_size, num_layers = 1, layout = "TNC",
                    bidirectional = FALSE, name = NULL, ...) {
  .rnn("lstm", hidden_size, num_layers, layout, bidirectional, name,
       list(...))
}

mx_gru <- function(hidden_size, num_layers = 1, layout = "TNC",
                   bidirectional = FALSE, name = NULL, ...) {
  .rnn("gru", hidden_size, num_layers, layout, bidirectional, name,
       list(...))
}

mx_sequential <- function(..., name = NULL) {
  net <- .block("sequential", name, list())
  mx_add(net, ...)
}

mx_add <- function(block, ...) {
  .check_block(block, "block")
  children <- list(...)
  for (i in seq_along(children)) {
    .check_block(children[[i]], sprintf("child %d", i))
    .Call(C_R_swig_r_block_add, block, children[[i]], FALSE)
  }
  invisible(block)
}

# A user-composed block (Gluon's HybridBlock in spirit): forward(self, x)
# (one argument per input) returns a new mx_ndarray computed from x with
# operators and the children (given in `...` or added later with mx_add;
# their parameters are the block's), reached through mx_children(self) or
# captured in forward's environment:
#
#   fc <- mx_dense(8)
#   res <- mx_user_block(function(self, x) mx_block_forward(fc, x) + x, fc)
#
# forward runs on R's thread inside mx_block_forward / mx_fit (and once
# per trace when hybridized: only operator calls on the inputs, their
# results and children's parameters become the graph). self and the
# inputs are lent for the call (freed objects afterwards); the result
# passes to mxc (its R object becomes a freed one). An error in forward
# (stop()) fails that forward pass or fit with an mxc_error carrying its
# message (code MXC_ERR_OPERATOR); the block works again afterwards.
# forward must not refer to the user block itself (it would then never be
# collected): use self.
mx_user_block <- function(forward, ..., name = NULL) {
  if (!is.function(forward)) stop("forward must be a function", call. = FALSE)
  if (!is.null(name)) .check_string(name, "name")
  b <- .Call(C_R_swig_r_block_create_user, if (is.null(name)) "" else name,
             .forward_dispatcher(forward), FALSE)
  mx_add(b, ...)
}

# The function C calls: forward's result, or its error's message (a
# string), never a condition that would unwind through mxc.
.forward_dispatcher <- function(forward) {
  force(forward)
  function(self, inputs) {
    tryCatch({
      y <- do.call(forward, c(list(self), inputs))
      if (!inherits(y, "mx_ndarray"))
        stop("forward must return an mx_ndarray, not ",
             paste(class(y), collapse = "/"), call. = FALSE)
      y
    }, error = function(e) conditionMessage(e))
  }
}

# New handles on the block's children, in mx_add order.
mx_children <- function(block) {
  .check_block(block, "block")
  .Call(C_R_swig_r_block_children, block, FALSE)
}

mx_block_forward <- function(block, ...) {
  .check_block(block, "block")
  inputs <- list(...)
  for (i in seq_along(inputs)) .check_array(inputs[[i]], sprintf("input %d", i))
  .Call(C_R_swig_r_block_forward, block, inputs, FALSE)
}

mx_block_init <- function(block, method = "xavier", params = list(),
                          force = FALSE) {
  .check_block(block, "block")
  .check_string(method, "method")
  .Call(C_R_swig_r_block_initialize, block, method, .kv(params),
        as.integer(isTRUE(force)), FALSE)
  invisible(block)
}

# A named list of new handles on the parameters (made by a forward pass).
mx_params <- function(x, grad = FALSE) {
  b <- .net_of(x)
  names <- .Call(C_R_swig_r_block_param_names, b, FALSE)
  out <- lapply(seq_along(names) - 1L, function(i)
    .Call(C_R_swig_r_block_param, b, i, as.integer(isTRUE(grad)), FALSE))
  stats::setNames(out, names)
}

mx_save_params <- function(x, path) {
  .check_string(path, "path")
  .Call(C_R_swig_r_block_params_file, .net_of(x), path.expand(path), 0L, FALSE)
  invisible(x)
}

mx_load_params <- function(x, path) {
  .check_string(path, "path")
  .Call(C_R_swig_r_block_params_file, .net_of(x), path.expand(path), 1L, FALSE)
  invisible(x)
}

mx_hybridize <- function(x, active = TRUE) {
  .Call(C_R_swig_r_block_hybridize, .net_of(x), as.integer(isTRUE(active)),
        FALSE)
  invisible(x)
}

mx_export <- function(x, prefix, epoch = 0) {
  .check_string(prefix, "prefix")
  .check_whole(epoch, "epoch", 0)
  .Call(C_R_swig_r_block_export, .net_of(x), path.expand(prefix), epoch, FALSE)
  invisible(x)
}

print.mx_block <- function(x, ...) {
  cat(if (mx_is_freed(x)) "<mx_block (freed)>\n" else "<mx_block>\n")
  invisible(x)
}

# ---- losses and optimizers ----

mx_loss <- function(kind = "softmax_cross_entropy_loss", ..., name = NULL) {
  .check_string(kind, "kind")
  .block(kind, name, list(...))
}

.optim_ops <- c(sgd = "sgd_update", nag = "nag_mom_update",
                adam = "adam_update", rmsprop = "rmsprop_update",
                adagrad = "adagrad_update", ftrl = "ftrl_update",
                signum = "signum_update")

# An optimizer to be made by mx_setup: a name of .optim_ops (sgd with a
# momentum becomes sgd_mom_update) or an update operator's own name, and
# that operator's parameters (lr, wd, momentum, beta1, ...).
mx_optim <- function(name = "sgd", ...) {
  .check_string(name, "optimizer name")
  params <- list(...)
  op <- if (grepl("_update$", name)) name else .optim_ops[name]
  if (is.na(op))
    stop("unknown optimizer '", name, "'; expected one of ",
         paste(names(.optim_ops), collapse = ", "),
         " or an update operator's name", call. = FALSE)
  if (op == "sgd_update" && !is.null(params$momentum)) op <- "sgd_mom_update"
  .kv(params)  # checks the parameters' form now
  structure(list(op = unname(op), params = params), class = "mx_optim")
}

# ---- models: mx_setup() |> mx_fit() ----

.net_of <- function(x) {
  if (inherits(x, "mx_model")) return(x$net)
  .check_block(x, "x")
  x
}

mx_setup <- function(net, loss = "softmax_cross_entropy_loss",
                     optimizer = mx_optim("sgd"),
                     metrics = c("loss", "accuracy"),
                     initializer = "xavier", init_params = list()) {
  .check_block(net, "net")
  if (is.character(loss)) loss <- mx_loss(loss)
  .check_block(loss, "loss")
  if (!inherits(optimizer, "mx_optim"))
    stop("optimizer must be made by mx_optim()", call. = FALSE)
  bad <- setdiff(metrics, c("loss", "accuracy"))
  if (!is.character(metrics) || length(bad))
    stop("metrics must be among \"loss\" and \"accuracy\" (what fit ",
         "computes); got ", paste(deparse(bad), collapse = ""), call. = FALSE)
  if (!is.null(initializer)) mx_block_init(net, initializer, init_params)
  opt <- .Call(C_R_swig_r_optimizer_create, net, optimizer$op,
               .kv(optimizer$params), FALSE)
  structure(list(net = net, loss = loss, optimizer = opt, metrics = metrics,
                 fit = NULL, history = NULL), class = "mx_model")
}

print.mx_model <- function(x, ...) {
  cat("<mx_model", if (!is.null(x$fit)) "(fitted)", ">\n")
  if (!is.null(x$history)) print(x$history)
  invisible(x)
}

predict.mx_model <- function(object, newdata, ...) {
  mx_block_forward(object$net, newdata)
}

# ---- callbacks ----

# A callback of R functions of ctx, called after each batch / epoch / at
# the end: ctx$epoch, ctx$batch, ctx$values (train_loss, train_accuracy,
# val_loss, val_accuracy, lr, samples_per_sec, num_update), ctx$stop()
# ends the run after this batch, ctx$model is the model.
mx_callback <- function(on_batch_end = NULL, on_epoch_end = NULL,
                        on_train_end = NULL) {
  fns <- list(on_batch_end = on_batch_end, on_epoch_end = on_epoch_end,
              on_train_end = on_train_end)
  for (n in names(fns)) {
    if (!is.null(fns[[n]]) && !is.function(fns[[n]]))
      stop(n, " must be a function or NULL", call. = FALSE)
  }
  structure(fns, class = "mx_callback")
}

# What the C fit offers, as callbacks: fit keys (see mxc_fit_create).
.fit_option <- function(...) {
  keys <- list(...)
  structure(list(keys = keys[!vapply(keys, is.null, NA)]),
            class = "mx_fit_option")
}

mx_cb_early_stopping <- function(patience = 3, min_delta = 0,
                                 monitor = "val_loss") {
  .check_whole(patience, "patience")
  .check_string(monitor, "monitor")
  .fit_option(early_stopping_patience = patience,
              early_stopping_min_delta = min_delta, monitor = monitor)
}

mx_cb_checkpoint <- function(prefix, period = 1) {
  .check_string(prefix, "prefix")
  .check_whole(period, "period")
  .fit_option(checkpoint_prefix = path.expand(prefix),
              checkpoint_period = period)
}

mx_cb_csv <- function(path) {
  .check_string(path, "path")
  .fit_option(csv = path.expand(path))
}

mx_cb_tensorboard <- function(dir) {
  .check_string(dir, "dir")
  .fit_option(tensorboard = path.expand(dir))
}

mx_cb_lr_schedule <- function(type = c("factor", "multifactor", "cosine"),
                              factor = NULL, step = NULL, steps = NULL,
                              max_update = NULL, final_lr = NULL) {
  type <- match.arg(type)
  .fit_option(lr_scheduler = type, factor = factor, step = step,
              steps = steps, max_update = max_update, final_lr = final_lr)
}

.fit_names <- c("epoch", "batch", "num_update", "lr", "train_loss",
                "train_accuracy", "val_loss", "val_accuracy",
                "samples_per_sec", "rank", "num_workers")

.fit_values <- function(fit) {
  .Call(C_R_swig_r_fit_values, fit, .fit_names, FALSE)
}

.fit_context <- function(fit, model) {
  v <- .fit_values(fit)
  list(epoch = v[["epoch"]], batch = v[["batch"]], values = v, model = model,
       stop = function() invisible(.Call(C_R_swig_r_fit_stop, fit, FALSE)))
}

# The listener of a fit: runs the callbacks of each event under tryCatch
# (R_ToplevelExec in C catches anything else), keeps the first failure in
# state$error and collects state$history at each epoch's end. It must not
# capture the fit's own R object (see mxcb_r_fit_create).
.fit_dispatcher <- function(callbacks, model, state) {
  # Forced now: an unforced promise would keep mx_fit's frame, and so
  # the fit, alive from the preserved listener.
  force(callbacks)
  force(model)
  force(state)
  events <- c("on_batch_end", "on_epoch_end", "on_train_end")
  function(event, fit) {
    ev <- events[[event]]
    if (ev == "on_epoch_end")
      state$history[[length(state$history) + 1L]] <- .fit_values(fit)
    fns <- Filter(Negate(is.null), lapply(callbacks, `[[`, ev))
    if (!length(fns)) return(TRUE)
    ctx <- .fit_context(fit, model)
    for (f in fns) {
      err <- tryCatch({ f(ctx); NULL }, error = function(e) e)
      if (!is.null(err)) {
        state$error <- err
        return(FALSE)
      }
    }
    TRUE
  }
}

.fit_keys <- function(callbacks, epochs, batches_per_epoch, progress, resume) {
  keys <- list(epochs = epochs, batches_per_epoch = batches_per_epoch,
               progress = if (isTRUE(progress)) "1" else "0", resume = resume)
  for (cb in callbacks) {
    if (inherits(cb, "mx_fit_option")) keys[names(cb$keys)] <- cb$keys
  }
  keys[!vapply(keys, is.null, NA)]
}

.check_callbacks <- function(callbacks) {
  if (!is.list(callbacks) || inherits(callbacks, "mx_callback"))
    stop("callbacks must be a list of callbacks", call. = FALSE)
  for (i in seq_along(callbacks)) {
    if (!inherits(callbacks[[i]], c("mx_callback", "mx_fit_option")))
      stop(sprintf("callbacks[[%d]] must be made by mx_callback() or an ", i),
           "mx_cb_*() function", call. = FALSE)
  }
}

# The store of mx_fit(kvstore = ): an mx_kvstore, or a new one of a type.
.fit_store <- function(kvstore) {
  if (is.null(kvstore) || inherits(kvstore, "mx_kvstore")) return(kvstore)
  if (is.character(kvstore) && length(kvstore) == 1L && !is.na(kvstore))
    return(mx_kvstore(kvstore))
  stop("kvstore must be NULL, an mx_kvstore or a store type (\"local\", ",
       "\"dist_sync\")", call. = FALSE)
}

mx_fit <- function(model, train, epochs = 1, valid = NULL,
                   callbacks = list(), batches_per_epoch = 0,
                   progress = interactive(), resume = NULL,
                   kvstore = NULL) {
  if (!inherits(model, "mx_model"))
    stop("model must be made by mx_setup()", call. = FALSE)
  if (!inherits(train, "mx_data_iter"))
    stop("train must be an mx_data_iter", call. = FALSE)
  if (!is.null(valid) && !inherits(valid, "mx_data_iter"))
    stop("valid must be NULL or an mx_data_iter", call. = FALSE)
  .check_whole(epochs, "epochs")
  .check_whole(batches_per_epoch, "batches_per_epoch", 0)
  if (!is.null(resume)) {
    .check_string(resume, "resume")
    resume <- path.expand(resume)
  }
  .check_callbacks(callbacks)
  kvstore <- .fit_store(kvstore)
  state <- new.env(parent = emptyenv())
  state$history <- list()
  cbs <- Filter(function(cb) inherits(cb, "mx_callback"), callbacks)
  keys <- .fit_keys(callbacks, epochs, batches_per_epoch, progress, resume)
  fit <- .Call(C_R_swig_r_fit_create, model$net, model$loss, model$optimizer,
               .kv(keys), .fit_dispatcher(cbs, model, state), FALSE)
  # The fit holds its own reference to the store (mxc_fit_set_kvstore).
  if (!is.null(kvstore)) .Call(C_R_swig_r_fit_set_kvstore, fit, kvstore, FALSE)
  if (isTRUE(.Call(C_R_swig_r_fit_run, fit, train, valid, FALSE))) {
    if (!is.null(state$error)) stop(state$error)
    stop("fit: a callback was interrupted", call. = FALSE)
  }
  model$fit <- fit
  model$history <- as.data.frame(do.call(rbind, state$history))
  model
}

# Values of the last run of a fitted model (see .fit_names).
mx_fit_values <- function(model) {
  if (!inherits(model, "mx_model") || is.null(model$fit))
    stop("model must be returned by mx_fit()", call. = FALSE)
  .fit_values(model$fit)
}

# Training checkpoints: parameters, optimizer state, progress and random
# stream, for an exact resume (mx_fit(resume = path)).
mx_fit_save <- function(model, path) {
  .check_string(path, "path")
  if (!inherits(model, "mx_model") || is.null(model$fit))
    stop("model must be returned by mx_fit()", call. = FALSE)
  .Call(C_R_swig_r_fit_checkpoint, model$fit, path.expand(path), 0L, FALSE)
  invisible(model)
}

print.mx_fit <- function(x, ...) {
  cat(if (mx_is_freed(x)) "<mx_fit (freed)>\n" else "<mx_fit>\n")
  invisible(x)
}

# Frees a model's handles now (mx_free on an mx_model).
.model_free <- function(m) {
  for (h in list(m$fit, m$optimizer, m$loss, m$net)) {
    if (!is.null(h)) .Call(C_R_swig_r_nn_free, h, FALSE)
  }
}
