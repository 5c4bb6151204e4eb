"""Hostile and odd input to the dataset reader (run by test/training/pipeline.test.ts):
    /usr/bin/python3 -m unittest training/test_data.py"""
import os
import sys
import tempfile
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from PIL import Image  # noqa: E402

from data import open_dataset, read_class_names, read_yolo  # noqa: E402


def dataset(root: str, labels: dict[str, str], classes: str | None = "green\nturning\nred\n") -> str:
    os.makedirs(os.path.join(root, "images"), exist_ok=True)
    os.makedirs(os.path.join(root, "labels"), exist_ok=True)
    if classes is not None:
        open(os.path.join(root, "classes.txt"), "w").write(classes)
    for name, text in labels.items():
        Image.new("RGB", (100, 50), (10, 120, 20)).save(os.path.join(root, "images", f"{name}.jpg"))
        if text is not None:
            open(os.path.join(root, "labels", f"{name}.txt"), "w").write(text)
    return root


class ReadYolo(unittest.TestCase):
    def test_boxes_in_pixels_clipped_and_named(self):
        with tempfile.TemporaryDirectory() as d:
            s = read_yolo(dataset(d, {"a": "2 0.5 0.5 0.2 0.4\n0 0.95 0.5 0.2 0.2\n"}))
            self.assertEqual(s[0].classes, ["red", "green"])
            self.assertEqual(s[0].boxes[0].tolist(), [40.0, 15.0, 60.0, 35.0])
            self.assertAlmostEqual(float(s[0].boxes[1][2]), 100.0)  # clipped to the image

    def test_no_label_file_and_empty_file_mean_no_fruit(self):
        with tempfile.TemporaryDirectory() as d:
            s = read_yolo(dataset(d, {"a": None, "b": ""}))
            self.assertEqual([len(x.boxes) for x in s], [0, 0])

    def test_bad_lines_are_refused_with_file_and_line(self):
        for text, message in [("2 0.5 0.5 0.2\n", "expected 'class cx cy w h'"), ("7 0.5 0.5 0.2 0.2\n", "class 7 is not one"),
                              ("x 0.5 0.5 0.2 0.2\n", "invalid literal"), ("-1 0.5 0.5 0.2 0.2\n", "class -1")]:
            with tempfile.TemporaryDirectory() as d:
                dataset(d, {"a": text})
                with self.assertRaises(ValueError) as e:
                    read_yolo(d)
                self.assertIn(message, str(e.exception))

    def test_degenerate_boxes_are_dropped(self):
        with tempfile.TemporaryDirectory() as d:
            s = read_yolo(dataset(d, {"a": "0 0.5 0.5 0 0.2\n0 2.0 2.0 0.1 0.1\n"}))
            self.assertEqual(len(s[0].boxes), 0)

    def test_class_names_from_yaml_or_default(self):
        with tempfile.TemporaryDirectory() as d:
            dataset(d, {"a": "0 0.5 0.5 0.2 0.2\n"}, classes=None)
            self.assertIsNone(read_class_names(d))
            self.assertEqual(read_yolo(d)[0].classes, ["fruit"])
            open(os.path.join(d, "data.yaml"), "w").write("names:\n  0: green\n  1: red\n")
            self.assertEqual(read_class_names(d), ["green", "red"])

    def test_no_images_folder(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaises(FileNotFoundError):
                read_yolo(d)


class Zip(unittest.TestCase):
    def test_export_zip_is_read(self):
        with tempfile.TemporaryDirectory() as d:
            src = dataset(os.path.join(d, "src"), {"a": "1 0.5 0.5 0.2 0.2\n"})
            z = os.path.join(d, "export.zip")
            with zipfile.ZipFile(z, "w") as f:
                for folder, _, files in os.walk(src):
                    for name in files:
                        f.write(os.path.join(folder, name), os.path.relpath(os.path.join(folder, name), src))
            self.assertEqual(read_yolo(z)[0].classes, ["turning"])

    def test_entries_escaping_the_folder_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            for evil in ["../evil.txt", "/abs/evil.txt", "images/../../evil.txt"]:
                z = os.path.join(d, "evil.zip")
                with zipfile.ZipFile(z, "w") as f:
                    f.writestr(evil, "x")
                try:
                    open_dataset(z)
                except ValueError as e:
                    self.assertIn("outside the dataset folder", str(e))
                self.assertFalse(os.path.exists(os.path.join(d, "evil.txt")))
                self.assertFalse(os.path.exists("/abs/evil.txt"))


if __name__ == "__main__":
    unittest.main()
