import json

REST = {
    "invoice": "INV-2031",
    "customer": "Harbor Books",
    "items": [
        {"description": "Paper rolls", "quantity": 3, "unit_price": 12.5},
        {"description": "Ink cartridge", "quantity": 2, "unit_price": 4.0},
        {"description": "Label printer", "quantity": 1, "unit_price": 19.99},
    ],
}


def _number(value):
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def verify(workspace, answer):
    """A third each: the total is 65.49 (a number or a numeric string), the rest of the
    invoice unchanged, the old total 62.49 in the answer."""
    try:
        data = json.loads((workspace / "invoice.json").read_text())
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        data = {}
    total = _number(data.get("total"))
    checks = [
        total is not None and abs(total - 65.49) < 0.005,
        {k: v for k, v in data.items() if k != "total"} == REST,
        "62.49" in answer,
    ]
    return sum(checks) / len(checks)
