#!/usr/bin/env python3
"""Write hostile/hostile.log: a TORCH_TRACE log whose every string carries HTML/JS injection.

The viewer of a tlparse bundle shows strings taken from user code (file names, function names,
artifact names, graph-break reasons, guard code, generated code, failure messages, links). This
log puts script-injection payloads in all of them, so a browser test can open every page of the
viewer on it and check that nothing runs and every payload shows as plain text.

The entries are modelled on real torch 2.15 output in torch-2.15/ (simple, failures,
graph_breaks, recompiles): same envelope fields, glog prefixes and payload shapes, with
`has_payload` set to the md5 of each payload, so the log is valid TORCH_TRACE. It is
deterministic: the same arguments always give the same bytes.

Usage:
  python3 scripts/make_hostile.py                 # (re)write hostile/hostile.log
  python3 scripts/make_hostile.py OUT --rank N    # a copy for rank N (multi-rank tests): the
                                                  # envelopes carry "rank": N and rank N's
                                                  # output graph differs in one line
  python3 scripts/make_hostile.py OUT --js CODE   # payloads that run CODE instead
"""

import argparse
import hashlib
import json
import os

# Every payload runs JS if it ever runs: by default it sets window.__pwned, and tests assert it
# stays undefined. `--js CODE` puts other code there (no spaces or quotes: it goes in unquoted
# attributes), e.g. scripts/check-viewer's, which also changes the title and opens a dialog.
JS = "window.__pwned=1"


def set_payloads(js):
    global SCRIPT, IMG, SVG, JS_URL, TEXTAREA, ATTR, IFRAME, TEMPLATE
    SCRIPT = "<script>%s</script>" % js
    IMG = '<img src=x onerror="%s">' % js
    SVG = '"><svg onload=%s>' % js
    JS_URL = "javascript:%s" % js
    TEXTAREA = "</textarea><script>%s</script>" % js
    ATTR = "' onmouseover='%s' data-x='" % js
    IFRAME = '<iframe src="javascript:%s"></iframe>' % js
    TEMPLATE = '${%s}{{constructor.constructor("%s")()}}' % (js, js)


set_payloads(JS)

PID = 4242
EPOCH_US = 1795218292000000  # 2026-11-20, like the torch-2.15 fixtures


class Log:
    def __init__(self, rank):
        self.rank = rank
        self.lines = []
        self.t = 0  # ms since start

    def entry(self, where, meta, payload=None, compile_id=None):
        """One log entry: glog prefix, JSON envelope, tab-prefixed payload lines."""
        self.t += 7
        env = dict(meta)
        if compile_id is not None:
            frame, comp, attempt = compile_id
            env.update({"frame_id": frame, "frame_compile_id": comp, "attempt": attempt})
        if self.rank is not None:
            env["rank"] = self.rank
        if payload is not None:
            env["has_payload"] = hashlib.md5(payload.encode("utf-8")).hexdigest()
        secs = 52 + self.t // 1000
        stamp = "V1120 23:44:%02d.%06d %d %s] " % (secs, (self.t % 1000) * 1000, PID, where)
        self.lines.append(stamp + json.dumps(env, ensure_ascii=False))
        if payload is not None:
            self.lines.extend("\t" + line for line in payload.split("\n"))

    def chromium(self, name, ph, cid, compile_id):
        event = {"name": name, "ts": EPOCH_US + self.t * 1000 + 0.8, "args": {"compile_id": cid},
                 "ph": ph, "cat": "dynamo_timed", "tid": 0, "pid": 0}
        self.entry("torch/_dynamo/utils.py:2473", {"chromium_event": {}},
                   json.dumps(event, indent=0), compile_id)

    def text(self):
        return "\n".join(self.lines) + "\n"


def metrics(compile_id, co_name, **extra):
    """A compilation_metrics body with the fields the tables read (torch 2.15 names)."""
    m = {
        "compile_id": compile_id, "frame_key": "1", "co_name": co_name,
        "co_filename": "/home/user/%s/model.py" % SCRIPT, "co_firstlineno": 12,
        "cache_size": 0, "accumulated_cache_size": 0, "guard_count": 3, "shape_env_guard_count": 0,
        "graph_op_count": 2, "graph_node_count": 4, "graph_input_count": 1,
        "start_time": 1795218292.3, "entire_frame_compile_time_s": 0.25, "backend_compile_time_s": 0.125,
        "inductor_compile_time_s": 0.1, "code_gen_time_s": 0.05,
        "fail_type": None, "fail_reason": None, "fail_user_frame_filename": None, "fail_user_frame_lineno": None,
        "non_compliant_ops": [IMG], "compliant_custom_ops": [SVG], "restart_reasons": [],
        "dynamo_time_before_restart_s": 0.0,
        "stack_trace": ["Line: 40, Name: <module>, Filename: /home/user/%s/model.py" % SCRIPT],
        "exception_stack_trace": None, "graph_node_shapes": "{}", "has_guarded_code": True,
        "dynamo_cumulative_compile_time_us": 250000, "aot_autograd_cumulative_compile_time_us": 125000,
        "inductor_cumulative_compile_time_us": 100000, "inductor_code_gen_cumulative_compile_time_us": 50000,
        "is_forward": True, "recompile_reason": None, "num_graph_breaks": None,
        "log_format_version": 3, "pytorch_version": "2.15.0+cu132", "is_runtime": False,
    }
    m.update(extra)
    return m


