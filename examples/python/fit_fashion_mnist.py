#!/usr/bin/env python3
"""The main job's MLP and LeNet with mxc.nn and fit(), as
examples/fit_fashion_mnist.c: same layers, initializer, optimizer and
learning-rate steps; goals MLP >= 87.5% after 10 epochs, LeNet >= 88%
after 2.

    PYTHONPATH=bindings/python python3 examples/python/fit_fashion_mnist.py \\
        [mlp|lenet] [epochs] [batches_per_epoch] [data_dir]

batches_per_epoch (0: all) shortens a run, as the Java and Go examples'
BATCHES argument (the tests run 100).
"""
import os
import sys

import mxc
from mxc import nn

model = sys.argv[1] if len(sys.argv) > 1 else "mlp"
mlp = model == "mlp"
goal_epochs = 10 if mlp else 2
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else goal_epochs
batches = int(sys.argv[3]) if len(sys.argv) > 3 else 0
data = sys.argv[4] if len(sys.argv) > 4 else "/usr/share/datasets/fashion-mnist"


def files(part):
    return [os.path.join(data, "%s-%s-ubyte.gz" % (part, kind))
            for kind in ("images-idx3", "labels-idx1")]


mxc.seed(1)
if mlp:
    net = nn.Sequential(nn.Dense(512, "relu", name="fc1"),
                        nn.Dense(256, "relu", name="fc2"),
                        nn.Dense(10, name="fc3"))
else:
    net = nn.Sequential(nn.Conv2D(20, 5, name="conv1"), nn.Activation("tanh"),
                        nn.MaxPool2D(2), nn.Conv2D(50, 5, name="conv2"),
                        nn.Activation("tanh"), nn.MaxPool2D(2), nn.Flatten(),
                        nn.Dense(500, "tanh", name="fc1"),
                        nn.Dense(10, name="fc2"))
net.initialize("xavier")
opt = nn.Optimizer(net, "sgd_mom_update", lr=0.1 if mlp else 0.05,
                   momentum=0.9)
fit = nn.Fit(net, nn.SoftmaxCrossEntropyLoss(), opt, epochs=epochs,
             batches_per_epoch=batches, lr_scheduler="multifactor", factor=0.1,
             steps=((goal_epochs - (2 if mlp else 1)) * 468,))
fit.add_listener(lambda event, f: event == nn.EPOCH_END and print(
    "epoch=%d train_loss=%.4f train_accuracy=%.4f test_accuracy=%.4f" % (
        f["epoch"], f["train_loss"], f["train_accuracy"], f["val_accuracy"]),
    flush=True))
train = mxc.IDXIter(*files("train"), 128, shuffle=True, seed=1, flat=mlp,
                    last_batch="discard")
test = mxc.IDXIter(*files("t10k"), 128, flat=mlp)
fit.run(train, test)
acc, goal = fit["val_accuracy"], 0.875 if mlp else 0.88
print("final_test_accuracy=%.4f goal=%.3f goal_met=%s" % (
    acc, goal, "yes" if acc >= goal and epochs >= goal_epochs and not batches else "no"))
