import json


def verify(workspace, answer):
    data = json.loads((workspace / "package.json").read_text())
    expected = {"name": "tiny-widget", "version": "2.0.0", "license": "MIT", "main": "index.js"}
    return float(data == expected)
