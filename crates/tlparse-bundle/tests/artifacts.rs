//! Reading a compile's artifact by compile id and name, through the compile directory, and blobs
//! read by streaming their pack, on the committed test bundle (built from
//! `fixtures-repo/tlparse-tests/simple.log`). Expected values are what
//! `tlparse-build cat tests/bundles/simple '[0/0]' NAME` prints.

use std::path::PathBuf;

use tlparse_bundle::Bundle;

fn bundle() -> Bundle {
    Bundle::open(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bundles/simple")).unwrap()
}

#[test]
fn an_artifact_is_found_by_compile_id_and_name() {
    let b = bundle();
    let code = b.artifact("log0", "[0/0]", "inductor_output_code").unwrap().expect("[0/0] logged output code");
    assert_eq!(code.len(), 10450);
    let text = String::from_utf8(code.clone()).unwrap();
    assert!(text.starts_with("# AOT ID: ['0_inference']\nfrom ctypes import c_void_p"), "{}", &text[..80]);
    assert!(text.ends_with("    compiled_module_main('None', benchmark_compiled_module)\n"));
    assert_eq!(text.lines().position(|l| l == "def call(args):"), Some(147));

    // The same without brackets, and by tlparse's name for the file.
    assert_eq!(b.artifact("log0", "0/0", "inductor_output_code").unwrap().as_ref(), Some(&code));
    let tlparse_name = "inductor_output_code_cyjwx6x6efpuwt4dvr4ev42v4ghac5zo2uggvscht2otwnesito6";
    assert_eq!(b.artifact("log0", "[0/0]", tlparse_name).unwrap().as_ref(), Some(&code));

    let r = b.artifact_ref("log0", "0/0", "inductor_output_code").unwrap().unwrap();
    assert_eq!(
        (r.blob.as_deref(), r.size, r.kind.as_str()),
        (Some("976f6b45e962163eebb027dcbe009917"), 10450, "inductor_output_code")
    );

    let graph = b.artifact("log0", "[0/0]", "dynamo_output_graph").unwrap().unwrap();
    assert_eq!(graph.len(), 944);
    assert!(graph.starts_with(b"class GraphModule(torch.nn.Module):\n    def forward(self, L_x_: "));
    assert_eq!(b.artifact("log0", "0/0", "fx_graph_runnable").unwrap().unwrap().len(), 4996);
    let guards = b.artifact("log0", "0/0", "dynamo_cpp_guards_str").unwrap().unwrap();
    assert!(String::from_utf8(guards).unwrap().contains("TREE_GUARD_MANAGER:\n+- RootGuardManager\n"));
}

#[test]
fn what_was_not_logged_is_none_and_an_unknown_stream_an_error() {
    let b = bundle();
    assert_eq!(b.artifact("log0", "[0/1]", "inductor_output_code").unwrap(), None, "no such compile");
    assert_eq!(b.artifact("log0", "[0/0]", "no_such_artifact").unwrap(), None);
    assert!(b.artifact_ref("log0", "[0/0]", "artifact").unwrap().is_none(), "kinds of named entries are no names");
    let err = b.artifact("rank7", "[0/0]", "inductor_output_code").unwrap_err().to_string();
    assert!(err.contains("no stream \"rank7\""), "{err}");
}

#[test]
fn a_blob_read_by_streaming_its_pack_is_the_blob_cut_from_the_whole_pack() {
    let b = bundle();
    let shard = b.json_zst::<serde_json::Map<String, serde_json::Value>>("blobs/index/all.json.zst").unwrap();
    assert!(shard.len() > 50);
    for (id, loc) in &shard {
        // Streamed: no pack is cached unless `pack` decompressed it.
        let streamed = b.blob(id).unwrap();
        assert_eq!(streamed.len() as u64, loc["size"].as_u64().unwrap(), "{id}");
        let pack = b.pack(loc["pack"].as_u64().unwrap() as u32).unwrap();
        let offset = loc["offset"].as_u64().unwrap() as usize;
        assert_eq!(streamed, pack[offset..offset + streamed.len()], "{id}");
        assert_eq!(b.blob(id).unwrap(), streamed, "{id}, from the cached pack");
    }
}
