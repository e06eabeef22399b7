# The named layer shorthands mx_layernorm, mx_embedding, mx_lstm and mx_gru:
# each run forward and checked against R: the layer norm's formula, the
# embedding table's rows, and for the recurrent layers a case computed by
# hand (one feature, one unit, every weight 1 and every bias 0, so each
# gate's pre-activation is x_t + h_{t-1}).

test_that("mx_layernorm and mx_embedding match R", {
  ln <- mx_layernorm(name = "ln")
  mx_block_init(ln, "ones")
  x <- matrix(c(1, 2, 3, 6, -1, 0, 0, 5), 2, 4, byrow = TRUE)
  got <- as.array(mx_block_forward(ln, mx_array(x)))
  want <- t(apply(x, 1, function(r) (r - mean(r)) /
                    sqrt(mean((r - mean(r))^2) + 1e-5)))
  expect_equal(got, want, tolerance = 1e-5)

  emb <- mx_embedding(5, 3, name = "emb")
  mx_block_init(emb, "uniform", list(scale = 1))
  idx <- matrix(c(4, 0, 2, 2), 2, 2)
  got <- as.array(mx_block_forward(emb, mx_array(idx)))
  expect_equal(dim(got), c(2, 2, 3))
  table <- as.array(mx_params(emb)$emb_weight)
  for (i in 1:2) for (j in 1:2)
    expect_equal(got[i, j, ], table[idx[i, j] + 1, ], tolerance = 1e-6)
  expect_error(mx_embedding(0, 3), "input_dim")
})

sigm <- function(v) 1 / (1 + exp(-v))

by_hand <- function(kind, xs) {
  h <- 0
  c <- 0
  out <- numeric(length(xs))
  for (t in seq_along(xs)) {
    p <- xs[t] + h
    if (kind == "lstm") {
      c <- sigm(p) * c + sigm(p) * tanh(p)
      h <- sigm(p) * tanh(c)
    } else {
      n <- tanh(xs[t] + sigm(p) * h)
      h <- (1 - sigm(p)) * n + sigm(p) * h
    }
    out[t] <- h
  }
  out
}

test_that("mx_lstm and mx_gru match steps computed by hand", {
  xs <- rbind(c(0.5, -1, 2), c(1, 0.2, -0.3))  # (N, T): two sequences
  for (kind in c("lstm", "gru")) {
    make <- if (kind == "lstm") mx_lstm else mx_gru
    net <- make(1, layout = "NTC", name = "r")
    mx_block_init(net, "ones")
    y <- as.array(mx_block_forward(net, mx_array(array(xs, c(2, 3, 1)))))
    expect_equal(dim(y), c(2, 3, 1))
    for (n in 1:2) expect_equal(y[n, , 1], by_hand(kind, xs[n, ]),
                                tolerance = 1e-5)
    expect_equal(names(mx_params(net)),
                 c("r_l0_i2h_weight", "r_l0_h2h_weight", "r_l0_i2h_bias",
                   "r_l0_h2h_bias"))
  }
  bi <- mx_gru(3, num_layers = 2, bidirectional = TRUE)
  mx_block_init(bi, "xavier")
  expect_equal(dim(mx_block_forward(bi, mx_zeros(c(5, 2, 4)))), c(5, 2, 6))
  expect_error(mx_lstm(0), "hidden_size")
  expect_error(mx_block_forward(bi, mx_zeros(c(2, 4))), "expected 3")
})