def build(rank):
    log = Log(rank)
    model = "/home/user/%s/model.py" % SCRIPT
    helper = "/home/user/%s/helpers.py" % SVG
    log.entry("torch/_logging/structured.py:28", {"str": [model, 0]})
    log.entry("torch/_logging/structured.py:28", {"str": [helper, 1]})
    stack = [
        {"line": 40, "name": "<module>", "filename": 0, "loc": "model(%s)" % IMG},
        {"line": 21, "name": SCRIPT, "filename": 1, "loc": TEXTAREA},
        {"line": 12, "name": "forward_%s" % SVG, "filename": 0},
    ]
    c00 = (0, 0, 0)

    # [0/0]: compiles, with a graph break, guards, generated code, links, a hostile artifact name.
    log.chromium("dynamo", "B", "0/0", c00)
    log.entry("torch/_dynamo/convert_frame.py:309", {"dynamo_start": {"stack": stack}}, None, c00)
    log.entry("torch/_subclasses/meta_utils.py:298", {"describe_storage": {"id": 0, "describer_id": 0, "size": 64}}, None, c00)
    log.entry("torch/_subclasses/meta_utils.py:537", {"describe_tensor": {
        "id": 0, "ndim": 2, "dtype": "torch.float32", "device": "device(type='cpu')", "size": [4, 4],
        "dynamo_hint_overrides": {}, "is_leaf": True, "stride": [4, 1], "storage": 0,
        "view_func": "_CustomViewFunc(func=%s)" % IMG, "describer_id": 0}}, None, c00)
    log.entry("torch/_subclasses/meta_utils.py:2385", {"describe_source": {"describer_id": 0, "id": 0, "source": "L['%s']" % SCRIPT}}, None, c00)
    log.entry("torch/_dynamo/symbolic_convert.py:5551", {"artifact": {"name": "dynamo_graph_break_reason", "encoding": "string"}},
              "Graph break in user code at %s:21\nGraph Break Reason: %s\n  Explanation: %s\n\n"
              " For more details about this graph break, please visit: %s\n\nUser code traceback:\n  File \"%s\", line 21, in %s\n    %s"
              % (model, SCRIPT, IMG, JS_URL, model, SCRIPT, TEXTAREA), c00)
    graph_line = '        sin: "f32[4, 4][4, 1]cpu" = l_x_.sin();  l_x_ = None' if not rank else \
        '        cos: "f32[4, 4][4, 1]cpu" = l_x_.cos();  l_x_ = None  # %s' % IMG
    log.entry("torch/_dynamo/output_graph.py:2993", {"dynamo_output_graph": {"sizes": {"l_x_": [4, 4], SCRIPT: [4, 4]}}},
              "class GraphModule(torch.nn.Module):\n"
              '    def forward(self, L_x_: "f32[4, 4][4, 1]cpu"):\n'
              "        l_x_ = L_x_\n\n"
              "         # File: %s:12 in forward, code: return x.sin()  %s\n%s\n        return (%s,)"
              % (model, TEXTAREA, graph_line, "'%s'" % SVG), c00)
    log.entry("torch/_dynamo/guards.py:2304", {"dynamo_guards": {}}, "[\n" + ",\n".join(json.dumps(g) for g in [
        {"code": "L['x'].__name__ == '%s'" % SCRIPT, "stack": None, "user_stack": None},
        {"code": "check_tensor(L['%s'], %s)" % (IMG, SVG), "stack": None, "user_stack": None},
    ]) + "\n]", c00)
    log.entry("torch/_dynamo/guards.py:5383", {"dynamo_cpp_guards_str": {}},
              "\nTREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- LAMBDA_GUARD: L['x'].__name__ == '%s'\n"
              "| +- TENSOR_MATCH: check_tensor(L['%s'], %s)\n| +- %s" % (SCRIPT, IMG, SVG, TEXTAREA), c00)
    log.entry("torch/_logging/_internal.py:1390", {"artifact": {"name": IMG, "encoding": "string"}},
              "%s\n%s\n%s\n%s\n%s" % (SCRIPT, SVG, TEXTAREA, IFRAME, TEMPLATE), c00)
    log.entry("torch/_logging/_internal.py:1390", {"artifact": {"name": "inductor_post_grad_graph", "encoding": "string"}},
              "class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[4, 4]\"):  # %s\n        return (arg0_1,)" % SCRIPT, c00)
    code_path = "/tmp/torchinductor/%s/c%s.py" % (SVG, "x" * 8)
    log.entry("torch/_inductor/graph.py:3189", {"inductor_output_code": {"filename": code_path, "file_path": code_path}},
              "# AOT ID: ['0_inference']\n# %s\nimport torch\n\n"
              "def call(args):\n    \"\"\"%s\"\"\"\n    s = '%s'\n    t = \"%s\"\n    return (args[0].sin(),)\n"
              % (SCRIPT, TEXTAREA, IMG, IFRAME), c00)
    log.entry("torch/_functorch/aot_autograd.py:887", {"link": {"name": SVG, "url": JS_URL}}, None, c00)
    log.entry("torch/_functorch/aot_autograd.py:887", {"link": {"name": SCRIPT, "url": "https://example.com/%s?q=%s" % (SVG, ATTR)}}, None, c00)
    log.entry("torch/_logging/_internal.py:1390", {"artifact": {"name": "fx_graph_cache_miss", "encoding": "json"}},
              json.dumps({"key": SCRIPT, "components": [IMG, SVG], "cache_event_time": 1795218292400000000,
                          "cache_state": "miss", "time_taken_ns": 1000}), c00)
    log.chromium(IMG, "B", "0/0", c00)
    log.chromium(IMG, "E", "0/0", c00)
    log.entry("torch/_dynamo/utils.py:2132", {"compilation_metrics": metrics(
        "0/0", SCRIPT, num_graph_breaks=1,
        restart_reasons=["%s\n  Explanation: %s\n\n For more details about this graph break, please visit: %s" % (SCRIPT, IMG, JS_URL)])},
        None, c00)
    log.chromium("dynamo", "E", "0/0", c00)

    # [0/1]: a recompile of the same frame, with a hostile recompile reason.
    c01 = (0, 1, 0)
    log.entry("torch/_dynamo/guards.py:6378", {"artifact": {"name": "recompile_reasons", "encoding": "json"}},
              json.dumps(["0/0: L['x'].__name__ == '%s' %s" % (SCRIPT, IMG)]), c01)
    log.entry("torch/_dynamo/convert_frame.py:309", {"dynamo_start": {"stack": stack}}, None, c01)
    log.entry("torch/_dynamo/guards.py:5383", {"dynamo_cpp_guards_str": {}},
              "\nTREE_GUARD_MANAGER:\n+- RootGuardManager\n| +- LAMBDA_GUARD: %s" % IFRAME, c01)
    log.entry("torch/_dynamo/utils.py:2132", {"compilation_metrics": metrics(
        "0/1", SCRIPT, recompile_reason="0/0: L['x'].__name__ == '%s'" % SCRIPT, cache_size=1)}, None, c01)

    # [1/0]: a failed compile: hostile failure type, reason, user frame and traceback.
    c10 = (1, 0, 0)
    log.entry("torch/_dynamo/convert_frame.py:309", {"dynamo_start": {"stack": [
        {"line": 50, "name": "<module>", "filename": 0, "loc": "bad(%s)" % SVG},
        {"line": 30, "name": IMG, "filename": 1}]}}, None, c10)
    log.entry("torch/_dynamo/convert_frame.py:2201", {"artifact": {"name": "dynamo_error", "encoding": "string"}},
              "Traceback (most recent call last):\n  File \"%s\", line 30, in %s\n    raise RuntimeError('%s')\nRuntimeError: %s"
              % (helper, IMG, SCRIPT, TEXTAREA), c10)
    log.entry("torch/_dynamo/utils.py:2132", {"compilation_metrics": metrics(
        "1/0", IMG, co_filename=helper, fail_type=SCRIPT,
        fail_reason="backend='%s' raised:\nRuntimeError: %s %s" % (SVG, IMG, TEXTAREA),
        fail_user_frame_filename=helper, fail_user_frame_lineno=30, has_guarded_code=False,
        inductor_compile_time_s=None, code_gen_time_s=None,
        exception_stack_trace=["Traceback (most recent call last):\n  File \"%s\", line 30, in %s\nRuntimeError: %s\n" % (helper, IMG, SCRIPT)])},
        None, c10)

    # Outside any compile: a kind nobody knows and a line whose JSON is cut short (diagnostics).
    log.entry("torch/_logging/_internal.py:1390", {IMG: {"detail": SCRIPT}})
    log.t += 7
    log.lines.append('V1120 23:44:59.000000 %d torch/_logging/_internal.py:1390] {"artifact": {"name": "%s' % (PID, SCRIPT.replace('"', '\\"')))
    return log.text()


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", default=os.path.join(here, "hostile", "hostile.log"))
    ap.add_argument("--rank", type=int, default=None, help="write a copy for this rank (envelopes carry rank)")
    ap.add_argument("--js", default=JS, help="the code every payload runs if it runs (default: %(default)s)")
    args = ap.parse_args()
    if any(c in args.js for c in " \t\n'\""):
        ap.error("--js: no spaces or quotes (the code goes in unquoted attributes)")
    set_payloads(args.js)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(build(args.rank))
    print("wrote %s" % args.out)


if __name__ == "__main__":
    main()
