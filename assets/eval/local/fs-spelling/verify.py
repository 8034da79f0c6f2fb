def verify(workspace, answer):
    text = (workspace / "README.md").read_text()
    expected = "# Palette\n\nPick a color, any color.\nThe color picker remembers your last choice."
    return float(text.strip() == expected)
