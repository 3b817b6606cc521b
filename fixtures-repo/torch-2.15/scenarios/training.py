# Scenario "training": a compiled train step (forward, loss.backward(), opt.step()) with
# inductor provenance tracking on. The forward is compiled with its frame; its backward is
# compiled lazily, at the first loss.backward(), outside the frame compile, and logs a second
# set of provenance artifacts under the same compile id. loss.backward() is a graph break in
# the user's code; opt.step() then graph-breaks inside torch/optim/optimizer.py (the
# torch._dynamo.graph_break() in _use_grad), so that break's stack has torch frames innermost
# and the user's line further out.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch._inductor.config.trace.provenance_tracking_level = 1


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 2 * d)
        self.down = nn.Linear(2 * d, d)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(32), Block(32))
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.blocks(x))


torch.manual_seed(0)
model = Model()
opt = torch.optim.SGD(model.parameters(), lr=0.01)


@torch.compile
def train_step(x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()  # graph break in user code; the backward is compiled lazily here
    opt.step()  # graph break inside torch/optim/optimizer.py
    opt.zero_grad()
    return loss


for step in range(2):
    loss = train_step(torch.randn(8, 32), torch.randn(8, 4))
print("ok", loss.item())
