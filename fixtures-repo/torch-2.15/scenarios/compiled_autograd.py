# Scenario "compiled_autograd": a compiled train step whose backward runs under compiled
# autograd (torch._dynamo.config.compiled_autograd = True). Dynamo compiles the forward as
# frame [0/0]; at loss.backward() compiled autograd captures the whole backward graph (entries
# with only compiled_autograd_id and attempt, shown as [!0/-/-]), then Dynamo compiles that
# captured graph as a frame of its own ([!0/N/0]). The second step reuses both.
import torch
import torch.nn as nn

torch._dynamo.config.compiled_autograd = True


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile
def train_step(x):
    loss = model(x).pow(2).mean()
    loss.backward()  # run by compiled autograd
    return loss


for step in range(2):
    loss = train_step(torch.randn(8, 16))
    opt.step()
    opt.zero_grad()
print("ok", float(loss))
