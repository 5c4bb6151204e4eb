"""set_conf.py on a small model (run by test/training/pipeline.test.ts):
    /usr/bin/python3 -m unittest training/test_set_conf.py"""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

from export import sha256  # noqa: E402
from set_conf import set_conf  # noqa: E402


def small_model(d: str, meta: dict | None) -> str:
    weight = helper.make_tensor("w", TensorProto.FLOAT, [2], [0.25, -1.5])
    node = helper.make_node("Mul", ["x", "w"], ["y"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [weight],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    if meta is not None:
        entry = model.metadata_props.add()
        entry.key, entry.value = "cropwalk", json.dumps(meta)
    path = os.path.join(d, "m.onnx")
    onnx.save(model, path)
    manifest = {"name": "m", "file": "m.onnx", "sha256": sha256(path), "conf": (meta or {}).get("conf")}
    with open(os.path.join(d, "m.json"), "w") as f:
        json.dump(manifest, f)
    return os.path.join(d, "m.json")


def read(path: str) -> dict:
    with open(path, encoding="utf8") as f:
        return json.load(f)


class SetConf(unittest.TestCase):
    def test_writes_both_places_and_keeps_the_graph(self):
        with tempfile.TemporaryDirectory() as d:
            manifest = small_model(d, {"classes": ["red"], "conf": {"photo": 0.32, "video": 0.45}})
            before = onnx.load(os.path.join(d, "m.onnx")).graph.SerializeToString()
            self.assertEqual(set_conf(manifest, video=0.31), {"photo": 0.32, "video": 0.31})
            model = onnx.load(os.path.join(d, "m.onnx"))
            self.assertEqual(model.graph.SerializeToString(), before)
            meta = json.loads(model.metadata_props[0].value)
            self.assertEqual(meta["conf"], {"photo": 0.32, "video": 0.31})
            self.assertEqual(meta["classes"], ["red"])
            written = read(manifest)
            self.assertEqual(written["conf"], {"photo": 0.32, "video": 0.31})
            self.assertEqual(written["sha256"], sha256(os.path.join(d, "m.onnx")))

    def test_refuses_a_file_its_manifest_does_not_name(self):
        with tempfile.TemporaryDirectory() as d:
            manifest = small_model(d, {"conf": {"photo": 0.3, "video": 0.3}})
            with open(os.path.join(d, "m.onnx"), "ab") as f:
                f.write(b"\0")
            with self.assertRaises(ValueError):
                set_conf(manifest, video=0.5)

    def test_refuses_a_model_without_its_metadata_or_a_threshold_out_of_range(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(ValueError):
                set_conf(small_model(d, None), video=0.5)
        with tempfile.TemporaryDirectory() as d:
            manifest = small_model(d, {"conf": {"photo": 0.3, "video": 0.3}})
            with self.assertRaises(ValueError):
                set_conf(manifest, video=1.5)
            self.assertEqual(read(manifest)["conf"]["video"], 0.3)


if __name__ == "__main__":
    unittest.main()
