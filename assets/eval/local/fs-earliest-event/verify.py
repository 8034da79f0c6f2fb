def verify(workspace, answer):
    """Half for the database migration named, half for its date (2024-11-02)."""
    said = answer.lower()
    date = "2024-11-02" in said or ("november" in said and "2" in said and "2024" in said)
    return (("migrat" in said) + date) / 2
