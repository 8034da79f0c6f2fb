from helpers import convert


def verify(workspace, answer):
    """Half for each city's time."""
    paris = convert("09:00", "Australia/Sydney", "Europe/Paris")
    york = convert("09:00", "Australia/Sydney", "America/New_York")
    return ((paris in answer) + (york in answer)) / 2
