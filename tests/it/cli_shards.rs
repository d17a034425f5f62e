//! The sharding commands (`docs/sharding.md` §6), in process: `--type sharding` for encode,
//! decode and validate, `shards`, and the shardings `hlo` lists.

use serde_json::Value;

use crate::cli_hlo::field;
use crate::common::run_cli as run;

#[test]
fn encode_decode_validate() {
    let (status, out, _) = run(&["encode", "--type", "sharding", "--hex", "--", "{devices=[2,2]<=[4]}"], b"");
    assert_eq!((status, out.as_str()), (0, "08031a0202024a0104520100\n"));
    let hex = "08031a0302010430014a0108520100";
    let (status, out, _) = run(&["decode", "--type", "sharding", "--hex", hex], b"");
    assert_eq!(status, 0);
    assert_eq!(out.lines().next(), Some("{devices=[2,1,4]<=[8] last_tile_dim_replicate}"));
    let (status, out, _) = run(&["decode", "--type", "sharding", "--hex", hex, "--json"], b"");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((status, json["valid"].as_bool(), json["reencoded_hex"].as_str()), (0, Some(true), Some(hex)));
    let (status, out, _) = run(&["validate", "--type", "sharding", "--hex", hex], b"");
    assert_eq!((status, out.as_str()), (0, "ok\n"));
}

