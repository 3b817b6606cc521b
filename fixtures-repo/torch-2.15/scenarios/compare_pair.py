# Scenario "compare_pair": two runs of one small inference loop, for comparing runs.
# VARIANT=a is the plain baseline: Net.forward compiles as one frame, summarize as another.
# VARIANT=b changes three things:
#  - the model is compiled with dynamic=True, the batch dimension is marked dynamic and the
#    batch length varies (8, 8, 12), so the model compiles once for all of them;
#  - Net.forward takes a data-dependent Python float (a `.item()` of the weights, made outside)
#    as the fill value of torch.full, which the tensorify pass cannot turn into a tensor op, and calls
#    `.item()` on its own activations (a graph break). Dynamo restarts the frame twice: attempt
#    0 stops at the graph break (restart 1), attempt 1 compiles the graph up to it and the
#    float fails to tensorify (TensorifyScalarRestartAnalysis, restart 2), attempt 2 compiles
#    with the float specialized, so the frame's last attempt is [0/0_2];
#  - summarize prints twice on ONE line, so Dynamo makes two resume functions with the same
#    name, torch_dynamo_resume_in_summarize_at_<line>, compiled as two different frames.
import os
import torch
import torch.nn as nn

VARIANT = os.environ.get("VARIANT", "a")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x, limit=None):
        h = self.fc1(x)
        if VARIANT == "b":
            h = torch.relu(h) + torch.full((1,), limit)  # aten.full of a SymFloat: not tensorified
            peak = h.amax().item()  # graph break: Tensor.item
            h = h / (peak + 1.0)
        else:
            h = torch.relu(h)
        return self.fc2(h)


def summarize(y):
    s = y.square().mean()
    if VARIANT == "b":
        print("mean", s); print("max", y.amax())  # noqa: E702 (two breaks, one line)
    return s + y.abs().mean()


def run():
    torch.manual_seed(0)
    model = Net()
    cmodel = torch.compile(model, dynamic=True if VARIANT == "b" else None)
    csummarize = torch.compile(summarize)
    with torch.no_grad():
        # data-dependent, but the same at every step (no_grad: the weights do not change)
        limit = model.fc1.weight.abs().mean().item()
        for step in range(3):
            n = 12 if (VARIANT == "b" and step == 2) else 8
            x = torch.randn(n, 16)
            if VARIANT == "b":
                torch._dynamo.mark_dynamic(x, 0)
                y = cmodel(x, limit)
            else:
                y = cmodel(x)
            csummarize(y)


if __name__ == "__main__":
    run()
