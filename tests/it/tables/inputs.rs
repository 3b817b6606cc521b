//! Input tensors (`describe_tensor` / `describe_storage` / `describe_source` joined).

use super::{built, rows, snapshot};

#[test]
fn graph_breaks_fixture_describes_parameters_and_inputs() {
    // Checked by hand against the raw log: 33 describe_tensor, 33 describe_storage and 33
    // describe_source entries, each tensor with one source in its compile. Lines 61-63 ([0/0],
    // describer 0): storage 0 of 1024 bytes, tensor 0 a 16x16 float32 CPU parameter with
    // requires_grad and stride [16, 1], source L['self']._modules['b1']._modules['lin']._parameters['weight'].
    // 8 tensors are parameters; 24 are 4x16 inputs; one is 0-dimensional (size []).
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("inputs");
    let inputs = rows(&t, "inputs");
    assert_eq!(inputs.len(), 33);
    assert!(inputs.iter().all(|r| r["sources"].as_array().unwrap().len() == 1 && r["tensor"].is_object()));
    let w = &inputs[0];
    assert_eq!((w["compile_id"].as_str(), w["line"].as_u64()), (Some("[0/0]"), Some(62)));
    assert_eq!(w["sources"][0], "L['self']._modules['b1']._modules['lin']._parameters['weight']");
    let tensor = &w["tensor"];
    assert_eq!((tensor["dtype"].as_str(), tensor["device"].as_str()), (Some("torch.float32"), Some("cpu")));
    assert_eq!(tensor["size"], serde_json::json!([16, 16]));
    assert_eq!(tensor["stride"], serde_json::json!([16, 1]));
    assert_eq!((tensor["requires_grad"].as_bool(), tensor["is_parameter"].as_bool()), (Some(true), Some(true)));
    assert_eq!((tensor["is_leaf"].as_bool(), tensor["storage_offset"].as_i64()), (Some(true), Some(0)));
    assert_eq!((w["storage"]["id"].as_u64(), w["storage"]["size"].as_u64()), (Some(0), Some(1024)));
    assert_eq!(w["storage"]["line"], 61);
    assert_eq!(inputs.iter().filter(|r| r["tensor"]["is_parameter"] == true).count(), 8);
    assert_eq!(inputs.iter().filter(|r| r["tensor"]["size"] == serde_json::json!([4, 16])).count(), 24);
    snapshot("inputs__graph_breaks", &t);
}

#[test]
fn dynamic_dimensions_are_named_by_their_symbols() {
    // dynamic_shapes: line 60 describes L['x'] (10x3, dynamo_dynamic_indices [0]) in [0/0];
    // line 74 creates s77 for L['x'].size()[0] in the same compile, line 86 s17 for
    // L['y'].size()[0]. [4/0] creates s77 and s27 for both dimensions of L['x'] (3x4).
    let b = built("torch-2.15/dynamic_shapes");
    let t = b.table("inputs");
    let inputs = rows(&t, "inputs");
    let row = |cid: &str, source: &str| {
        inputs.iter().find(|r| r["compile_id"] == cid && r["sources"][0] == source).unwrap_or_else(|| panic!("{cid}"))
    };
    let x = row("[0/0]", "L['x']");
    assert_eq!(x["tensor"]["line"], 60);
    assert_eq!(x["tensor"]["dynamic_dims"], serde_json::json!([0]));
    assert_eq!(x["size_symbols"], serde_json::json!(["s77", null]));
    assert_eq!(row("[0/0]", "L['y']")["size_symbols"], serde_json::json!(["s17"]));
    assert_eq!(row("[4/0]", "L['x']")["size_symbols"], serde_json::json!(["s77", "s27"]));
    // [1/0] compiles L['x'] statically: no symbol.
    assert_eq!(row("[1/0]", "L['x']")["size_symbols"], serde_json::json!([]));
    snapshot("inputs__dynamic_shapes", &t);
}

#[test]
fn each_compile_gets_its_own_rows_and_cuda_devices_are_shortened() {
    // collectives_parity rank 0: [0/0] describes 3 tensors (describer 0), then [0/1], [0/2]
    // and [0/3] each describe the same 6 tensors of describer 7 (the file repeats a section):
    // 21 describe_tensor entries, all on device(type='cuda', index=0). Tensor 19 of describer 7
    // is L['args'][1], 2048x1024 float16, storage 5 of 4194304 bytes.
    let b = built("tlparse-tests/collectives_parity");
    let t = b.table_of("rank0", "inputs");
    let inputs = rows(&t, "inputs");
    assert_eq!(inputs.len(), 21);
    assert!(inputs.iter().all(|r| r["tensor"]["device"] == "cuda:0"));
    let per_compile = |cid: &str| inputs.iter().filter(|r| r["compile_id"] == cid).count();
    assert_eq!([per_compile("[0/0]"), per_compile("[0/1]"), per_compile("[0/2]"), per_compile("[0/3]")], [3, 6, 6, 6]);
    let args1 = inputs.iter().find(|r| r["compile_id"] == "[0/3]" && r["id"] == 19).unwrap();
    assert_eq!((args1["describer_id"].as_u64(), args1["sources"][0].as_str()), (Some(7), Some("L['args'][1]")));
    assert_eq!(args1["tensor"]["size"], serde_json::json!([2048, 1024]));
    assert_eq!((args1["storage"]["id"].as_u64(), args1["storage"]["size"].as_u64()), (Some(5), Some(4194304)));
}

#[test]
fn device_reprs_are_shortened() {
    use tlparse_build::analysis::inputs::short_device;
    assert_eq!(short_device("device(type='cpu')"), "cpu");
    assert_eq!(short_device("device(type='cuda', index=0)"), "cuda:0");
    assert_eq!(short_device("something else"), "something else");
}

#[test]
fn view_func_is_kept_as_logged_for_every_tensor() {
    // Checked by hand against the raw log (graph_breaks): torch 2.15 logs `view_func` on every
    // describe_tensor (33 of 33, none with is_view); line 62 (tensor 0 of [0/0], a parameter) has
    // "_CustomViewFunc(func=<built-in method _view_func_unsafe of Parameter object at
    // 0x7fa6bfca9310>)", line 68 (tensor 2, an input) "... of Tensor object at 0x7fa6aeb589b0>)".
    let b = built("torch-2.15/graph_breaks");
    let t = b.table("inputs");
    let inputs = rows(&t, "inputs");
    let view_func = |line: u64| {
        inputs.iter().find(|r| r["line"] == line).unwrap()["tensor"]["view_func"].as_str().unwrap().to_string()
    };
    assert_eq!(
        view_func(62),
        "_CustomViewFunc(func=<built-in method _view_func_unsafe of Parameter object at 0x7fa6bfca9310>)"
    );
    assert_eq!(
        view_func(68),
        "_CustomViewFunc(func=<built-in method _view_func_unsafe of Tensor object at 0x7fa6aeb589b0>)"
    );
    assert!(inputs.iter().all(|r| r["tensor"]["view_func"].is_string() && r["tensor"]["is_view"] == false));
}