/// Named shardings (`docs/sharding.md` §9.7): XLA's bytes and text both ways, and `--json`'s
/// `"v2"`, the tile-assignment form (vectors.md N3).
#[test]
fn named_shardings_encode_decode_and_convert() {
    let text = r#"{mesh["x"=2,"y"=4], [{"x"}, {}]}"#;
    let hex = "721a120e0a050a017810020a050a017910041a040a0010011a021001";
    let (status, out, _) = run(&["encode", "--type", "sharding", "--hex", "--", text], b"");
    assert_eq!((status, out.as_str()), (0, format!("{hex}\n").as_str()));
    let (status, out, _) = run(&["decode", "--type", "sharding", "--hex", hex], b"");
    assert_eq!((status, out.lines().next()), (0, Some("{mesh['x'=2,'y'=4], [{'x'}, {}]}")));
    let (status, out, _) = run(&["decode", "--type", "sharding", "--hex", hex, "--json"], b"");
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(status, 0);
    assert_eq!(json["shape"], "{mesh['x'=2,'y'=4], [{'x'}, {}]}");
    assert_eq!(json["v2"], "{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
    assert_eq!(json["reencoded_hex"], hex);
    // A V2 sharding's "v2" is itself.
    let (_, out, _) = run(&["decode", "--type", "sharding", "--hex", "0801220103", "--json"], b"");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["v2"], "{maximal device=3}");
    // What XLA aborts on is a typed error with XLA's phrase.
    let (status, _, err) =
        run(&["encode", "--type", "sharding", "--hex", "--", r#"{mesh["x"=2], [{"x"}, {"x"}]}"#], b"");
    assert_eq!(status, 1);
    assert!(err.contains("axes cannot coexist or axes overlap"), "{err}");
    let (status, _, err) = run(&["validate", "--type", "sharding", "--hex", "7206120412020506"], b"");
    assert_eq!(status, 1);
    assert!(err.contains("named_sharding.mesh.device_ids") && err.contains("exactly 1 device id"), "{err}");
}

#[test]
fn refused_input_exits_1_with_the_position() {
    let (status, _, err) = run(&["encode", "--type", "sharding", "--hex", "--", "{devices=[2,2]0,1,1,3}"], b"");
    assert_eq!(status, 1);
    assert!(err.contains("at byte 1") && err.contains("device 1 is not unique"), "{err}");
    let (status, _, err) = run(&["encode", "--type", "sharding", "--hex", "--", "{devices=[2,2]<=[4] bogus}"], b"");
    assert_eq!(status, 1);
    assert!(err.contains("at byte 20") && err.contains("found `bogus`"), "{err}");
    // A maximal sharding without its device: the field path.
    let (status, _, err) = run(&["validate", "--type", "sharding", "--hex", "0801"], b"");
    assert_eq!(status, 1);
    assert!(err.contains("tile_assignment_devices") && err.contains("single device assignment"), "{err}");
}

#[test]
fn shards_json_is_one_object_per_device_by_id() {
    let args = ["shards", "bf16[5,8]{1,0}", "{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}", "--json"];
    let (status, out, err) = run(&args, b"");
    assert_eq!(status, 0, "{err}");
    let rows: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 4);
    // Devices 0 and 2 hold rows 0..3, devices 1 and 3 rows 3..5 (the short tail).
    let expected = [
        (0, [0, 0], [3, 8], [0, 2]),
        (1, [3, 0], [5, 8], [1, 3]),
        (2, [0, 0], [3, 8], [0, 2]),
        (3, [3, 0], [5, 8], [1, 3]),
    ];
    for (row, (device, start, limit, group)) in rows.iter().zip(expected) {
        assert_eq!(row["device"], device);
        assert_eq!(row["start"], serde_json::json!(start));
        assert_eq!(row["limit"], serde_json::json!(limit));
        assert_eq!(row["replica_group"], serde_json::json!(group));
        let elements = (limit[0] - start[0]) * 8;
        assert_eq!(row["elements"], elements);
        assert_eq!(row["bytes"], elements * 2);
    }
}

#[test]
fn shards_picture_names_the_devices_of_each_block() {
    let (status, out, _) = run(&["shards", "f32[8,6]", "{devices=[2,2]0,2,1,3}"], b"");
    assert_eq!(status, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "f32[8,6]{1,0} {devices=[2,2]0,2,1,3}; rows: dimension 0, 2 tiles of 4; columns: dimension 1, 2 tiles of 3"
    );
    let labels: Vec<Vec<&str>> = lines
        .iter()
        .filter(|l| l.starts_with('│') && l.chars().any(|c| c.is_ascii_digit()))
        .map(|l| l.split('│').map(str::trim).filter(|c| !c.is_empty()).collect())
        .collect();
    assert_eq!(labels, [["0", "2"], ["1", "3"]]);
    // Replicated needs the device count.
    let (status, _, err) = run(&["shards", "f32[8]", "{replicated}"], b"");
    assert_eq!(status, 1, "{err}");
    let (status, out, _) = run(&["shards", "f32[8]", "{replicated}", "--devices", "3"], b"");
    assert_eq!(status, 0);
    assert!(out.contains("0,1,2"), "{out}");
}

/// `hlo` lists an instruction's sharding as XLA's text (docs/hlo.md, "Shardings").
#[test]
fn hlo_lists_shardings() {
    let shape = [0x10, 0x0b, 0x1a, 0x02, 0x08, 0x04]; // f32[8,4]
    let sharding = [0x08, 0x03, 0x1a, 0x02, 0x02, 0x02, 0x22, 0x04, 0x00, 0x02, 0x01, 0x03];
    let instruction = [field(1, b"p0"), field(2, b"parameter"), field(3, &shape), field(40, &sharding)].concat();
    let computation = [field(1, b"main"), field(2, &instruction)].concat();
    let module = [field(1, b"m"), field(3, &computation)].concat();
    let tmp = tempfile::TempDir::new().unwrap();
    let path = tmp.path().join("shardings.pb");
    std::fs::write(&path, &module).unwrap();
    let file = path.to_str().unwrap();
    let (status, out, err) = run(&["hlo", "--json", file], b"");
    assert_eq!(status, 0, "{err}");
    let json: Value = serde_json::from_str(&out).unwrap();
    let entry = &json["shapes"][0];
    assert_eq!(entry["site"], "main / p0");
    assert_eq!(entry["sharding"], "{devices=[2,2]0,2,1,3}");
    let (_, out, _) = run(&["hlo", file], b"");
    assert!(out.contains("main / p0 / f32[8,4]  sharding={devices=[2,2]0,2,1,3}"), "{out}");
}
